// Command fiber shows agilefiber.Limit guarding a fiber v2 app on a loopback
// socket.
//
// GET /work needs 10 ms of one of 4 cores (sim.Cores): past 4 requests at
// once every request slows down in proportion, so letting more in buys no
// throughput, only latency. Sixty-four impatient clients hammer it (they
// ignore Retry-After and retry after 10 ms, to keep the pressure on). The
// limiter admits what the service can hold and refuses the rest at once with
// 429 and Retry-After, so the requests it admits stay fast; /healthz bypasses
// the limiter (WithNext) and answers while the service is saturated.
// recover.New() sits outermost, as fasthttp does not recover panics. It
// finishes in about three seconds.
//
//	go run ./examples/fiber
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
)

func main() {
	cores := &sim.Cores{N: 4, Work: 10 * time.Millisecond}
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
	app.Get("/work", func(c *fiber.Ctx) error {
		if err := cores.Do(c.Context()); err != nil {
			return err
		}
		return c.SendString("done")
	})
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	ln, base := sim.Listen()
	go app.Listener(ln)
	client := load.Client(5 * time.Second)
	defer func() {
		// fasthttp's Shutdown waits for every connection to go idle and
		// close, and a keep-alive connection waiting for its next request
		// never does by itself: close the client's side first (without it
		// one run in six hung here), and bound the wait anyway.
		client.CloseIdleConnections()
		_ = app.ShutdownWithTimeout(2 * time.Second)
	}()

	var codes table.Codes
	var retryAfter atomic.Value // the last 429's Retry-After
	ctx, stop := context.WithCancel(context.Background())
	wait := load.Loop(ctx, 64, func(int) {
		code, h := load.Get(client, base+"/work")
		codes.Add(code)
		if code == agilelimiter.RefusalStatus {
			retryAfter.Store(h.Get("Retry-After"))
			time.Sleep(10 * time.Millisecond)
		}
	})

	table.New(os.Stdout,
		table.Value("limit", "requests", func() float64 { return float64(lim.Limit()) }),
		table.Value("peak in flight", "requests", func() float64 { return float64(lim.Stats().PeakInFlight) }),
		table.PerSecond("served", "req/s", codes.Of(http.StatusOK)),
		table.PerSecond("refused", "req/s", codes.Of(agilelimiter.RefusalStatus)),
		table.Millis("p99", func() time.Duration { return lim.Stats().P99 }),
		table.Text("decision", func() string { return lim.Stats().Decision }),
	).Every(500*time.Millisecond, 6)
	health, _ := load.Get(client, base+"/healthz") // while the swarm still saturates /work
	stop()
	wait()
	fmt.Printf("refusals carried Retry-After: %vs; /healthz under load: %d; in flight at the end: %d\n",
		retryAfter.Load(), health, lim.InFlight())
	fmt.Printf("/work: %d requests: %s; the limiter admitted %d and refused %d; the service can serve %.0f req/s\n",
		codes.Total(), &codes, lim.Stats().Admitted, lim.Stats().RejectedOverload, cores.Capacity())
}
