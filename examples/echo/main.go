// Command echo shows agileecho.Limit guarding an echo server on loopback.
//
// The handler needs 10ms of one of 4 cores (past 4 requests at once, each
// slows down in proportion) and a connection from a pool of 16; without one it
// fails fast with echo.NewHTTPError(503), which echo renders only after the
// middleware has returned. Forty clients call it in a tight loop, and eight
// scanners probe for pages that do not exist. The limiter reads the status
// each client actually got: the 503s of the cold start's overshoot back it
// off, the scanners' 404s are ignored, latency holds it where the cores keep
// up, and refused clients get a 429 with Retry-After at once. It prints one
// line per half second and exits after three seconds.
//
//	go run ./examples/echo
package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

const (
	cores    = 4
	poolSize = 16
)

var busy, pool atomic.Int64

// item is the protected handler: it holds a pooled connection and shares 4
// cores with everything else in flight.
func item(c echo.Context) error {
	if pool.Add(1) > poolSize {
		pool.Add(-1)
		return echo.NewHTTPError(http.StatusServiceUnavailable, "connection pool exhausted")
	}
	defer pool.Add(-1)
	n := busy.Add(1)
	defer busy.Add(-1)
	time.Sleep(time.Duration(float64(10*time.Millisecond) * max(1, float64(n)/cores)))
	return c.String(http.StatusOK, "item "+c.Param("id"))
}

// statuses counts responses by status code in the current window.
type statuses struct{ ok, shed, refused, notFound atomic.Int64 }

func (s *statuses) count(code int) {
	switch code {
	case http.StatusOK:
		s.ok.Add(1)
	case http.StatusServiceUnavailable:
		s.shed.Add(1)
	case agilelimiter.RefusalStatus:
		s.refused.Add(1)
	case http.StatusNotFound:
		s.notFound.Add(1)
	}
}

func main() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  64, // the most the service may ever hold at once
		SLOTarget: 100 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(middleware.Recover())
	e.Use(agileecho.Limit(lim))
	e.GET("/items/:id", item)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: e}
	go func() { _ = srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Second}

	var window statuses
	stop := make(chan struct{})
	var wg sync.WaitGroup
	call := func(path string) {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			resp, err := client.Get(base + path)
			if err != nil {
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			window.count(resp.StatusCode)
			if resp.StatusCode == agilelimiter.RefusalStatus {
				time.Sleep(10 * time.Millisecond) // an impatient client, retrying soon
			}
		}
	}
	for i := range 40 {
		wg.Add(1)
		go call(fmt.Sprintf("/items/%d", i))
	}
	for range 8 {
		wg.Add(1)
		go call("/wp-login.php")
	}

	fmt.Printf("%5s %6s %7s %7s %7s %7s %8s %s\n", "time", "limit", "200/s", "503/s", "429/s", "404/s", "p99", "decision")
	start := time.Now()
	rate := func(n *atomic.Int64) float64 { return float64(n.Swap(0)) / 0.5 }
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		st := lim.Stats()
		fmt.Printf("%4.1fs %6d %7.0f %7.0f %7.0f %7.0f %8s %s\n", time.Since(start).Seconds(), lim.Limit(),
			rate(&window.ok), rate(&window.shed), rate(&window.refused), rate(&window.notFound),
			st.P99.Round(100*time.Microsecond), st.Decision)
	}
	close(stop)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)

	st := lim.Stats()
	fmt.Printf("admitted %d, refused %d; in flight at the end: %d\n", st.Admitted, st.RejectedOverload, lim.InFlight())
}
