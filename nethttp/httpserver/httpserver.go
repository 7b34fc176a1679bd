// Package httpserver caps how many requests an http.Handler serves at once,
// with a limit an agilelimiter.ConcurrencyLimiter moves from the latency it
// measures.
//
// [Wrap] (or [Middleware] for routers that take func(http.Handler) http.Handler)
// admits a request if a slot is free and refuses it at once if not: the client
// gets 429 Too Many Requests, a Retry-After header (1 second unless
// [WithRetryAfter] says otherwise) and a one-line text/plain body; the handler
// never runs and nothing is observed. Nothing queues.
//
// An admitted request runs the handler, returns its slot on every path (a
// panic included: the slot comes back and the panic propagates unchanged), and
// hands its final status, response headers and duration to a [Verdict], whose
// outcome feeds the controller. The default, [DefaultVerdict], is the shared
// inbound policy of agilelimiter.ServerOutcome:
//
//	429, 503         Unreachable  the handler shed load (a pool ran dry): the limit comes down
//	other 4xx        Aborted      a flood of cheap 404s or 401s is not a fast, healthy service
//	everything else  Reached      the duration is a sample; a panic counts as a 500
//
// Health checks, metrics, long-lived streams, websockets and cache hits are the
// caller's to judge: skip them with [WithSkip], or write a Verdict that returns
// Aborted for them and calls DefaultVerdict for the rest. A websocket or an
// endless stream inside the wrapper holds its slot for its whole life.
//
// Apply it once, around the whole protected subtree, so every route shares one
// budget. Put it inside the recovery and logging middleware: recovery outside
// turns a panic into the 500 the client sees after the slot is back, and the
// access log then records refusals too. Mount [StatsHandler] outside it, so it
// answers while the service is saturated.
package httpserver

import (
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Verdict turns a finished request into an outcome for the controller: r is
// the request, status the status the client received (200 when the handler
// wrote nothing, 500 when it panicked, 101 when it hijacked the connection
// without writing one), h the response headers and d the handler's run time.
// It runs after the handler returns, on the request's goroutine.
type Verdict func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome

// DefaultVerdict is the shared inbound policy: agilelimiter.ServerOutcome of
// the final status. It ignores the request, the headers and the duration.
func DefaultVerdict(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
	return agilelimiter.ServerOutcome(status)
}

// IsCacheHitHeader reports whether the response headers say a cache answered
// without the origin (X-Cache, X-Cache-Status, CF-Cache-Status and the other
// common cache headers reading HIT or STALE, case-insensitively). It is
// agilelimiter.IsCacheHit, for verdicts that want to skip cached answers.
func IsCacheHitHeader(h http.Header) bool { return agilelimiter.IsCacheHit(h) }

// Wrap returns h behind lim: at most lim.Limit() requests run in h at once,
// the rest are refused at once with 429 and Retry-After. See the package
// documentation for what is observed. lim must be started (lim.Start) for the
// limit to move; until then it stays at its initial value.
func Wrap(h http.Handler, lim *agilelimiter.ConcurrencyLimiter, opts ...Option) http.Handler {
	c := newConfig(opts)
	return &handler{next: h, lim: lim, verdict: c.verdict, skip: c.skip, reject: c.rejection()}
}

// Middleware returns Wrap as a func(http.Handler) http.Handler, for routers
// and chains that take middleware in that form (chi, gorilla/mux, alice). One
// call makes one budget: every handler it wraps shares lim.
func Middleware(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler { return Wrap(h, lim, opts...) }
}

type handler struct {
	next    http.Handler
	lim     *agilelimiter.ConcurrencyLimiter
	verdict Verdict
	skip    func(*http.Request) bool
	reject  http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.skip != nil && h.skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	if !h.lim.TryTake() {
		h.reject.ServeHTTP(w, r)
		return
	}
	defer h.lim.Release()

	cw := &captureWriter{ResponseWriter: w}
	start := time.Now()
	done := false
	// The verdict runs in a defer so that a panicking handler is recorded too
	// (as a 500) while the panic keeps unwinding with its own value and stack.
	defer func() {
		d := time.Since(start)
		status := cw.status
		switch {
		case !done:
			status = http.StatusInternalServerError
		case status == 0:
			status = http.StatusOK
		}
		h.lim.Record(h.verdict(r, status, w.Header(), d), d)
	}()
	h.next.ServeHTTP(cw, r)
	done = true
}
