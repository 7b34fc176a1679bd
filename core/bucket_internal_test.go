package agilelimiter

import (
	"context"
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
		b.init(1, 100) // one slot a second, 10 ms apart at most
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
		b.setRate(10) // 100 ms apart: its slot (0.1 s) is 0.45 s past
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
