// Command fiber shows agilefiber.Limit guarding a fiber v2 app on a loopback
// socket.
//
// GET /work needs 10ms of one of 4 cores: past 4 requests at once every
// request slows down in proportion, so letting more in buys no throughput,
// only latency. Sixty-four impatient clients hammer it (they ignore
// Retry-After and retry after 10ms, to keep the pressure on). The limiter
// admits what the service can hold and refuses the rest at once with 429 and
// Retry-After, so the requests it admits stay fast; /healthz bypasses the
// limiter (WithNext) and answers while the service is saturated. recover.New()
// sits outermost, as fasthttp does not recover panics. It finishes in about
// three seconds.
//
//	go run ./examples/fiber
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
)

const cores = 4

var busy atomic.Int64

// work is the protected handler: 10ms of CPU shared by everything in flight
// (processor sharing on 4 cores).
func work(c *fiber.Ctx) error {
	n := busy.Add(1)
	defer busy.Add(-1)
	time.Sleep(time.Duration(float64(10*time.Millisecond) * max(1, float64(n)/cores)))
	return c.SendString("done")
}

func main() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit:  32, // the most the service may ever hold at once
		SLOTarget: 50 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()

	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(recover.New()) // outermost: fasthttp does not recover panics
	app.Use(agilefiber.Limit(lim,
		agilefiber.WithNext(func(c *fiber.Ctx) bool { return c.Path() == "/healthz" })))
	app.Get("/work", work)
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go app.Listener(ln)
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer func() {
		// fasthttp's Shutdown waits for every connection to go idle and
		// close, and a keep-alive connection waiting for its next request
		// never does by itself: close the client's side first (without it
		// one run in six hung here), and bound the wait anyway.
		client.CloseIdleConnections()
		_ = app.ShutdownWithTimeout(2 * time.Second)
	}()
	get := func(path string) (int, string) {
		resp, err := client.Get(base + path)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After")
	}

	var mu sync.Mutex
	statuses := map[int]int{}
	var served, refused atomic.Int64
	var retryAfter atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				st, ra := get("/work")
				mu.Lock()
				statuses[st]++
				mu.Unlock()
				switch st {
				case http.StatusOK:
					served.Add(1)
				case http.StatusTooManyRequests:
					refused.Add(1)
					retryAfter.Store(ra)
					time.Sleep(10 * time.Millisecond)
				}
			}
		})
	}

	fmt.Printf("%5s %6s %5s %8s %8s %7s %s\n", "time", "limit", "peak", "served", "refused", "p99", "decision")
	start := time.Now()
	var lastServed, lastRefused int64
	for range 6 {
		time.Sleep(500 * time.Millisecond)
		st := lim.Stats()
		s, r := served.Load(), refused.Load()
		fmt.Printf("%4.1fs %6d %5d %6.0f/s %6.0f/s %7s %s\n", time.Since(start).Seconds(), lim.Limit(), st.PeakInFlight,
			float64(s-lastServed)/0.5, float64(r-lastRefused)/0.5, st.P99.Round(100*time.Microsecond), st.Decision)
		lastServed, lastRefused = s, r
	}
	health, _ := get("/healthz") // while the swarm still saturates /work
	close(stop)
	wg.Wait()

	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	fmt.Print("statuses:")
	for _, c := range codes {
		fmt.Printf(" %d×%d", c, statuses[c])
	}
	fmt.Printf("\nrefusals carried Retry-After: %vs; /healthz under load: %d; in flight at the end: %d\n",
		retryAfter.Load(), health, lim.InFlight())
	fmt.Printf("the service can do %d requests a second\n", cores*100)
}
