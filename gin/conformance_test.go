package agilegin_test

import (
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

// TestConformance runs the contract every inbound adapter keeps. The tests
// beside it are gin's own: middleware order, c.Errors, HandleContext, skip
// filters and custom rejections.
func TestConformance(t *testing.T) {
	agiletest.Inbound{
		Name: "gin",
		Wrap: func(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, retryAfter time.Duration) http.Handler {
			var opts []agilegin.Option
			if retryAfter != 0 {
				opts = append(opts, agilegin.WithRetryAfter(retryAfter))
			}
			r := gin.New()
			r.Use(agilegin.Limit(lim, opts...))
			r.Any("/*path", gin.WrapH(h))
			return r
		},
	}.Run(t)
}
