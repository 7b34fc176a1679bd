package agileprom_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileprom "github.com/agilelimiter/agilelimiter/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

func ExampleNew() {
	in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 8, InitialLimit: 8})
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100}) // starts at MaxRate/8
	// A service would Start both (and Stop them when done); left alone here,
	// the limits stay where they start and the output is the same every run.

	c := agileprom.New()
	c.AddConcurrency("public-http", in) // the route group it guards
	c.AddLimiter("payments-api", out)   // the dependency it paces
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	// Serve it outside the limiter, so that it answers while the service is
	// saturated: http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	for range 3 { // three requests admitted, one of them done
		in.TryTake()
	}
	in.Release()

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		for _, name := range []string{
			"agilelimiter_admitted_total", "agilelimiter_in_flight_requests",
			"agilelimiter_concurrency_limit", "agilelimiter_limit_requests_per_second",
		} {
			if strings.HasPrefix(line, name+"{") {
				fmt.Print(line)
			}
		}
	}
	// Output:
	// agilelimiter_admitted_total{limiter="payments-api"} 0
	// agilelimiter_admitted_total{limiter="public-http"} 3
	// agilelimiter_concurrency_limit{limiter="public-http"} 8
	// agilelimiter_in_flight_requests{limiter="public-http"} 2
	// agilelimiter_limit_requests_per_second{limiter="payments-api"} 12.5
}
