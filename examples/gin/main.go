// Command gin shows agilegin.Limit guarding a gin engine on loopback.
//
// The handler needs 10ms of one of 4 cores (past 4 requests at once, each
// slows down in proportion) and a connection from a pool of 16; without one it
// records the failure with c.Error, and the error-rendering middleware inside
// the limiter turns that into a 503, so the limiter sees the status the client
// got. Forty clients call it in a tight loop, half of them through a legacy
// path that the engine rewrites with HandleContext (one request, one slot);
// eight scanners probe for pages that do not exist, and a monitor polls
// /healthz, which bypasses the limiter with WithSkip. The 503s of the cold
// start's overshoot back the limit off, the scanners' 404s are ignored, and
// refused clients get a 429 with Retry-After at once. It prints one line per
// half second and exits after three seconds.
//
//	go run ./examples/gin
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

const (
	cores    = 4
	poolSize = 16
)

var (
	busy, pool   atomic.Int64
	errPoolEmpty = errors.New("connection pool exhausted")
)

// item is the protected handler: it holds a pooled connection and shares 4
// cores with everything else in flight.
func item(c *gin.Context) {
	if pool.Add(1) > poolSize {
		pool.Add(-1)
		_ = c.Error(errPoolEmpty)
		return
	}
	defer pool.Add(-1)
	n := busy.Add(1)
	defer busy.Add(-1)
	time.Sleep(time.Duration(float64(10*time.Millisecond) * max(1, float64(n)/cores)))
	c.String(http.StatusOK, "item "+c.Param("id"))
}

// renderErrors turns the errors handlers record into the status the client
// receives. It sits inside agilegin.Limit, so the limiter reads that status.
func renderErrors(c *gin.Context) {
	c.Next()
	if err := c.Errors.Last(); err != nil && !c.Writer.Written() {
		status := http.StatusInternalServerError
		if errors.Is(err, errPoolEmpty) {
			status = http.StatusServiceUnavailable
		}
		c.String(status, err.Error())
	}
}

// statuses counts responses by status code in the current window.
type statuses struct{ ok, shed, refused, notFound, health atomic.Int64 }

func (s *statuses) count(path string, code int) {
	switch {
	case path == "/healthz":
		s.health.Add(1)
	case code == http.StatusOK:
		s.ok.Add(1)
	case code == http.StatusServiceUnavailable:
		s.shed.Add(1)
	case code == agilelimiter.RefusalStatus:
		s.refused.Add(1)
	case code == http.StatusNotFound:
		s.notFound.Add(1)
	}
}

func main() {
	gin.SetMode(gin.ReleaseMode)
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  64, // the most the service may ever hold at once
		SLOTarget: 100 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	r := gin.New()
	r.Use(gin.Recovery()) // outside the limiter: a panic still releases its slot
	r.Use(agilegin.Limit(lim, agilegin.WithSkip(func(c *gin.Context) bool { return c.FullPath() == "/healthz" })))
	r.Use(renderErrors)
	r.GET("/items/:id", item)
	r.GET("/v1/items/:id", func(c *gin.Context) { // the old API: rewritten, not redirected
		c.Request.URL.Path = "/items/" + c.Param("id")
		r.HandleContext(c)
	})
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: r}
	go func() { _ = srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Second}

	var window statuses
	var healthRefused atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	call := func(path string, pause time.Duration) {
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
			window.count(path, resp.StatusCode)
			if path == "/healthz" && resp.StatusCode != http.StatusOK {
				healthRefused.Add(1)
			}
			if resp.StatusCode == agilelimiter.RefusalStatus {
				pause = max(pause, 10*time.Millisecond) // an impatient client, retrying soon
			}
			time.Sleep(pause)
		}
	}
	for i := range 40 {
		wg.Add(1)
		if i%2 == 0 {
			go call(fmt.Sprintf("/items/%d", i), 0)
		} else {
			go call(fmt.Sprintf("/v1/items/%d", i), 0)
		}
	}
	for range 8 {
		wg.Add(1)
		go call("/wp-login.php", 0)
	}
	wg.Add(1)
	go call("/healthz", 50*time.Millisecond)

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
	fmt.Printf("health checks answered %d, refused %d (WithSkip keeps them out of the limiter)\n",
		window.health.Load(), healthRefused.Load())
}
