package agilelimiter_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// A dependency that asks for a 5 s pause gets no call for 5 s; callers with
// deadlines inside the pause leave at once with ErrDeadline, those waiting
// already included; after it, calls go out one slot apart, starting slow.
func TestPauseUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 200, InitialRate: 200, SLOTarget: 200 * time.Millisecond})
		lim.Start()
		defer lim.Stop()
		_, call := dependency(500, 20*time.Millisecond)
		var (
			mu    sync.Mutex
			sends []time.Time
		)
		var pauseAt, pauseEnd time.Time
		send := func() error {
			mu.Lock()
			now := time.Now()
			sends = append(sends, now)
			pausing := pauseAt.IsZero() && now.Sub(sends[0]) >= 3*time.Second
			if pausing {
				pauseAt, pauseEnd = now, now.Add(5*time.Second)
			}
			mu.Unlock()
			if pausing { // 429, Retry-After: 5
				lim.PauseUntil(pauseEnd)
				return errors.New("429")
			}
			return call()
		}
		stop := make(chan struct{})
		var refused, late, other int
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					start := time.Now()
					err := lim.DoContext(ctx, func(context.Context) error { return send() })
					cancel()
					mu.Lock()
					switch {
					case errors.Is(err, agilelimiter.ErrDeadline):
						refused++
						if time.Since(start) > 0 && !pauseEnd.IsZero() && time.Now().Before(pauseEnd) && time.Since(start) >= time.Second {
							late++
						}
					case err != nil && err.Error() != "429":
						other++
					}
					mu.Unlock()
					if errors.Is(err, agilelimiter.ErrDeadline) {
						time.Sleep(50 * time.Millisecond) // a caller's back-off
					}
				}
			})
		}
		time.Sleep(4 * time.Second)
		if st := lim.Stats(); st.Decision != "paused" || !st.PausedUntil.Equal(pauseEnd) {
			t.Errorf("during the pause: decision %q, PausedUntil %v; want paused until %v", st.Decision, st.PausedUntil, pauseEnd)
		}
		if r := lim.Rate(); r != 0 {
			t.Errorf("during the pause: Rate %v; want 0", r)
		}
		lim.PauseUntil(pauseEnd.Add(-2 * time.Second)) // a later, shorter Retry-After
		if st := lim.Stats(); !st.PausedUntil.Equal(pauseEnd) {
			t.Errorf("a shorter pause moved the end to %v; want %v", st.PausedUntil, pauseEnd)
		}
		time.Sleep(8 * time.Second)
		close(stop)
		wg.Wait()

		mu.Lock()
		defer mu.Unlock()
		var during, after int
		var first time.Time
		for i, s := range sends {
			if s.After(pauseAt) && s.Before(pauseEnd) {
				during++
			}
			if !s.Before(pauseEnd) {
				if first.IsZero() {
					first = s
				}
				if s.Before(pauseEnd.Add(100 * time.Millisecond)) {
					after++
				}
				if i > 0 && s.Equal(sends[i-1]) {
					t.Errorf("two calls at %v after the pause; want one slot apart", s.Sub(pauseEnd))
				}
			}
		}
		if during != 0 {
			t.Errorf("%d calls reached the dependency during the pause; want none", during)
		}
		if first.IsZero() || first.Sub(pauseEnd) > 100*time.Millisecond {
			t.Errorf("first call after the pause at %v past its end; want sending to resume", first.Sub(pauseEnd))
		}
		// The rate before the pause sends 20 in 100 ms; a window of one
		// call at the 20 ms floor carries 6 (Vegas' gain of 1.2).
		if after > 8 {
			t.Errorf("%d calls in the first 100 ms after the pause (20 at the rate before it); want a window of one call's", after)
		}
		if refused == 0 || late != 0 || other != 0 {
			t.Errorf("%d refused (%d only at their deadline), %d other errors; want refusals at once and nothing else", refused, late, other)
		}
		var last10 int
		for _, s := range sends {
			if s.After(sends[len(sends)-1].Add(-time.Second)) {
				last10++
			}
		}
		if last10 < 100 {
			t.Errorf("%d calls in the last second, 5 s after the pause; want the rate back near 200/s", last10)
		}
	})
}

// Callers already waiting when a pause longer than their deadline begins
// leave at once with ErrDeadline, not when their context ends; callers
// without a deadline wait out the pause; a pause is capped at a day.
func TestPauseWakesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1, InitialRate: 1})
		lim.Take() // the next slot is 1 s away
		start := time.Now()
		var wg sync.WaitGroup
		var errs [3]error
		var took [3]time.Duration
		for i := range 3 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, errs[i] = lim.TakeContext(ctx)
				took[i] = time.Since(start)
			})
		}
		var plain time.Duration
		wg.Go(func() { lim.Take(); plain = time.Since(start) })
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		lim.PauseUntil(time.Now().Add(time.Minute))
		wg.Wait()
		for i := range 3 {
			if !errors.Is(errs[i], agilelimiter.ErrDeadline) || took[i] != 100*time.Millisecond {
				t.Errorf("waiter %d: %v after %v; want ErrDeadline when the pause began (100ms)", i, errs[i], took[i])
			}
		}
		if plain < time.Minute || plain > time.Minute+time.Second {
			t.Errorf("a Take without deadline went after %v; want at the pause's end, a minute in", plain)
		}
		lim.PauseUntil(time.Now().Add(1000 * time.Hour))
		if until := lim.Stats().PausedUntil; time.Until(until) != 24*time.Hour {
			t.Errorf("pause of 1000 h ends in %v; want capped at 24h", time.Until(until))
		}
	})
}
