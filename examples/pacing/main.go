// Command pacing shows the outbound Limiter pacing calls with Do.
//
// A dependency in this process serves 200 calls a second from a FIFO queue:
// call it faster and the queue, and its latency, grow. Thirty-two workers call
// it as fast as they can through lim.Do (and the generic agilelimiter.Do for a
// call that returns a value). The limiter starts at MaxRate/8, doubles while
// the dependency stays fast, backs off when its latency rises, and settles
// near its capacity; every half second the program prints the rate it chose
// and the latency it saw. It finishes in about three seconds.
//
//	go run ./examples/pacing
package main

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// dependency serves capacity calls a second, one after another, each after a
// fixed 5ms of network: a queue that grows as soon as calls come faster.
type dependency struct {
	capacity float64
	mu       sync.Mutex
	nextFree time.Time
	calls    atomic.Int64
}

func (d *dependency) get(key int) (string, error) {
	d.mu.Lock()
	now := time.Now()
	if d.nextFree.Before(now) {
		d.nextFree = now
	}
	d.nextFree = d.nextFree.Add(time.Duration(float64(time.Second) / d.capacity))
	ready := d.nextFree.Add(5 * time.Millisecond)
	d.mu.Unlock()
	time.Sleep(time.Until(ready))
	d.calls.Add(1)
	return fmt.Sprintf("value-%d", key), nil
}

func main() {
	dep := &dependency{capacity: 200}
	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   1000,                  // the ceiling promised to the dependency
		SLOTarget: 50 * time.Millisecond, // optional p99 guard
	})
	lim.Start()
	defer lim.Stop()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					// Do times the call from the moment the slot is granted:
					// the wait in the limiter is never part of a sample.
					_ = lim.Do(func() error { _, err := dep.get(w); return err })
				} else {
					// The generic form, for a call that returns a value.
					v, err := agilelimiter.Do(lim, func() (string, error) { return dep.get(w) })
					_, _ = v, err
				}
			}
		}()
	}

	fmt.Printf("dependency capacity %.0f calls/s; Limiter{MaxRate: 1000, SLOTarget: 50ms}\n", dep.capacity)
	fmt.Printf("%5s %8s %8s %7s %7s %s\n", "time", "rate", "served", "p50", "p99", "decision")
	start := time.Now()
	var last int64
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		st := lim.Stats()
		n := dep.calls.Load()
		fmt.Printf("%4.1fs %6.0f/s %6.0f/s %7s %7s %s\n", time.Since(start).Seconds(), lim.Rate(),
			float64(n-last)/0.5, st.P50.Round(100*time.Microsecond), st.P99.Round(100*time.Microsecond), st.Decision)
		last = n
	}
	st := lim.Stats()
	close(stop)
	wg.Wait()
	fmt.Printf("admitted %d calls; %d of the 32 workers waiting for a slot at the end, wait p99 %s\n",
		st.Admitted, st.Waiting, st.WaitP99.Round(time.Millisecond))
}
