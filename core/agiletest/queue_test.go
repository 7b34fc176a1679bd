package agiletest

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// A Queue serves one request every 1/capacity, base on top; past maxWait of
// queue, and while down, it refuses at once.
func TestQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(100, 5*time.Millisecond, 30*time.Millisecond) // 10 ms a request
		start := time.Now()
		var mu sync.Mutex
		var took []time.Duration
		var refused int
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				err := q.Call(context.Background())
				mu.Lock()
				defer mu.Unlock()
				if errors.Is(err, ErrRefused) {
					refused++
					return
				}
				took = append(took, time.Since(start))
			})
			synctest.Wait() // each in turn: FIFO
		}
		wg.Wait()
		// Waits of 0, 10, 20, 30 ms are admitted; 40 and 50 are refused.
		if refused != 2 || len(took) != 4 || q.Served() != 4 {
			t.Fatalf("%d answered, %d refused, Served %d; want 4, 2, 4", len(took), refused, q.Served())
		}
		for i, d := range took {
			if want := time.Duration(i+1)*10*time.Millisecond + 5*time.Millisecond; d != want {
				t.Errorf("request %d answered after %v; want %v", i, d, want)
			}
		}

		q.SetCapacity(0)
		if err := q.Call(context.Background()); !errors.Is(err, ErrRefused) || time.Since(start) != took[3] {
			t.Errorf("down: %v after %v; want ErrRefused at once", err, time.Since(start)-took[3])
		}

		// Unlimited capacity: every call takes base alone, however many come.
		q.SetCapacity(math.Inf(1))
		q.SetBase(20 * time.Millisecond)
		at := time.Now()
		for range 50 {
			wg.Go(func() {
				if err := q.Call(context.Background()); err != nil || time.Since(at) != 20*time.Millisecond {
					t.Errorf("unlimited: %v after %v; want nil after 20ms", err, time.Since(at))
				}
			})
		}
		wg.Wait()
	})
}

// A caller that leaves gets its context's error at once, and its work
// still holds up the request behind it.
func TestQueueCallerLeaves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10, 0, 0) // 100 ms a request
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := q.Call(ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 30*time.Millisecond {
			t.Fatalf("%v after %v; want the deadline after 30ms", err, time.Since(start))
		}
		if err := q.Call(context.Background()); err != nil || time.Since(start) != 200*time.Millisecond {
			t.Fatalf("next: %v after %v; want nil after 200ms (behind the abandoned work)", err, time.Since(start))
		}
	})
}

// FIFO puts each arrival on the server free first, lowest index on a tie,
// and asks for the service time at the instant service begins.
func TestFIFO(t *testing.T) {
	t0 := time.Unix(0, 0)
	f := NewFIFO(2)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	var asked []time.Time
	svc := func(d time.Duration) func(time.Time) time.Duration {
		return func(b time.Time) time.Duration { asked = append(asked, b); return d }
	}
	for i, c := range []struct {
		at, service, begin, end int
	}{
		{0, 30, 0, 30},  // server 0
		{0, 10, 0, 10},  // server 1
		{5, 10, 10, 20}, // server 1 frees first
		{5, 10, 20, 30}, // server 1 again
		{5, 10, 30, 40}, // tie at 30: server 0
	} {
		if w := f.Wait(t0.Add(ms(c.at))); w != ms(c.begin-c.at) {
			t.Errorf("arrival %d: Wait %v; want %v", i, w, ms(c.begin-c.at))
		}
		b, e := f.Admit(t0.Add(ms(c.at)), svc(ms(c.service)))
		if b != t0.Add(ms(c.begin)) || e != t0.Add(ms(c.end)) || asked[i] != b {
			t.Errorf("arrival %d: begins %v ends %v (service asked at %v); want %v and %v",
				i, b.Sub(t0), e.Sub(t0), asked[i].Sub(t0), ms(c.begin), ms(c.end))
		}
	}
}
