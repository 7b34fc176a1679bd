package sim

import (
	"context"
	"errors"
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
		if refused != 2 || len(took) != 4 {
			t.Fatalf("%d served, %d refused; want 4 and 2", len(took), refused)
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
	})
}

// Past N requests at once, Cores stretches each in proportion; a cancelled
// request returns its context's error.
func TestCores(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Cores{N: 2, Work: 10 * time.Millisecond}
		if c.Capacity() != 200 {
			t.Errorf("capacity %g; want 200 req/s", c.Capacity())
		}
		start := time.Now()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { c.Do(context.Background()) })
			synctest.Wait()
		}
		wg.Wait()
		// The third and fourth arrive with 3 and 4 in flight: 15 and 20 ms.
		if d := time.Since(start); d != 20*time.Millisecond {
			t.Errorf("4 requests on 2 cores took %v; want 20ms", d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		defer cancel()
		if err := c.Do(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("cancelled request: %v; want the context's error", err)
		}
	})
}

func TestPool(t *testing.T) {
	p := &Pool{Size: 2}
	if first, second := p.Get(), p.Get(); !first || !second {
		t.Fatal("a pool of 2 refused one of its first two")
	}
	if p.Get() {
		t.Error("a pool of 2 gave a third connection")
	}
	p.Put()
	if !p.Get() {
		t.Error("a connection given back was not given out again")
	}
}
