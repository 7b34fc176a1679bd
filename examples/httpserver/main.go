// Command httpserver shows httpserver.Wrap guarding a net/http service on
// loopback.
//
// The handler needs 10 ms of one of 4 cores (sim.Cores: past 4 requests at
// once, each slows down in proportion) and a connection from a pool of 16;
// without one it answers 503, which the default verdict reads as the service
// shedding load. Forty clients call it in a tight loop; refused clients get a
// 429 with Retry-After at once and try again 20 ms later. A monitor polls
// /healthz, which bypasses the limiter with WithSkip, and /debug/limiter,
// mounted outside the wrapper, answers while the service is saturated. It
// prints one row per half second and exits after three seconds.
//
//	go run ./examples/httpserver
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

func main() {
	cores, pool := &sim.Cores{N: 4, Work: 10 * time.Millisecond}, &sim.Pool{Size: 16}
	work := func(w http.ResponseWriter, r *http.Request) {
		if !pool.Get() {
			http.Error(w, "connection pool exhausted", http.StatusServiceUnavailable)
			return
		}
		defer pool.Put()
		if cores.Do(r.Context()) == nil {
			io.WriteString(w, "done\n")
		}
	}

	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64})
	lim.Start()
	defer lim.Stop()
	protected := http.NewServeMux()
	protected.HandleFunc("/work", work)
	protected.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	root := http.NewServeMux()
	root.Handle("/", httpserver.Wrap(protected, lim,
		httpserver.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" })))
	root.Handle("/debug/limiter", httpserver.StatsHandler(lim))
	base, closeServer := sim.Serve(root)
	defer closeServer()

	client := load.Client(2 * time.Second)
	var codes, health table.Codes
	ctx, stop := context.WithCancel(context.Background())
	clients := load.Loop(ctx, 40, func(int) {
		code, _ := load.Get(client, base+"/work")
		codes.Add(code)
		if code == agilelimiter.RefusalStatus {
			time.Sleep(20 * time.Millisecond)
		}
	})
	monitor := load.Loop(ctx, 1, func(int) {
		code, _ := load.Get(client, base+"/healthz")
		health.Add(code)
		time.Sleep(50 * time.Millisecond)
	})

	debug := func() (rep httpserver.StatsReport) { // what /debug/limiter says now
		if resp, err := client.Get(base + "/debug/limiter"); err == nil {
			json.NewDecoder(resp.Body).Decode(&rep)
			resp.Body.Close()
		}
		return rep
	}
	table.New(os.Stdout,
		table.Value("limit", "requests", func() float64 { return float64(debug().Limit) }),
		table.Value("in flight", "requests", func() float64 { return float64(debug().InFlight) }),
		table.PerSecond("200", "req/s", codes.Of(http.StatusOK)),
		table.PerSecond("503", "req/s", codes.Of(http.StatusServiceUnavailable)),
		table.PerSecond("429", "req/s", codes.Of(agilelimiter.RefusalStatus)),
		table.PerSecond("healthz 200", "req/s", health.Of(http.StatusOK)),
	).Every(500*time.Millisecond, 6)
	stop()
	clients()
	monitor()
	st := lim.Stats()
	fmt.Printf("/healthz, outside the limiter: %s\n", &health)
	fmt.Printf("/work: %d requests: %s; the limiter admitted %d (200s and 503s) and refused %d (429s)\n",
		codes.Total(), &codes, st.Admitted, st.RejectedOverload)
}
