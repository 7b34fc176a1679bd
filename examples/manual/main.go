// Command manual shows the Limiter's manual path: Take, then Observe or
// Unavailable, for calls that Do cannot time.
//
// Here the calls are asynchronous: a sender loop takes a slot and hands each
// send to its own goroutine, which reports the round trip with Observe when
// the broker's acknowledgement arrives (10 ms later), measured from the
// moment Take returned. From 1.1 s to 2.1 s the broker is down and refuses
// every send at once; the goroutine reports those with Unavailable instead
// (never both), so the limiter reads the refusals as a broker that is
// unreachable, not as a fast one, and falls towards MinRate until the broker
// is back, then climbs again. It prints a row every quarter second, rates per
// second, and finishes in about three seconds.
//
//	go run ./examples/manual
package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
)

func main() {
	broker := agiletest.NewQueue(1000, 10*time.Millisecond, 0) // acknowledges 10 ms after a send
	time.AfterFunc(1100*time.Millisecond, func() { broker.SetCapacity(0) })
	time.AfterFunc(2100*time.Millisecond, func() { broker.SetCapacity(1000) })
	lim := agilelimiter.New(agilelimiter.Config{
		MinRate:   10,  // the probe rate while the broker is down
		MaxRate:   400, // the ceiling promised to the broker
		SLOTarget: 100 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	var acked, refused table.Count
	var inflight sync.WaitGroup
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			sent := lim.Take() // blocks until this message's slot
			inflight.Go(func() {
				if err := broker.Call(context.Background()); err != nil {
					refused.Inc()
					lim.Unavailable() // never arrived: evidence of an outage, not a fast call
					return
				}
				acked.Inc()
				lim.Observe(time.Since(sent)) // the round trip, the wait in Take excluded
			})
		}
	}()

	state := func() string {
		if broker.Capacity() == 0 {
			return "down"
		}
		return "up"
	}
	table.New(os.Stdout,
		table.Text("broker", state),
		table.Value("rate", "msg/s", lim.Rate),
		table.PerSecond("acked", "msg/s", &acked),
		table.PerSecond("refused", "msg/s", &refused),
		table.Text("decision", func() string { return lim.Stats().Decision }),
	).Every(250*time.Millisecond, 12)
	stop()
	<-stopped
	inflight.Wait()
	fmt.Printf("admitted %d sends: %d acknowledged, %d refused by the broker while it was down\n",
		lim.Stats().Admitted, acked.Total(), refused.Total())
}
