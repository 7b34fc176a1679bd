// Command inbound shows the ConcurrencyLimiter guarding a service's own work
// with Do.
//
// The "service" here needs 10 ms of one of 4 cores (sim.Cores): past 4
// requests at once, every request slows down in proportion, so letting more
// in buys no throughput, only latency. Sixty-four clients call it in a tight
// loop through lim.Do. The limiter admits what the service can hold and
// answers the rest at once with ErrOverloaded (an HTTP adapter turns that
// into a 429), so the requests it admits stay fast. It finishes in about three
// seconds.
//
//	go run ./examples/inbound
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
)

func main() {
	cores := &sim.Cores{N: 4, Work: 10 * time.Millisecond} // 400 requests/s at most
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  32, // the most the service may ever hold at once
		SLOTarget: 50 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	var served, refused table.Count
	ctx, stop := context.WithCancel(context.Background())
	wait := load.Loop(ctx, 64, func(int) {
		err := lim.Do(func() error { return cores.Do(context.Background()) })
		switch {
		case errors.Is(err, agilelimiter.ErrOverloaded):
			refused.Inc()
			time.Sleep(10 * time.Millisecond) // an impatient client, retrying soon
		case err == nil:
			served.Inc()
		}
	})

	stats := func() agilelimiter.Stats { return lim.Stats() }
	table.New(os.Stdout,
		table.Value("limit", "requests", func() float64 { return float64(lim.Limit()) }),
		table.Value("peak in flight", "requests", func() float64 { return float64(stats().PeakInFlight) }),
		table.PerSecond("served", "req/s", &served),
		table.PerSecond("refused", "req/s", &refused),
		table.Millis("p99", func() time.Duration { return stats().P99 }),
		table.Text("decision", func() string { return stats().Decision }),
	).Every(500*time.Millisecond, 6)
	stop()
	wait()
	fmt.Printf("64 clients made %d requests: %d served, %d refused at once with ErrOverloaded; the service can serve %.0f req/s\n",
		served.Total()+refused.Total(), served.Total(), refused.Total(), cores.Capacity())
}
