// Command gin shows agilegin.Limit guarding a gin engine on loopback.
//
// The handler needs 10 ms of one of 4 cores (sim.Cores: past 4 requests at
// once, each slows down in proportion) and a connection from a pool of 16;
// without one it records the failure with c.Error, and the error-rendering
// middleware inside the limiter turns that into a 503, so the limiter sees
// the status the client got. Forty clients call it in a tight loop, half of
// them through a legacy path that the engine rewrites with HandleContext (one
// request, one slot); eight scanners probe for pages that do not exist, and a
// monitor polls /healthz, which bypasses the limiter with WithSkip. The 503s
// of the cold start's overshoot back the limit off, the scanners' 404s are
// ignored, and refused clients get a 429 with Retry-After at once. It prints
// one row per half second and exits after three seconds.
//
//	go run ./examples/gin
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

var errPoolEmpty = errors.New("connection pool exhausted")

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

func main() {
	cores, pool := &sim.Cores{N: 4, Work: 10 * time.Millisecond}, &sim.Pool{Size: 16}
	item := func(c *gin.Context) {
		if !pool.Get() {
			_ = c.Error(errPoolEmpty)
			return
		}
		defer pool.Put()
		if cores.Do(c.Request.Context()) == nil {
			c.String(http.StatusOK, "item "+c.Param("id"))
		}
	}

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
	base, closeServer := sim.Serve(r)
	defer closeServer()

	client := load.Client(5 * time.Second)
	var codes, health table.Codes
	get := func(codes *table.Codes, path string) {
		code, _ := load.Get(client, base+path)
		codes.Add(code)
		if code == agilelimiter.RefusalStatus {
			time.Sleep(10 * time.Millisecond) // an impatient client, retrying soon
		}
	}
	ctx, stop := context.WithCancel(context.Background())
	clients := load.Loop(ctx, 40, func(i int) {
		path := fmt.Sprintf("/items/%d", i)
		if i%2 == 1 {
			path = "/v1" + path // the legacy path, rewritten by the engine
		}
		get(&codes, path)
	})
	scanners := load.Loop(ctx, 8, func(int) { get(&codes, "/wp-login.php") })
	monitor := load.Loop(ctx, 1, func(int) { get(&health, "/healthz"); time.Sleep(50 * time.Millisecond) })

	table.New(os.Stdout, table.Server(lim, &codes, http.StatusOK, http.StatusServiceUnavailable,
		agilelimiter.RefusalStatus, http.StatusNotFound)...).Every(500*time.Millisecond, 6)
	stop()
	clients()
	scanners()
	monitor()
	fmt.Printf("/healthz, skipped by the limiter: %s\n", &health)
	table.ServerTotals(os.Stdout, "clients and scanners", &codes, lim)
}
