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

// pacer is a Gate that lets one call through every interval, on the
// virtual clock: a stand-in for a shared quota.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration
	next     time.Time
	cutoffs  []time.Time
}

func (p *pacer) Acquire(ctx context.Context, cutoff time.Time) error {
	p.mu.Lock()
	now := time.Now()
	at := now
	if p.next.After(now) {
		at = p.next
	}
	p.cutoffs = append(p.cutoffs, cutoff)
	if !cutoff.IsZero() && at.After(cutoff) {
		p.mu.Unlock()
		return agilelimiter.ErrDeadline
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	t := time.NewTimer(at.Sub(now))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Every call asks the Gate first: the rate out is the lower of the gate's
// and the limiter's; the gate's refusals and the callers' cancellations
// are counted as the limiter's own.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &pacer{interval: 100 * time.Millisecond} // 10 calls a second
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100, Gate: g})
		start := time.Now()
		var n int
		for time.Since(start) < 10*time.Second {
			lim.Take()
			n++
		}
		if n < 99 || n > 101 {
			t.Errorf("%d calls in 10 s through a gate of 10/s and a limiter of 100/s; want about 100", n)
		}
		if c := g.cutoffs[0]; !c.IsZero() {
			t.Errorf("Take gave the gate a cutoff of %v; want none", c)
		}

		// A deadline the gate cannot meet: ErrDeadline at once, counted.
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		before := lim.Stats()
		_, err := lim.TakeContext(ctx)
		cancel()
		after := lim.Stats()
		if !errors.Is(err, agilelimiter.ErrDeadline) || after.RejectedDeadline != before.RejectedDeadline+1 || after.Admitted != before.Admitted {
			t.Errorf("TakeContext: %v, rejected %d → %d, admitted %d → %d; want ErrDeadline counted once and nothing admitted",
				err, before.RejectedDeadline, after.RejectedDeadline, before.Admitted, after.Admitted)
		}
		if c := g.cutoffs[len(g.cutoffs)-1]; c.IsZero() || c.After(time.Now().Add(50*time.Millisecond)) {
			t.Errorf("cutoff %v; want the deadline less the reserve", time.Until(c))
		}

		// A caller that gives up while the gate holds it: Canceled.
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(10*time.Millisecond, cancel)
		g.mu.Lock()
		g.next = time.Now().Add(time.Second)
		g.mu.Unlock()
		if _, err := lim.TakeContext(ctx); !errors.Is(err, context.Canceled) || lim.Stats().Canceled != 1 {
			t.Errorf("cancelled in the gate: %v, Canceled %d; want context.Canceled counted", err, lim.Stats().Canceled)
		}
	})
}
