// Command pacing shows the outbound Limiter pacing calls with Do.
//
// A dependency in this process serves 200 calls a second from a FIFO queue
// (agiletest.Queue): call it faster and the queue, and its latency, grow.
// Thirty-two workers call it as fast as they can through lim.Do (and the
// generic agilelimiter.Do for a call that returns a value). The limiter
// starts at MaxRate/8, doubles while the dependency stays fast, backs off
// when its latency rises, and settles near its capacity; every half second
// the program prints the rate it chose and the latency it saw. It finishes in
// about three seconds.
//
//	go run ./examples/pacing
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
)

func main() {
	dep := agiletest.NewQueue(200, 5*time.Millisecond, 0) // 200 calls/s, 5 ms of network
	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   1000,                  // the ceiling promised to the dependency
		SLOTarget: 50 * time.Millisecond, // optional p99 guard
	})
	lim.Start()
	defer lim.Stop()

	var served table.Count
	get := func() (string, error) { return "value", dep.Call(context.Background()) }
	ctx, stop := context.WithCancel(context.Background())
	wait := load.Loop(ctx, 32, func(i int) {
		var err error
		if i%2 == 0 {
			// Do times the call from the moment the slot is granted: the
			// wait in the limiter is never part of a sample.
			err = lim.Do(func() error { _, err := get(); return err })
		} else {
			// The generic form, for a call that returns a value.
			_, err = agilelimiter.Do(lim, get)
		}
		if err == nil {
			served.Inc()
		}
	})

	fmt.Printf("dependency capacity %.0f calls/s; Limiter{MaxRate: 1000, SLOTarget: 50ms}; 32 workers\n", dep.Capacity())
	table.New(os.Stdout,
		table.Value("rate", "calls/s", lim.Rate),
		table.PerSecond("served", "calls/s", &served),
		table.Millis("p50", func() time.Duration { return lim.Stats().P50 }),
		table.Millis("p99", func() time.Duration { return lim.Stats().P99 }),
		table.Text("decision", func() string { return lim.Stats().Decision }),
	).Every(500*time.Millisecond, 6)
	st := lim.Stats()
	stop()
	wait()
	fmt.Printf("admitted %d calls in 3 s (%.0f calls/s); %d of the 32 workers waiting for a slot at the end, wait p99 %s ms\n",
		st.Admitted, float64(st.Admitted)/3, st.Waiting, table.Ms(st.WaitP99))
}
