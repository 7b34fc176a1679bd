package agilelimiter_test

import (
	"context"
	"errors"
	"slices"
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
	grants   []time.Time
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
		p.mu.Lock()
		p.grants = append(p.grants, time.Now())
		p.mu.Unlock()
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

// With many callers queued, every call goes out at the instant the gate
// granted it, and no two sooner than the slower of the two spacings: a
// caller the gate let through never waits for a local slot afterwards
// (where a queue of them would go out at the local pace, past what the
// gate granted in that second), nor one the bucket let through for the gate.
func TestGateAndBucketBothHold(t *testing.T) {
	for _, c := range []struct {
		name       string
		gate, rate float64 // calls a second
	}{{"bucket binds", 50, 20}, {"gate binds", 10, 20}} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &pacer{interval: time.Duration(float64(time.Second) / c.gate)}
				lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: c.rate, Gate: g})
				var mu sync.Mutex
				var sends []time.Time
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				var wg sync.WaitGroup
				for range 8 {
					wg.Go(func() {
						for {
							at, err := lim.TakeContext(ctx)
							if err != nil {
								return
							}
							mu.Lock()
							sends = append(sends, at)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				slices.SortFunc(sends, func(a, b time.Time) int { return a.Compare(b) })
				spacing := time.Duration(float64(time.Second) / min(c.gate, c.rate))
				if len(sends) < 20 || len(sends) != len(g.grants) {
					t.Fatalf("%d sends, %d gate grants; want one grant a send, and some sends", len(sends), len(g.grants))
				}
				for i := range sends {
					if !sends[i].Equal(g.grants[i]) {
						t.Fatalf("send %d at %v, the gate's grant at %v; want the same instant",
							i, sends[i].Sub(sends[0]), g.grants[i].Sub(sends[0]))
					}
					if i > 0 && sends[i].Sub(sends[i-1]) < spacing {
						t.Fatalf("sends %d and %d %v apart; want at least %v", i-1, i, sends[i].Sub(sends[i-1]), spacing)
					}
				}
			})
		})
	}
}
