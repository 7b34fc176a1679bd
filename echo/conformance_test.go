package agileecho_test

import (
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/labstack/echo/v4"
)

// TestConformance runs the contract every inbound adapter keeps. The tests
// beside it are echo's own: the error handler and the status it writes,
// WithHTTPError, Goexit, skippers and custom rejections.
func TestConformance(t *testing.T) {
	agiletest.Inbound{
		Name: "echo",
		Wrap: func(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, retryAfter time.Duration) http.Handler {
			var opts []agileecho.Option
			if retryAfter != 0 {
				opts = append(opts, agileecho.WithRetryAfter(retryAfter))
			}
			e := newEcho()
			e.Use(agileecho.Limit(lim, opts...))
			e.Any("/*", echo.WrapHandler(h))
			return e
		},
	}.Run(t)
}
