// Command inbound shows the ConcurrencyLimiter guarding a service's own work
// with Do.
//
// The "service" here is a function that needs 10ms of one of 4 cores: past 4
// requests at once, every request slows down in proportion, so letting more
// in buys no throughput, only latency. Sixty-four clients call it in a tight
// loop through lim.Do. The limiter admits what the service can hold and
// answers the rest at once with ErrOverloaded (an HTTP adapter turns that into
// a 429), so the requests it admits stay fast. It finishes in about three
// seconds.
//
//	go run ./examples/inbound
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

const cores = 4

var busy atomic.Int64

// work is the protected request handler: 10ms of CPU shared by everything in
// flight (processor sharing on 4 cores).
func work() error {
	n := busy.Add(1)
	defer busy.Add(-1)
	time.Sleep(time.Duration(float64(10*time.Millisecond) * max(1, float64(n)/cores)))
	return nil
}

func main() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  32, // the most the service may ever hold at once
		SLOTarget: 50 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	var served, shed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := lim.Do(work)
				switch {
				case errors.Is(err, agilelimiter.ErrOverloaded):
					shed.Add(1)
					time.Sleep(10 * time.Millisecond) // an impatient client, retrying soon
				case err == nil:
					served.Add(1)
				}
			}
		}()
	}

	fmt.Printf("%5s %6s %9s %8s %8s %7s %s\n", "time", "limit", "peak", "served", "refused", "p99", "decision")
	start := time.Now()
	var lastServed, lastShed int64
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		st := lim.Stats()
		s, r := served.Load(), shed.Load()
		fmt.Printf("%4.1fs %6d %9d %6.0f/s %6.0f/s %7s %s\n", time.Since(start).Seconds(), lim.Limit(), st.PeakInFlight,
			float64(s-lastServed)/0.5, float64(r-lastShed)/0.5, st.P99.Round(100*time.Microsecond), st.Decision)
		lastServed, lastShed = s, r
	}
	close(stop)
	wg.Wait()

	st := lim.Stats()
	fmt.Printf("served %d, refused %d at once with ErrOverloaded; the service can do %d a second\n",
		served.Load(), st.RejectedOverload, cores*100)
}
