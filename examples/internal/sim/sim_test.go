package sim

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

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
