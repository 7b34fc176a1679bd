// Command metrics shows agileprom exporting a limiter to Prometheus while the
// service it guards is overloaded.
//
// A gin service, guarded by agilegin.Limit, needs 10 ms of one of 4 cores a
// request (sim.Cores: 400 requests a second at most, and past 4 at once each
// one slows down in proportion). Forty clients call it in a tight loop, ten
// for each core: the limiter moves its limit to what the cores hold within
// the SLO and answers the rest 429 at once. An agileprom.Collector over the
// limiter is served at /metrics by a root http.ServeMux, beside the gin
// engine and outside the limiter, so a scrape answers at once while every
// slot is taken, and is not counted as the service's work. Each table row
// reads the limit from a scrape of /metrics, and shows how long that scrape
// took. At the end it scrapes /metrics once more and prints the limiter's
// limit, counters and the controller's decisions, as Prometheus stores them.
// It finishes in about three seconds.
//
//	go run ./examples/metrics
package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	agileprom "github.com/agilelimiter/agilelimiter/prometheus"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// service is the gin engine behind the limiter at "/", and /metrics beside
// it, outside the limiter: a scrape answers while every slot is taken.
func service(lim *agilelimiter.ConcurrencyLimiter, cores *sim.Cores) http.Handler {
	collector := agileprom.New()
	collector.AddConcurrency("api", lim) // the label limiter="api"
	reg := prometheus.NewRegistry()
	reg.MustRegister(collector)

	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery(), agilegin.Limit(lim))
	r.GET("/work", func(c *gin.Context) {
		if cores.Do(c.Request.Context()) == nil {
			c.String(http.StatusOK, "done")
		}
	})
	root := http.NewServeMux()
	root.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	root.Handle("/", r)
	return root
}

// newLimiter is the service's limiter, not yet started.
func newLimiter() *agilelimiter.ConcurrencyLimiter {
	return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  64, // the most the service may ever hold at once
		SLOTarget: 100 * time.Millisecond,
	})
}

// overload runs 40 clients calling url in a tight loop, counting what they
// get in codes; a refused client tries again 20 ms later. stop ends them and
// waits for their last calls.
func overload(client *http.Client, url string, codes *table.Codes) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	wait := load.Loop(ctx, 40, func(int) {
		code, _ := load.Get(client, url)
		codes.Add(code)
		if code == agilelimiter.RefusalStatus {
			time.Sleep(20 * time.Millisecond)
		}
	})
	return func() { cancel(); wait() }
}

func main() {
	cores := &sim.Cores{N: 4, Work: 10 * time.Millisecond}
	lim := newLimiter()
	lim.Start()
	defer lim.Stop()
	base, closeServer := sim.Serve(service(lim, cores))
	defer closeServer()

	client := load.Client(5 * time.Second)
	var codes table.Codes
	stop := overload(client, base+"/work", &codes)
	var last metrics // the table's last scrape
	table.New(os.Stdout,
		table.Value("limit", "requests", func() float64 { // as /metrics says it
			var err error
			if last, err = scrape(client, base+"/metrics"); err != nil {
				return math.NaN()
			}
			v, _ := last.value("agilelimiter_concurrency_limit", "limiter", "api")
			return v
		}),
		table.PerSecond("200", "req/s", codes.Of(http.StatusOK)),
		table.PerSecond("429", "req/s", codes.Of(agilelimiter.RefusalStatus)),
		table.Millis("scrape", func() time.Duration { return last.took }),
	).Every(500*time.Millisecond, 6)
	stop()

	m, err := scrape(client, base+"/metrics")
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
	fmt.Println("/metrics after the run (the decisions never taken left out):")
	for _, line := range m.lines("agilelimiter_concurrency_limit", "agilelimiter_admitted_total",
		"agilelimiter_rejected_total", "agilelimiter_decisions_total") {
		if !strings.HasSuffix(line, " 0") || !strings.HasPrefix(line, "agilelimiter_decisions_total") {
			fmt.Println("  " + line)
		}
	}
	admitted, _ := m.value("agilelimiter_admitted_total", "limiter", "api")
	rejected, _ := m.value("agilelimiter_rejected_total", "limiter", "api", "reason", "overload")
	fmt.Printf("40 clients made %d requests: %s; /metrics counted %.0f admitted and %.0f refused for overload\n",
		codes.Total(), &codes, admitted, rejected)
}
