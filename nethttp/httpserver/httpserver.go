// Package httpserver caps how many requests an http.Handler serves at once,
// with a limit an agilelimiter.ConcurrencyLimiter moves from the latency it
// measures.
//
// [Wrap] (or [Middleware] for routers that take func(http.Handler) http.Handler)
// admits a request if a slot is free and refuses it at once if not, with
// agilelimiter's refusal (agilelimiter.NewRefusal): 429 Too Many Requests, a
// Retry-After header (1 second unless [WithRetryAfter] says otherwise) and a
// one-line text/plain body; the handler never runs and nothing is observed.
// Nothing queues.
//
// An admitted request runs the handler, returns its slot on every path (a
// panic included: the slot comes back and the panic propagates unchanged), and
// hands its final status, response headers and duration to a [Verdict], whose
// outcome feeds the controller. The default, [DefaultVerdict], is the shared
// inbound policy of agilelimiter.DefaultServerVerdict:
//
//	client went away  Aborted      the request's context was cancelled when the handler returned
//	503               Unreachable  the handler shed load (a pool ran dry): the limit comes down
//	429, other 4xx    Aborted      about the client: a per-client quota, a flood of cheap 404s
//	everything else   Reached      the duration is a sample; a panic counts as a 500
//
// The duration leaves out the time the handler spent waiting for the client
// to send the request body (agilelimiter.TimedBody): a slow upload is the
// client's time, and must not read as a slow service.
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
// without writing one), h the response headers and d the handler's run time
// less the time it spent waiting for the client to send the request body. It
// runs after the handler returns, on the request's goroutine, before the
// slot is released.
type Verdict func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome

// DefaultVerdict is the shared inbound policy, agilelimiter.DefaultServerVerdict:
// a request whose client went away (its context cancelled when the handler
// returned) is Aborted, and otherwise agilelimiter.ServerOutcome of the final
// status decides. A context that ended by its deadline is not a client gone
// away: an outer timeout the handler outran is the service being slow, and
// counts. It ignores the duration; r may be nil.
func DefaultVerdict(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
	e := agilelimiter.Exchange{Status: status, Header: h, Duration: d}
	if r != nil {
		e.Method = r.Method
		if r.URL != nil {
			e.Route = r.URL.Path
		}
		e.ClientGone = agilelimiter.ClientGone(r.Context())
	}
	return agilelimiter.DefaultServerVerdict(e)
}

// IsCacheHitHeader reports whether the response headers say a cache answered
// without the origin (X-Cache, X-Cache-Status, CF-Cache-Status and the other
// common cache headers reading HIT or STALE, case-insensitively). It is
// agilelimiter.IsCacheHit, for verdicts that want to skip cached answers.
func IsCacheHitHeader(h http.Header) bool { return agilelimiter.IsCacheHit(h) }

// Wrap returns h behind lim: at most lim.Limit() requests run in h at once,
// the rest are refused at once with 429 and Retry-After. See the package
// documentation for what is observed. lim must be started (lim.Start) for the
// limit to move; until then it stays at its initial value. It panics if lim is
// nil.
func Wrap(h http.Handler, lim *agilelimiter.ConcurrencyLimiter, opts ...Option) http.Handler {
	if lim == nil {
		panic("httpserver: Wrap with a nil limiter")
	}
	return wrap(h, lim, newConfig(opts))
}

func wrap(h http.Handler, lim *agilelimiter.ConcurrencyLimiter, c config) http.Handler {
	return &handler{next: h, lim: lim, verdict: c.verdict, skip: c.skip, reject: c.rejection()}
}

// Middleware returns Wrap as a func(http.Handler) http.Handler, for routers
// and chains that take middleware in that form (chi, gorilla/mux, alice). One
// call makes one budget: every handler it wraps shares lim. It panics if lim
// is nil.
func Middleware(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) func(http.Handler) http.Handler {
	if lim == nil {
		panic("httpserver: Middleware with a nil limiter")
	}
	c := newConfig(opts)
	return func(h http.Handler) http.Handler { return wrap(h, lim, c) }
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

	x := &exchange{w: captureWriter{ResponseWriter: w}}
	body := r.Body
	if body != nil && body != http.NoBody {
		x.body.Reset(body)
		r.Body = &x.body
	}
	start := time.Now()
	done := false
	// The verdict runs in a defer so that a panicking handler is recorded too
	// (as a 500) while the panic keeps unwinding with its own value and stack.
	defer func() {
		// The client's upload is the client's time, not the service's.
		d := x.body.Since(start)
		r.Body = body
		status := x.w.status
		switch {
		case !done:
			status = http.StatusInternalServerError
		case status == 0:
			status = http.StatusOK
		}
		h.lim.Record(h.verdict(r, status, w.Header(), d), d)
	}()
	h.next.ServeHTTP(&x.w, r)
	done = true
}

// exchange is what Wrap allocates for an admitted request, in one
// allocation: the writer that captures the final status and the body that
// times the client's upload.
type exchange struct {
	w    captureWriter
	body agilelimiter.TimedBody
}
