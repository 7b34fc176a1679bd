package httpserver_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

// discard is a ResponseWriter that costs nothing, so the benchmarks measure
// the wrapper and not a recorder.
type discard struct{ h http.Header }

func (d discard) Header() http.Header       { return d.h }
func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) WriteHeader(int)             {}
func newDiscard() discard                   { return discard{h: http.Header{}} }

var okBody = []byte("ok")

func okHandler(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200); w.Write(okBody) }

// BenchmarkWrap compares a request through Wrap with the bare handler in the
// same run: the difference is the wrapper's cost, and its only allocation is
// the ResponseWriter capture, with the timed request body in the same
// allocation.
func BenchmarkWrap(b *testing.B) {
	req, _ := http.NewRequest("GET", "/", nil)
	bare := http.HandlerFunc(okHandler)
	newLim := func() *agilelimiter.ConcurrencyLimiter {
		return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
	}
	run := func(h http.Handler) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			w := newDiscard()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		}
	}
	// The wrapper reads the clock twice per request (time.Now, time.Since);
	// on a VM without a fast clock source that is most of its cost.
	b.Run("clock", func(b *testing.B) {
		var d time.Duration
		for b.Loop() {
			d += time.Since(time.Now())
		}
		_ = d
	})
	b.Run("bare", run(bare))
	b.Run("wrapped", run(httpserver.Wrap(bare, newLim())))
	// A request with a body: the wrapper times the handler's reads of it.
	upload, _ := http.NewRequest("POST", "/", nil)
	upload.Body = io.NopCloser(strings.NewReader(""))
	b.Run("wrapped-body", func(b *testing.B) {
		b.ReportAllocs()
		h, w := httpserver.Wrap(bare, newLim()), newDiscard()
		for b.Loop() {
			h.ServeHTTP(w, upload)
		}
	})

	// A refusal is built once in Wrap, so refusing allocates nothing.
	full := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	full.TryTake()
	b.Run("refused", run(httpserver.Wrap(bare, full)))
	full.Release()

	parallel := func(h http.Handler) func(*testing.B) {
		return func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				w := newDiscard()
				for pb.Next() {
					h.ServeHTTP(w, req)
				}
			})
		}
	}
	b.Run("bare-parallel", parallel(bare))
	b.Run("wrapped-parallel", parallel(httpserver.Wrap(bare, newLim())))
}
