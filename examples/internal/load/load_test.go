package load

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Loop's clients stop once the context ends, each after finishing the call
// under way.
func TestLoopFinishesTheCallUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var started, finished atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 95*time.Millisecond)
		defer cancel()
		wait := Loop(ctx, 3, func(int) {
			started.Add(1)
			time.Sleep(10 * time.Millisecond)
			finished.Add(1)
		})
		wait()
		if started.Load() != 30 || finished.Load() != 30 {
			t.Errorf("%d calls started, %d finished; want 30 of each (3 clients × 10 ms for 95 ms, the last finished)",
				started.Load(), finished.Load())
		}
	})
}

// Arrivals comes at the rate asked for, on average, and stops with its context.
func TestArrivalsRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int64
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		Arrivals(ctx, 100, func() { n.Add(1) })()
		// 1000 expected; a Poisson count's standard deviation is about 32.
		if got := n.Load(); got < 850 || got > 1150 {
			t.Errorf("%d arrivals in 10 s at 100/s; want about 1000", got)
		}
	})
}
