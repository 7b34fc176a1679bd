package agilelimiter

import (
	"context"
	"log/slog"
	"math"
	"time"
)

// What Config.Logger logs, and how often. A limiter ticks 10 to 50 times a
// second and its limit moves on most ticks; a log is read by a person.
const (
	// logEvery is the shortest gap between two Info lines about the limit:
	// an oscillation of any speed costs at most one line a second.
	logEvery = time.Second
	// logChange is the smallest move of the limit, as a share of the value
	// last logged, worth a line: Vegas' steps of a few percent and a rate's
	// tick-to-tick jitter are the law working, not news.
	logChange = 0.1
	// blindAfter is how long a call may stay admitted with no answer
	// measured since before the controller is reported blind: ten of the
	// law's longest rounds (half a second), far past any round trip the
	// limiter was made for.
	blindAfter = 5 * time.Second
	// floorAfter is how long the limit may sit at its floor before it is
	// reported stuck there: an outage's probes live at the floor by design,
	// and past half a minute someone should look at why.
	floorAfter = 30 * time.Second
	// warnEvery is the shortest gap between two Warn lines about one state
	// that lasts: a state a day long costs 1,440 lines, not 86,400.
	warnEvery = time.Minute
)

// reporter turns each tick's Stats into log lines for Config.Logger. Only
// the tick loop touches it.
type reporter struct {
	log   *slog.Logger
	kind  string // "outbound" or "inbound"
	unit  string // the limit's unit
	floor float64

	logged   float64   // the limit as last logged (initially the initial limit)
	loggedAt time.Time // when; zero before the first line
	prev     float64   // the limit after the previous tick
	moves    int       // ticks that moved the limit since the last line

	admitted    uint64    // Stats.Admitted at the previous tick
	unanswered  time.Time // first tick with a call admitted since the last answer; zero if none
	blindWarned time.Time // last Warn about blindness; zero if the state is not reported
	floorSince  time.Time // when the limit came to its floor; zero if it is above
	floorWarned time.Time
}

func (r *reporter) init(s settings) {
	r.log = s.logger
	r.kind, r.unit, r.floor, r.logged = "outbound", "req/s", s.min, s.initial
	if !s.rate {
		r.kind, r.unit, r.floor, r.logged = "inbound", "requests", float64(slots(s.min, s.max)), float64(slots(s.initial, s.max))
	}
	r.prev = r.logged
}

// tick logs what st, the Stats of the tick that ran at now, says is news.
func (r *reporter) tick(st *Stats, now time.Time) {
	ctx := context.Background()
	if st.Limit != r.prev {
		r.moves++
		r.prev = st.Limit
	}
	if now.Sub(r.loggedAt) >= logEvery && math.Abs(st.Limit-r.logged) >= logChange*r.logged && r.log.Enabled(ctx, slog.LevelInfo) {
		r.log.LogAttrs(ctx, slog.LevelInfo, "agilelimiter: limit changed",
			slog.String("limiter", r.kind),
			slog.Float64("from", sig3(r.logged)), slog.Float64("to", sig3(st.Limit)), slog.String("unit", r.unit),
			slog.String("decision", st.Decision), slog.Int("moves", r.moves),
			slog.Duration("p50", st.P50), slog.Duration("p99", st.P99), slog.Duration("floor", st.Baseline),
			slog.Float64("answers_per_s", sig3(st.Delivered)), r.load(st))
		r.logged, r.loggedAt, r.moves = st.Limit, now, 0
	}

	// Blind: a call admitted blindAfter ago, and no answer measured since.
	if st.Samples > 0 {
		if !r.blindWarned.IsZero() {
			r.log.LogAttrs(ctx, slog.LevelInfo, "agilelimiter: answers measured again",
				slog.String("limiter", r.kind), slog.Duration("blind_for", now.Sub(r.unanswered)))
		}
		r.unanswered, r.blindWarned = time.Time{}, time.Time{}
	} else if st.Admitted > r.admitted && r.unanswered.IsZero() {
		r.unanswered = now
	}
	r.admitted = st.Admitted
	if !r.unanswered.IsZero() && now.Sub(r.unanswered) >= blindAfter && due(r.blindWarned, now) {
		r.log.LogAttrs(ctx, slog.LevelWarn, "agilelimiter: controller blind: calls admitted, no answer measured; the limit is frozen",
			slog.String("limiter", r.kind), slog.Duration("for", now.Sub(r.unanswered)),
			slog.Float64("limit", sig3(st.Limit)), slog.Float64("answers_per_s", sig3(st.Delivered)), r.load(st))
		r.blindWarned = now
	}

	// Stuck at the floor.
	if st.Limit <= r.floor*(1+1e-9) {
		if r.floorSince.IsZero() {
			r.floorSince = now
		}
		if now.Sub(r.floorSince) >= floorAfter && due(r.floorWarned, now) {
			r.log.LogAttrs(ctx, slog.LevelWarn, "agilelimiter: limit at its floor",
				slog.String("limiter", r.kind), slog.Duration("for", now.Sub(r.floorSince)),
				slog.Float64("limit", sig3(st.Limit)), slog.String("unit", r.unit), slog.String("decision", st.Decision),
				slog.Duration("p99", st.P99), slog.Int("unreachable", st.Unreachable), r.load(st))
			r.floorWarned = now
		}
		return
	}
	if !r.floorWarned.IsZero() {
		r.log.LogAttrs(ctx, slog.LevelInfo, "agilelimiter: limit left its floor",
			slog.String("limiter", r.kind), slog.Duration("after", now.Sub(r.floorSince)),
			slog.Float64("limit", sig3(st.Limit)), slog.String("unit", r.unit))
	}
	r.floorSince, r.floorWarned = time.Time{}, time.Time{}
}

// load is the attribute that says how much work is pending: callers waiting
// for a slot outbound, requests holding one inbound.
func (r *reporter) load(st *Stats) slog.Attr {
	if r.kind == "outbound" {
		return slog.Int("waiting", st.Waiting)
	}
	return slog.Int("in_flight", st.InFlight)
}

// due reports whether a Warn last written at last may be written again now.
func due(last, now time.Time) bool { return last.IsZero() || now.Sub(last) >= warnEvery }

// sig3 keeps three decimals: a log line is read, not parsed
// for the fifteenth digit.
func sig3(v float64) float64 { return math.Round(v*1000) / 1000 }
