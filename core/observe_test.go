package agilelimiter_test

import (
	"context"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// OnTick sees every tick once, in order, with the Stats a caller would read
// right after it; it may call back into the limiter; Decisions counts every
// tick by its reason.
func TestOnTick(t *testing.T) {
	check := func(t *testing.T, seen []agilelimiter.Stats, final agilelimiter.Stats) {
		t.Helper()
		if len(seen) < 100 || uint64(len(seen)) != final.Ticks {
			t.Fatalf("hook called %d times for %d ticks; want one call a tick", len(seen), final.Ticks)
		}
		for i, st := range seen {
			if st.Ticks != uint64(i+1) {
				t.Fatalf("call %d saw tick %d; want %d", i, st.Ticks, i+1)
			}
			var sum uint64
			st.Decisions.Each(func(_ string, n uint64) { sum += n })
			if sum != st.Ticks || st.Decisions.Get(st.Decision) == 0 {
				t.Fatalf("tick %d: decisions sum to %d, %q counted %d; want %d and at least 1",
					st.Ticks, sum, st.Decision, st.Decisions.Get(st.Decision), st.Ticks)
			}
		}
		last := seen[len(seen)-1]
		if last.Decision != final.Decision || last.Limit != final.Limit || last.Decisions != final.Decisions {
			t.Errorf("last hook %q limit %v; Stats after it %q limit %v", last.Decision, last.Limit, final.Decision, final.Limit)
		}
		if final.Decisions.Get("no such decision") != 0 {
			t.Error("an unknown decision counts ticks")
		}
	}

	t.Run("Limiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var seen []agilelimiter.Stats
			var lim *agilelimiter.Limiter
			lim = agilelimiter.New(agilelimiter.Config{MaxRate: 1000, SLOTarget: 100 * time.Millisecond,
				OnTick: func(st agilelimiter.Stats) {
					_ = lim.Stats() // no deadlock: called outside the locks
					seen = append(seen, st)
				}})
			_, call := dependency(300, 20*time.Millisecond)
			lim.Start()
			stop := make(chan struct{})
			wait := workers(32, stop, func() { _ = lim.Do(call) })
			time.Sleep(5 * time.Second)
			lim.Stop()
			close(stop)
			wait()
			check(t, seen, lim.Stats())
			var rate, delivered bool
			for _, st := range seen {
				rate = rate || st.Rate > 0
				delivered = delivered || st.Delivered > 200
			}
			if !rate || !delivered {
				t.Errorf("Rate seen %v, Delivered past 200/s seen %v; want both", rate, delivered)
			}
			// Every answer is measured here (no Aborted ones): Measured is what
			// came back, within the calls still out at the end.
			if st := lim.Stats(); st.Measured == 0 || st.Measured > st.Admitted || st.Admitted-st.Measured > 32 {
				t.Errorf("measured %d of %d admitted; want all but the 32 workers' last calls", st.Measured, st.Admitted)
			}
		})
	})
	t.Run("ConcurrencyLimiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var seen []agilelimiter.Stats
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100,
				OnTick: func(st agilelimiter.Stats) { seen = append(seen, st) }})
			lim.Start()
			stop := make(chan struct{})
			wait := workers(64, stop, func() {
				if lim.Do(func() error { time.Sleep(10 * time.Millisecond); return nil }) != nil {
					time.Sleep(time.Millisecond)
				}
			})
			time.Sleep(15 * time.Second)
			lim.Stop()
			close(stop)
			wait()
			check(t, seen, lim.Stats())
			if st := lim.Stats(); st.Min != 1 || st.Max != 100 {
				t.Errorf("Stats Min %v Max %v; want the defaulted 1 and the configured 100", st.Min, st.Max)
			}
			for _, st := range seen {
				if st.Limit != math.Floor(st.Limit) || st.Rate != 0 {
					t.Fatalf("tick %d: limit %v, rate %v; want whole slots and no rate", st.Ticks, st.Limit, st.Rate)
				}
			}
		})
	})
}

// records is a slog.Handler that keeps what it is given.
type records struct {
	mu sync.Mutex
	rs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.rs = append(h.rs, r.Clone())
	h.mu.Unlock()
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// with returns the records whose message contains msg.
func (h *records) with(msg string) []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slog.Record
	for _, r := range h.rs {
		if strings.Contains(r.Message, msg) {
			out = append(out, r)
		}
	}
	return out
}

func attr(r slog.Record, key string) slog.Value {
	var v slog.Value
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == key {
			v = a.Value
			return false
		}
		return true
	})
	return v
}

