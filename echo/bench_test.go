package agileecho_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
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

// rewind is a request body the benchmark loop rewinds rather than allocates.
type rewind struct{ strings.Reader }

func (*rewind) Close() error { return nil }

// passThrough is the cheapest middleware echo can run: it shows what echo
// itself charges per middleware (it builds the chain on every request).
func passThrough(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error { return next(c) }
}

// BenchmarkRequest serves one request through echo: bare, behind a
// pass-through middleware, and behind the adapter (admitted, failing with an
// HTTPError, with a request body, refused in each way). Compare the adapter's rows with the bare and
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
		body       bool
	}{
		{"bare", nil, ok, false},
		{"passthrough", []echo.MiddlewareFunc{passThrough}, ok, false},
		{"agileecho", []echo.MiddlewareFunc{agileecho.Limit(free)}, ok, false},
		{"bare-error", nil, fail, false},
		{"agileecho-error", []echo.MiddlewareFunc{agileecho.Limit(free)}, fail, false},
		{"bare-body", nil, ok, true},
		{"agileecho-body", []echo.MiddlewareFunc{agileecho.Limit(free)}, ok, true},
		{"agileecho-refused", []echo.MiddlewareFunc{agileecho.Limit(full)}, ok, false},
		{"agileecho-refused-httperror", []echo.MiddlewareFunc{agileecho.Limit(full, agileecho.WithHTTPError())}, ok, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := echo.New()
			e.Use(bc.middleware...)
			e.Match([]string{http.MethodGet, http.MethodPost}, "/items/:id", bc.handler)
			req := httptest.NewRequest(http.MethodGet, "/items/7", nil)
			body := &rewind{}
			if bc.body {
				req = httptest.NewRequest(http.MethodPost, "/items/7", body)
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				body.Reset("name=ada")
				e.ServeHTTP(w, req)
			}
		})
	}
}
