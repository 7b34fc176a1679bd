package agilegin_test

import (
	"net/http"
	"strings"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

// discard is a ResponseWriter that keeps nothing and allocates nothing once
// its header map exists, so the benchmarks measure gin and the adapter only.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

// WriteString makes discard an io.StringWriter, as net/http's own
// ResponseWriter is; without it io.WriteString would copy every body.
func (d *discard) WriteString(s string) (int, error) { return len(s), nil }

func (d *discard) reset() { clear(d.h) }

// rewind is a request body the benchmark loop rewinds rather than allocates.
type rewind struct{ strings.Reader }

func (*rewind) Close() error { return nil }

// BenchmarkRequest serves one request through gin with and without the
// adapter in the same run: compare ns/op and allocs/op across the sub-benchmarks.
func BenchmarkRequest(b *testing.B) {
	handler := func(c *gin.Context) { c.String(http.StatusOK, "ok") }
	run := func(b *testing.B, r *gin.Engine) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			req, _ := http.NewRequest(http.MethodGet, "/users/42", nil)
			w := &discard{h: http.Header{}}
			for pb.Next() {
				w.reset()
				r.ServeHTTP(w, req)
			}
		})
	}
	// runBody sends a small body, so the adapter times it (one allocation).
	runBody := func(b *testing.B, r *gin.Engine) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			body := &rewind{}
			req, _ := http.NewRequest(http.MethodPost, "/users/42", body)
			w := &discard{h: http.Header{}}
			for pb.Next() {
				w.reset()
				body.Reset("name=ada")
				r.ServeHTTP(w, req)
			}
		})
	}
	b.Run("bare", func(b *testing.B) {
		r := gin.New()
		r.GET("/users/:id", handler)
		run(b, r)
	})
	b.Run("limited", func(b *testing.B) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
		r := gin.New()
		r.Use(agilegin.Limit(lim))
		r.GET("/users/:id", handler)
		run(b, r)
	})
	b.Run("bare-body", func(b *testing.B) {
		r := gin.New()
		r.POST("/users/:id", handler)
		runBody(b, r)
	})
	b.Run("limited-body", func(b *testing.B) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
		r := gin.New()
		r.Use(agilegin.Limit(lim))
		r.POST("/users/:id", handler)
		runBody(b, r)
	})
	b.Run("refused", func(b *testing.B) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: 1, MaxLimit: 1, InitialLimit: 1})
		lim.TryTake()
		defer lim.Release()
		r := gin.New()
		r.Use(agilegin.Limit(lim))
		r.GET("/users/:id", handler)
		run(b, r)
	})
}
