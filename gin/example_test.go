package agilegin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

func ExampleLimit() {
	gin.SetMode(gin.ReleaseMode)
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100})
	lim.Start()
	defer lim.Stop()

	r := gin.New()
	r.Use(gin.Recovery(), agilegin.Limit(lim,
		agilegin.WithSkip(func(c *gin.Context) bool { return c.FullPath() == "/healthz" })))
	r.GET("/hello", func(c *gin.Context) { c.String(http.StatusOK, "hello") })
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })

	get := func(path string) {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		fmt.Printf("%s %d Retry-After=%q\n", path, w.Code, w.Header().Get("Retry-After"))
	}
	get("/hello")
	// Fill every slot, as that many slow requests would.
	for lim.TryTake() {
		defer lim.Release()
	}
	get("/hello")
	get("/healthz")
	// Output:
	// /hello 200 Retry-After=""
	// /hello 429 Retry-After="1"
	// /healthz 200 Retry-After=""
}

func ExampleWithVerdict() {
	gin.SetMode(gin.ReleaseMode)
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100})

	// Long polls wait by design: their duration says nothing about capacity.
	verdict := func(e agilelimiter.Exchange) agilelimiter.Outcome {
		if e.Route == "/events" {
			return agilelimiter.Aborted
		}
		return agilelimiter.DefaultServerVerdict(e)
	}
	r := gin.New()
	r.Use(agilegin.Limit(lim, agilegin.WithVerdict(verdict)))
	r.GET("/events", func(c *gin.Context) { c.String(http.StatusOK, "event") })

	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/events", nil))
	fmt.Println(w.Code, w.Body.String())
	// Output: 200 event
}
