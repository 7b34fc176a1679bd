package httpserver_test

import (
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

// TestConformance runs the contract every inbound adapter keeps; the tests
// beside it cover what is particular to net/http.
func TestConformance(t *testing.T) {
	agiletest.Inbound{
		Name: "httpserver",
		Wrap: func(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, ra time.Duration) http.Handler {
			var opts []httpserver.Option
			if ra > 0 {
				opts = append(opts, httpserver.WithRetryAfter(ra))
			}
			return httpserver.Wrap(h, lim, opts...)
		},
	}.Run(t)
}
