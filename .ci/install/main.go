// Command shop is what a user of agilelimiter writes from the README, in
// their own module: a gin service behind a ConcurrencyLimiter that calls a
// dependency through resty behind a Limiter. .ci/run copies this directory
// out of the repository, gets the modules from a proxy built from the
// repository's tree (.ci/modproxy), and builds and tests it there.
package main

import (
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/gin-gonic/gin"
	"github.com/go-resty/resty/v2"
)

// newService returns the service: /orders/:id asks the stock service at
// dep through client.
func newService(lim *agilelimiter.ConcurrencyLimiter, client *resty.Client, dep string) http.Handler {
	r := gin.New()
	r.Use(gin.Recovery()) // outside the limiter
	r.Use(agilegin.Limit(lim))
	r.GET("/orders/:id", func(c *gin.Context) {
		resp, err := client.R().
			SetContext(c.Request.Context()). // the wait for a slot honours the request's context
			Get(dep + "/stock/" + c.Param("id"))
		if err != nil {
			c.String(http.StatusBadGateway, "stock: %v", err)
			return
		}
		c.String(http.StatusOK, "order %s: %s", c.Param("id"), resp.String())
	})
	return r
}

func main() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200})
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 500, SLOTarget: 200 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	out.Start()
	defer out.Stop()
	client := agileresty.Limit(resty.New(), out) // every attempt, retries included, takes its own slot
	_ = http.ListenAndServe(":8080", newService(lim, client, "http://stock.internal"))
}
