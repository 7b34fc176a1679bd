// Command echo shows agileecho.Limit guarding an echo server on loopback.
//
// The handler needs 10 ms of one of 4 cores (sim.Cores: past 4 requests at
// once, each slows down in proportion) and a connection from a pool of 16;
// without one it fails fast with echo.NewHTTPError(503), which echo renders
// only after the middleware has returned. Forty clients call it in a tight
// loop, and eight scanners probe for pages that do not exist. The limiter
// reads the status each client actually got: the 503s of the cold start's
// overshoot back it off, the scanners' 404s are ignored, latency holds it
// where the cores keep up, and refused clients get a 429 with Retry-After at
// once. It prints one row per half second and exits after three seconds.
//
//	go run ./examples/echo
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

func main() {
	cores, pool := &sim.Cores{N: 4, Work: 10 * time.Millisecond}, &sim.Pool{Size: 16}
	item := func(c echo.Context) error {
		if !pool.Get() {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "connection pool exhausted")
		}
		defer pool.Put()
		if err := cores.Do(c.Request().Context()); err != nil {
			return err
		}
		return c.String(http.StatusOK, "item "+c.Param("id"))
	}

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
	base, closeServer := sim.Serve(e)
	defer closeServer()

	client := load.Client(5 * time.Second)
	var codes table.Codes
	get := func(path string) {
		code, _ := load.Get(client, base+path)
		codes.Add(code)
		if code == agilelimiter.RefusalStatus {
			time.Sleep(10 * time.Millisecond) // an impatient client, retrying soon
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	clients := load.Loop(ctx, 40, func(i int) { get(fmt.Sprintf("/items/%d", i)) })
	scanners := load.Loop(ctx, 8, func(int) { get("/wp-login.php") })

	table.New(os.Stdout, table.Server(lim, &codes, http.StatusOK, http.StatusServiceUnavailable,
		agilelimiter.RefusalStatus, http.StatusNotFound)...).Every(500*time.Millisecond, 6)
	stop()
	clients()
	scanners()
	table.ServerTotals(os.Stdout, "clients and scanners", &codes, lim)
}
