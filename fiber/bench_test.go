package agilefiber_test

import (
	"errors"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// BenchmarkRequest serves one request through fiber's handler, with and
// without the adapter, in the same run: read the adapter's cost as the
// difference (ns/op) and the allocs/op, which should match the bare app.
// It calls app.Handler() directly on a reused fasthttp.RequestCtx, so the
// figures hold fiber's routing and the middleware, not a connection.
func BenchmarkRequest(b *testing.B) {
	errBoom := errors.New("boom")
	for _, bc := range []struct {
		name    string
		handler fiber.Handler
	}{
		{"200", func(c *fiber.Ctx) error { return c.SendString("ok") }},
		{"error", func(*fiber.Ctx) error { return errBoom }},
	} {
		for _, arm := range []string{"bare", "limited", "refused"} {
			b.Run(bc.name+"/"+arm, func(b *testing.B) {
				lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})
				app := fiber.New()
				switch arm {
				case "limited":
					app.Use(agilefiber.Limit(lim))
				case "refused":
					app.Use(agilefiber.Limit(lim))
					lim.TryTake() // full: every request is refused
					defer lim.Release()
				}
				app.Get("/users/:id", bc.handler)
				serve(b, app.Handler(), "/users/42")
			})
		}
	}
}

// BenchmarkRequestParallel is the same on every core, one RequestCtx per
// goroutine, sharing one limiter wide enough to admit everyone.
func BenchmarkRequestParallel(b *testing.B) {
	for _, arm := range []string{"bare", "limited"} {
		b.Run(arm, func(b *testing.B) {
			app := fiber.New()
			if arm == "limited" {
				app.Use(agilefiber.Limit(agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})))
			}
			app.Get("/users/:id", func(c *fiber.Ctx) error { return c.SendString("ok") })
			h := app.Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var ctx fasthttp.RequestCtx
				ctx.Request.SetRequestURI("/users/42")
				for pb.Next() {
					h(&ctx)
					ctx.Response.Reset()
				}
			})
		})
	}
}

func serve(b *testing.B, h fasthttp.RequestHandler, uri string) {
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	h(&ctx) // warm the pools
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		h(&ctx)
	}
}
