package httpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

func Example() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	lim.Start() // the controller moves the limit from what it measures
	defer lim.Stop()

	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello\n")
	})
	mux := http.NewServeMux()
	mux.Handle("/", httpserver.Wrap(api, lim))
	mux.Handle("/debug/limiter", httpserver.StatsHandler(lim)) // outside the budget

	get := func() *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec
	}
	fmt.Println(get().Code)

	lim.TryTake() // stand-in for a slow request holding the only slot
	rec := get()
	fmt.Println(rec.Code, "Retry-After:", rec.Header().Get("Retry-After"))
	lim.Release()
	// Output:
	// 200
	// 429 Retry-After: 1
}

// A verdict that keeps health checks and cache hits out of the controller's
// samples and leaves the rest to the shared policy.
func ExampleWithVerdict() {
	verdict := func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
		if r.URL.Path == "/healthz" || httpserver.IsCacheHitHeader(h) {
			return agilelimiter.Aborted
		}
		return httpserver.DefaultVerdict(r, status, h, d)
	}
	printed := func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
		o := verdict(r, status, h, d)
		fmt.Println(r.URL.Path, status, o)
		return o
	}

	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/cached", func(w http.ResponseWriter, r *http.Request) { w.Header().Set("X-Cache", "HIT") })
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "done") })
	mux.HandleFunc("/busy", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64})
	h := httpserver.Wrap(mux, lim, httpserver.WithVerdict(printed))

	for _, path := range []string{"/healthz", "/cached", "/work", "/busy", "/missing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	// Output:
	// /healthz 200 Aborted
	// /cached 200 Aborted
	// /work 200 Reached
	// /busy 503 Unreachable
	// /missing 404 Aborted
}
