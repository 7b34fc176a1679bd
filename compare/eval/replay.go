package eval

import (
	"sort"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// LimitAt is one step of a limit's path: from At (since the run's start) on,
// the limit is Limit, set by a controller tick that ended in Decision.
type LimitAt struct {
	At       time.Duration
	Limit    int
	Decision string
}

// RecordPath runs the project's ConcurrencyLimiter (the "agile" arm) through
// the inbound scenario sc and returns the run's Result with the path its
// limit took: the initial limit at 0, then every tick's. It must be called
// inside a synctest bubble.
func RecordPath(sc *Scenario) (Result, []LimitAt) {
	var path []LimitAt
	r := RunInbound(sc, InboundArm{Name: "agile", New: func(sc *Scenario) Admitter {
		begin := time.Now()
		l := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: sc.MaxLimit, SLOTarget: sc.SLO,
			OnTick: func(st agilelimiter.Stats) {
				path = append(path, LimitAt{time.Since(begin), int(st.Limit), st.Decision})
			}})
		path = append(path, LimitAt{0, l.Limit(), "initial"})
		l.Start()
		return agileAdmitter{l}
	}})
	return r, path
}

// Scheduled returns an inbound arm that admits at most the limit path gives
// at each instant of the run, as a semaphore does, whatever the requests do:
// a limiter's path replayed without its controller. A run of the path the
// agile arm took gets what the agile arm got, except where the limiter kept
// a refused request's slot until its next tick (ConcurrencyLimiter.
// Unavailable); a run of a variant of the path says what that part of the
// path cost.
func Scheduled(name string, path []LimitAt) InboundArm {
	return InboundArm{Name: name, New: func(*Scenario) Admitter {
		return &schedule{begin: time.Now(), path: path}
	}}
}

type schedule struct {
	begin time.Time
	path  []LimitAt
	held  atomic.Int64
}

func (s *schedule) limit() int64 {
	t := time.Since(s.begin)
	i := sort.Search(len(s.path), func(i int) bool { return s.path[i].At > t })
	if i == 0 {
		return int64(s.path[0].Limit)
	}
	return int64(s.path[i-1].Limit)
}

func (s *schedule) TryTake() (Permit, bool) {
	if s.held.Add(1) > s.limit() {
		s.held.Add(-1)
		return nil, false
	}
	return s, true
}
func (s *schedule) Done(agilelimiter.Outcome, time.Duration) { s.held.Add(-1) }
func (s *schedule) Stop()                                    {}

// WithoutProbes returns path with every floor probe taken out: the limit
// stays at the one before the probe until a tick decides otherwise than
// "floor-probe" or "settle" (the ticks a probe holds its window through).
func WithoutProbes(path []LimitAt) []LimitAt {
	out := make([]LimitAt, len(path))
	last := path[0].Limit
	for i, p := range path {
		out[i] = p
		if p.Decision == "floor-probe" || p.Decision == "settle" {
			out[i].Limit = last
		} else {
			last = p.Limit
		}
	}
	return out
}

// HeldAtMean returns the path's limit averaged over time until end (the last
// step holds from its instant to end), rounded to whole slots, held from the
// start.
func HeldAtMean(path []LimitAt, end time.Duration) []LimitAt {
	return []LimitAt{{0, meanLimit(path, 0, end), "steady"}}
}

// HeldAfter returns the path as it was until from, then its limit averaged
// over [from, end) and held to the end: the start the limiter made, without
// the motion after it. Against HeldAtMean (held from the first instant) it
// says what the start left behind in the resource: a processor past its knee
// that the first burst thrashed can answer less for the rest of the run than
// the same limit held from the first instant (development in-159: 24 from the
// first instant, 647 req/s; half MaxLimit for 0.3 s and then 24, 552).
func HeldAfter(path []LimitAt, from, end time.Duration) []LimitAt {
	var out []LimitAt
	for _, p := range path {
		if p.At >= from {
			break
		}
		out = append(out, p)
	}
	return append(out, LimitAt{from, meanLimit(path, from, end), "steady"})
}

// meanLimit is the path's limit averaged over [from, end) (the last step
// holds from its instant to end), rounded to whole slots, at least one; over
// an empty span, the path's last limit.
func meanLimit(path []LimitAt, from, end time.Duration) int {
	if end <= from {
		return max(path[len(path)-1].Limit, 1)
	}
	var area float64
	for i, p := range path {
		next := end
		if i+1 < len(path) {
			next = path[i+1].At
		}
		if lo, hi := max(p.At, from), min(next, end); hi > lo {
			area += float64(p.Limit) * (hi - lo).Seconds()
		}
	}
	return max(int(area/(end-from).Seconds()+0.5), 1)
}
