package agilelimiter

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// A waiter woken late by a rate change (its slot is whole intervals in the
// past) goes at once, and the schedule keeps its phase: the next slot is on
// the grid of the slots before it, not on the instant the rate changed. A
// controller moves the rate on its ticks; anchored on that instant, the slots
// would fall on later ticks' instants, where whether a tick counts a grant
// depends on which goroutine runs first, and a simulated run would not repeat.
func TestLateWakeKeepsTheSchedulesPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b bucket
		b.init(1, 0, 100, nil) // one slot a second, 10 ms apart at most
		start := time.Now()
		ctx := context.Background()
		if _, _, err := b.take(ctx, 0); err != nil { // the first slot, at 0
			t.Fatal(err)
		}
		granted := make(chan time.Time, 2)
		go func() {
			at, _, _ := b.take(ctx, 0) // waits for the slot at 1 s
			granted <- at
		}()
		time.Sleep(550 * time.Millisecond)
		synctest.Wait()
		b.setRate(10, math.Inf(1)) // 100 ms apart: its slot (0.1 s) is 0.45 s past
		first := <-granted
		go func() {
			at, _, _ := b.take(ctx, 0)
			granted <- at
		}()
		second := <-granted
		if got := first.Sub(start); got != 550*time.Millisecond {
			t.Errorf("late waiter went at %v; want at once, 550ms", got)
		}
		if got := second.Sub(start); got != 600*time.Millisecond {
			t.Errorf("next slot at %v; want 600ms, on the grid of the slot at 0 (not 650ms, 100ms after the rate change)", got)
		}
	})
}

// A rate whose spacing does not fit in an int64 saturates at the widest
// spacing, never wraps to MaxRate's: a limiter backing off to an "almost
// zero" floor used to grant MaxRate calls a second (issue 14.4).
func TestTinyRateFailsClosed(t *testing.T) {
	var b bucket
	b.init(1e-12, 0, 100, nil)
	if b.interval != maxInterval {
		t.Errorf("init(1e-12, 100): interval %v; want %v", b.interval, maxInterval)
	}
	b.setRate(100, math.Inf(1))
	b.setRate(1e-300, math.Inf(1))
	if b.interval != maxInterval {
		t.Errorf("setRate(1e-300): interval %v; want %v", b.interval, maxInterval)
	}
	for _, r := range []float64{0, math.NaN(), math.Inf(1), -1} {
		if iv := intervalFor(r); iv < time.Nanosecond || iv > maxInterval {
			t.Errorf("intervalFor(%v) = %v", r, iv)
		}
	}
	if got := mulSat(maxInterval, 1<<40); got != math.MaxInt64 {
		t.Errorf("mulSat(maxInterval, 1<<40) = %v; want the largest Duration", got)
	}
	if got := mulSat(time.Second, 3); got != 3*time.Second {
		t.Errorf("mulSat(1s, 3) = %v", got)
	}
}

// The quota counts the slots the bucket may grant until the controller's next
// tick: at 1000/s with room for two calls, two go 1 ms apart and the third
// waits for the next tick's quota (10 ms), or, if no tick comes, for
// MinRate's spacing (1 s after the second). A rate alone let a third out
// whenever the first slot was due at once (room over the tick is two slots
// at its end, three counting its start).
func TestQuotaCountsTheSlotsUntilTheNextTick(t *testing.T) {
	for _, tc := range []struct {
		name string
		tick bool // a setRate 10 ms in renews the quota
		want time.Duration
	}{
		{"the next tick's quota lets the third out", true, 10 * time.Millisecond},
		{"without a tick, MinRate does", false, time.Second + time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var b bucket
				b.init(1000, 1, 1000, nil)
				b.setRate(1000, 2)
				start := time.Now()
				granted := make(chan time.Duration, 3)
				go func() {
					for range 3 {
						at, _, _ := b.take(context.Background(), 0)
						granted <- at.Sub(start)
					}
				}()
				time.Sleep(10 * time.Millisecond)
				synctest.Wait()
				if tc.tick {
					b.setRate(1000, 2)
				}
				got := []time.Duration{<-granted, <-granted, <-granted}
				if got[0] != 0 || got[1] != time.Millisecond || got[2] != tc.want {
					t.Errorf("slots at %v; want 0s, 1ms and %v", got, tc.want)
				}
			})
		})
	}
}

// Stop lifts the quota: no tick is left to renew it, and the callers
// waiting get their slots at the rate alone.
func TestStopLiftsTheQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := New(Config{MinRate: 1, MaxRate: 1000, InitialRate: 1000})
		start := l.Take()
		l.b.setRate(1000, 0) // the next at MinRate's spacing, 1 s
		granted := make(chan time.Duration, 1)
		go func() {
			at := l.Take()
			granted <- at.Sub(start)
		}()
		time.Sleep(5 * time.Millisecond)
		synctest.Wait()
		l.Stop()
		if got := <-granted; got != 5*time.Millisecond {
			t.Errorf("slot at %v; want at once after Stop, 5ms", got)
		}
	})
}