// The limit's changes are logged at Info, at most once a second, only for a
// move of a tenth or more, each line starting where the last one ended.
func TestLoggerLimitChanges(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := &records{}
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1000, SLOTarget: 100 * time.Millisecond, Logger: slog.New(h)})
		dep, call := dependency(300, 20*time.Millisecond)
		lim.Start()
		stop := make(chan struct{})
		wait := workers(64, stop, func() { _ = lim.Do(call) })
		time.Sleep(20 * time.Second)
		dep.SetCapacity(60)
		time.Sleep(40 * time.Second)
		lim.Stop()
		close(stop)
		wait()

		lines := h.with("limit changed")
		if len(lines) < 3 || len(lines) > 60 {
			t.Fatalf("%d lines about the limit in 60 s; want a few (startup, the drop), at most one a second", len(lines))
		}
		from := 1000.0 / 8 // InitialRate's default
		var fell bool
		for i, r := range lines {
			if r.Level != slog.LevelInfo {
				t.Errorf("line %d at %v; want Info", i, r.Level)
			}
			if i > 0 && r.Time.Sub(lines[i-1].Time) < time.Second {
				t.Errorf("lines %d and %d %v apart; want at least 1s", i-1, i, r.Time.Sub(lines[i-1].Time))
			}
			f, to := attr(r, "from").Float64(), attr(r, "to").Float64()
			if math.Abs(f-from) > 0.001 || math.Abs(to-f) < 0.1*f-0.001 {
				t.Errorf("line %d: %v → %v after %v; want from %v and a move of a tenth", i, f, to, from, f)
			}
			if attr(r, "decision").String() == "" || attr(r, "unit").String() != "req/s" || attr(r, "p99").Duration() <= 0 || attr(r, "moves").Int64() < 1 {
				t.Errorf("line %d lacks its reason or evidence: %v", i, r)
			}
			fell = fell || (r.Time.Sub(lines[0].Time) > 15*time.Second && to < f)
			from = to
		}
		if !fell {
			t.Error("no line shows the limit falling after the capacity dropped")
		}
	})
}

// Calls admitted and no answer measured: one Warn after 5 s, then at most
// one a minute while it lasts, and an Info when answers come back.
func TestLoggerBlind(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &records{}
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10, Logger: slog.New(h)})
		lim.Start()
		defer lim.Stop()
		start := time.Now()
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		answer := false
		for time.Since(start) < 80*time.Second {
			<-tk.C
			if lim.TryTake() {
				if answer {
					lim.Observe(10 * time.Millisecond)
				}
				lim.Release() // answered, but nobody measured it (every verdict Aborted)
			}
			answer = time.Since(start) >= 70*time.Second
		}
		warns := h.with("blind")
		if len(warns) != 2 {
			t.Fatalf("%d Warns about blindness in 70 s; want 2 (at 5 s and a minute later)", len(warns))
		}
		for i, want := range []time.Duration{5 * time.Second, 65 * time.Second} {
			if got := warns[i].Time.Sub(start); warns[i].Level != slog.LevelWarn || got < want || got > want+time.Second {
				t.Errorf("Warn %d at %v (%v); want Warn at %v", i, got, warns[i].Level, want)
			}
		}
		if st := lim.Stats(); st.Measured < 50 || st.Measured > 110 || st.Admitted < 700 {
			t.Errorf("measured %d of %d admitted; want only the last 10 s answered", st.Measured, st.Admitted)
		}
		back := h.with("answers measured again")
		if len(back) != 1 || back[0].Time.Sub(start) < 70*time.Second {
			t.Errorf("%d lines saying answers came back; want 1 after 70 s", len(back))
		}
	})
}

// A limit held at its floor for 30 s is a Warn; leaving it is an Info.
func TestLoggerFloor(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		h := &records{}
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, MinRate: 2, SLOTarget: 100 * time.Millisecond, Logger: slog.New(h)})
		dep, call := dependency(0, 20*time.Millisecond) // down
		lim.Start()
		defer lim.Stop()
		stop := make(chan struct{})
		wait := workers(8, stop, func() {
			lim.Take()
			start := time.Now()
			if err := call(); err != nil {
				lim.Unavailable()
				return
			}
			lim.Observe(time.Since(start))
		})
		time.Sleep(2 * time.Second)
		if st := lim.Stats(); st.Min != 2 || st.Max != 100 {
			t.Fatalf("Stats Min %v Max %v; want the configured 2 and 100", st.Min, st.Max)
		}
		if r := lim.Stats().Limit; r != 2 {
			t.Fatalf("limit %v after 2 s of refusals; want the floor, 2", r)
		}
		if n := len(h.with("at its floor")); n != 0 {
			t.Fatalf("%d Warns about the floor after 2 s; want none before 30 s", n)
		}
		time.Sleep(40 * time.Second)
		dep.SetCapacity(100)
		time.Sleep(10 * time.Second)
		close(stop)
		wait()
		warns := h.with("at its floor")
		if len(warns) != 1 || warns[0].Level != slog.LevelWarn {
			t.Fatalf("%d Warns about the floor over 40 s there; want 1", len(warns))
		}
		if left := h.with("left its floor"); len(left) != 1 {
			t.Errorf("%d lines saying the limit left its floor; want 1", len(left))
		}
	})
}
