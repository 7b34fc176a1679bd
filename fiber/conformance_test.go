package agilefiber_test

import (
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// TestConformance runs the contract every inbound adapter keeps, through
// fiber's net/http adaptor. fasthttp gives no signal that a client went away,
// so that case is skipped (see the package documentation). The tests beside
// it are fiber's own: error handlers, mounted apps, pooled contexts,
// RestartRouting, streams, skip filters and custom rejections.
func TestConformance(t *testing.T) {
	agiletest.Inbound{
		Name: "fiber",
		Wrap: func(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, retryAfter time.Duration) http.Handler {
			var opts []agilefiber.Option
			if retryAfter != 0 {
				opts = append(opts, agilefiber.WithRetryAfter(retryAfter))
			}
			app := fiber.New()
			app.Use(agilefiber.Limit(lim, opts...))
			app.All("/*", adaptor.HTTPHandler(h))
			return adaptor.FiberApp(app)
		},
		NoClientGone: true,
	}.Run(t)
}
