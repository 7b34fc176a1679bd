// Command manual shows the Limiter's manual path: Take, then Observe or
// Unavailable, for calls that Do cannot time.
//
// Here the calls are asynchronous: a sender loop takes a slot and hands each
// send to its own goroutine, which reports the round trip with Observe when
// the acknowledgement arrives, measured from the moment Take returned. For one
// second in the middle the broker is down and refuses every send at once; the
// goroutine reports those with Unavailable instead (never both), so the
// limiter reads the refusals as a dependency that is unreachable, not as a
// fast one, and falls towards MinRate until the broker is back, then climbs
// again in additive steps. It finishes in about three seconds.
//
//	go run ./examples/manual
package main

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

var errRefused = errors.New("broker: connection refused")

// broker acknowledges a message after 10ms, or refuses it at once while down.
type broker struct {
	down  atomic.Bool
	acked atomic.Int64
}

func (b *broker) send(msg int) error {
	if b.down.Load() {
		return errRefused
	}
	time.Sleep(10 * time.Millisecond)
	b.acked.Add(1)
	return nil
}

func main() {
	b := &broker{}
	lim := agilelimiter.New(agilelimiter.Config{
		MinRate:   10,  // the probe rate while the broker is down
		MaxRate:   400, // the ceiling promised to the broker
		SLOTarget: 100 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	var inflight sync.WaitGroup
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for msg := 0; ; msg++ {
			select {
			case <-stop:
				return
			default:
			}
			lim.Take() // blocks until this message's slot
			sent := time.Now()
			inflight.Add(1)
			go func() {
				defer inflight.Done()
				if err := b.send(msg); errors.Is(err, errRefused) {
					lim.Unavailable() // never arrived: evidence of an outage, not a fast call
					return
				}
				lim.Observe(time.Since(sent)) // the round trip, the wait in Take excluded
			}()
		}
	}()

	fmt.Printf("%5s %7s %8s %6s %s\n", "time", "broker", "rate", "acked", "decision")
	start := time.Now()
	var last int64
	for i := range 12 {
		switch i {
		case 4:
			b.down.Store(true)
		case 8:
			b.down.Store(false)
		}
		time.Sleep(250 * time.Millisecond)
		state := "up"
		if b.down.Load() {
			state = "down"
		}
		n := b.acked.Load()
		fmt.Printf("%4.2fs %7s %6.0f/s %6d %s\n", time.Since(start).Seconds(), state, lim.Rate(), n-last, lim.Stats().Decision)
		last = n
	}
	close(stop)
	<-stopped
	inflight.Wait()
	st := lim.Stats()
	fmt.Printf("admitted %d sends, %d acknowledged\n", st.Admitted, b.acked.Load())
}
