package agileecho_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/labstack/echo/v4"
)

// discardWriter is a ResponseWriter that keeps nothing, so the benchmarks
// measure echo and the adapter rather than a recorder's buffers.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// passThrough is the cheapest middleware echo can run: it shows what echo
// itself charges per middleware (it builds the chain on every request).
func passThrough(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error { return next(c) }
}

// BenchmarkRequest serves one request through echo: bare, behind a
// pass-through middleware, and behind the adapter (admitted, failing with an
// HTTPError, refused). Compare the adapter's rows with the bare and
// pass-through rows of the same run.
func BenchmarkRequest(b *testing.B) {
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	fail := func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) }
	free := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20})
	full := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	full.TryTake()
	for _, bc := range []struct {
		name       string
		middleware []echo.MiddlewareFunc
		handler    echo.HandlerFunc
	}{
		{"bare", nil, ok},
		{"passthrough", []echo.MiddlewareFunc{passThrough}, ok},
		{"agileecho", []echo.MiddlewareFunc{agileecho.Limit(free)}, ok},
		{"bare-error", nil, fail},
		{"agileecho-error", []echo.MiddlewareFunc{agileecho.Limit(free)}, fail},
		{"agileecho-refused", []echo.MiddlewareFunc{agileecho.Limit(full)}, ok},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := echo.New()
			e.Use(bc.middleware...)
			e.GET("/items/:id", bc.handler)
			req := httptest.NewRequest(http.MethodGet, "/items/7", nil)
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				e.ServeHTTP(w, req)
			}
		})
	}
}
