package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
)

// Scraped over loopback while the service is overloaded, /metrics answers,
// shows the limit move and the refusals count up.
func TestMetricsDuringOverload(t *testing.T) {
	lim := newLimiter()
	lim.Start()
	defer lim.Stop()
	base, closeServer := sim.Serve(service(lim, &sim.Cores{N: 4, Work: 10 * time.Millisecond}))
	defer closeServer()
	client := load.Client(5 * time.Second)
	var codes table.Codes
	stop := overload(client, base+"/work", &codes)
	defer stop()

	// Scrape until the limit has shown two values and the refusals grew, for
	// at most 8 s: the load runs until then, so every scrape is during it.
	limits := map[float64]bool{}
	var rejected []float64
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		m, err := scrape(client, base+"/metrics")
		if err != nil {
			t.Fatal(err)
		}
		limit, ok := m.value("agilelimiter_concurrency_limit", "limiter", "api")
		rej, ok2 := m.value("agilelimiter_rejected_total", "limiter", "api", "reason", "overload")
		if !ok || !ok2 {
			t.Fatalf("/metrics has no concurrency_limit or rejected_total{reason=\"overload\"} for limiter api:\n%s", m.text)
		}
		limits[limit] = true
		rejected = append(rejected, rej)
		if len(limits) >= 2 && rej > rejected[0] || time.Now().After(deadline) {
			break
		}
	}
	stop()

	if len(limits) < 2 {
		t.Errorf("agilelimiter_concurrency_limit took one value, %v, over %d scrapes under overload; want it to move", limits, len(rejected))
	}
	first, last := rejected[0], rejected[len(rejected)-1]
	if last == 0 || last <= first {
		t.Errorf("agilelimiter_rejected_total{reason=\"overload\"} went from %g to %g over %d scrapes under overload; want it above 0 and growing", first, last, len(rejected))
	}
	if n := codes.Of(http.StatusTooManyRequests).Total(); n == 0 {
		t.Errorf("no client got a 429 (%s): the load did not overload the service", &codes)
	}
}
