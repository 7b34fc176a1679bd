// Command httpserver shows httpserver.Wrap guarding a net/http service on
// loopback.
//
// The handler needs 10ms of one of 4 cores (past 4 requests at once, each
// slows down in proportion) and a connection from a pool of 16; without one it
// answers 503, which the default verdict reads as the service shedding load.
// Forty clients call it in a tight loop; refused clients get a 429 with
// Retry-After at once and try again 20ms later. A monitor polls /healthz,
// which bypasses the limiter with WithSkip, and /debug/limiter, mounted
// outside the wrapper, answers while the service is saturated. It prints one
// line per half second and exits after three seconds.
//
//	go run ./examples/httpserver
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

const (
	cores    = 4
	poolSize = 16
)

var busy, pool atomic.Int64

// work is the protected handler: it holds a pooled connection and shares 4
// cores with everything else in flight.
func work(w http.ResponseWriter, r *http.Request) {
	if pool.Add(1) > poolSize {
		pool.Add(-1)
		http.Error(w, "connection pool exhausted", http.StatusServiceUnavailable)
		return
	}
	defer pool.Add(-1)
	n := busy.Add(1)
	defer busy.Add(-1)
	time.Sleep(time.Duration(float64(10*time.Millisecond) * max(1, float64(n)/cores)))
	io.WriteString(w, "done\n")
}

func main() {
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

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: root}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	var ok, shed, refused, health atomic.Int64
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	get := func(path string) int {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}

	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			for ctx.Err() == nil {
				switch get("/work") {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					shed.Add(1)
				case agilelimiter.RefusalStatus:
					refused.Add(1)
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	wg.Go(func() {
		for ctx.Err() == nil {
			if get("/healthz") == http.StatusOK {
				health.Add(1)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	fmt.Println("  time  limit  in-flight     200    503    429  healthz")
	start := time.Now()
	for tick := time.NewTicker(500 * time.Millisecond); ctx.Err() == nil; {
		select {
		case <-tick.C:
		case <-ctx.Done():
			continue
		}
		var rep httpserver.StatsReport
		if resp, err := client.Get(base + "/debug/limiter"); err == nil {
			json.NewDecoder(resp.Body).Decode(&rep)
			resp.Body.Close()
		}
		fmt.Printf("%5.1fs  %5d  %9d  %6d %6d %6d  %7d\n", time.Since(start).Seconds(),
			rep.Limit, rep.InFlight, ok.Swap(0), shed.Swap(0), refused.Swap(0), health.Swap(0))
	}
	wg.Wait()
	st := lim.Stats()
	fmt.Printf("admitted %d, refused %d; the controller's p50 %v, baseline %v, last decision %q\n",
		st.Admitted, st.RejectedOverload, st.P50.Round(time.Millisecond), st.Baseline.Round(time.Millisecond), st.Decision)
}
