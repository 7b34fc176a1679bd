// Package httpclient paces the requests an http.Client sends to one
// dependency with an agilelimiter.Limiter, whose rate a controller moves from
// the round trips it measures.
//
// [Wrap] returns a RoundTripper that takes a slot for every attempt (honouring
// the request's context), times the attempt from the send to the response
// headers, and hands (resp, err, d) to a [Verdict] whose outcome feeds the
// controller. The wait for the slot is never part of a sample. [Measure] is the
// timing half alone, for clients that take the slot elsewhere (agileresty).
//
// The default, [DefaultVerdict], is the shared outbound policy of
// agilelimiter.ClientOutcome and agilelimiter.ClientErrorOutcome:
//
//	never arrived    Unreachable  connection refused, DNS failure, no route, dial or TLS handshake timeout
//	429, 503         Unreachable  the dependency refused for lack of capacity
//	cache hit        Aborted      X-Cache: HIT and friends: the origin never saw it
//	everything else  Reached      including other errors: a timeout is a real, slow signal
//
// An attempt whose caller cancelled it (the request's context is
// context.Canceled when the round trip fails) is dropped before the verdict
// runs: it is a truncated measurement. A deadline that expires mid-call is a
// timeout and counts. Config.Classify is not used on this path.
//
// A wrapped RoundTripper that breaks its contract, returning neither a
// response nor an error, gets the error http.Client would give ("http:
// RoundTripper implementation (T) returned a nil *Response with a nil
// error"): the verdict and the caller see that error, and by default it
// counts as any other error after the send does (Reached).
//
// Unreachable needs something to stand above: set Config.SLOTarget so that a
// dependency that is down from the very first call (no latency sample yet)
// still drives the rate to MinRate.
package httpclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Verdict turns one attempt into an outcome for the controller: resp and err
// are what the wrapped RoundTripper returned (when resp is nil, err is not),
// d the time from the send to the response headers (or the error). It runs on
// the caller's goroutine before RoundTrip returns, and must not read or close
// resp.Body.
type Verdict func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome

// DefaultVerdict is the shared outbound policy: agilelimiter.ClientErrorOutcome
// of err when the attempt failed, agilelimiter.ClientOutcome of the status and
// headers when it got a response. It ignores d. It never panics: a nil resp
// with a nil err (which Wrap and Measure never pass; they turn it into an
// error) reads as ClientErrorOutcome(nil), Reached.
func DefaultVerdict(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
	if err != nil || resp == nil {
		return agilelimiter.ClientErrorOutcome(err)
	}
	return agilelimiter.ClientOutcome(resp.StatusCode, resp.Header)
}

// RetryAfter reports how long a 429 or 503 response asks the client to wait:
// its Retry-After header, as delay-seconds or an HTTP-date (see
// agilelimiter.ParseRetryAfter). It reports false for any other status, a nil
// response, and a missing or malformed header.
func RetryAfter(resp *http.Response) (time.Duration, bool) {
	if resp == nil {
		return 0, false
	}
	return agilelimiter.ClientRetryAfter(resp.StatusCode, resp.Header, time.Now())
}

// Wrap returns rt behind lim: every attempt waits for a slot with
// lim.TakeContext(req.Context()), then is measured as by [Measure]. A request
// whose deadline comes before its slot fails at once, without a network call,
// with an error wrapping agilelimiter.ErrDeadline (errors.Is sees it through
// the *url.Error http.Client adds); a request cancelled while it waits returns
// the context's error. Neither consumes a slot nor reaches the verdict. A 429
// or 503 with Retry-After pauses lim for that long (see
// [WithRetryAfterPause]). A nil rt means http.DefaultTransport. lim must be
// started (lim.Start) for the rate to move. It panics if lim is nil.
func Wrap(rt http.RoundTripper, lim *agilelimiter.Limiter, opts ...Option) http.RoundTripper {
	if lim == nil {
		panic("httpclient: Wrap with a nil limiter")
	}
	return newTransport(rt, lim, opts, true)
}

// Measure returns rt measured for lim without taking slots: each attempt is
// timed from the send to the response headers and its verdict recorded with
// lim.Record. Use it when the slot is taken elsewhere, once per attempt (resty's
// request middleware does this in agileresty); otherwise use [Wrap]. A 429 or
// 503 with Retry-After pauses lim, as with Wrap. A nil rt means
// http.DefaultTransport. It panics if lim is nil.
func Measure(rt http.RoundTripper, lim *agilelimiter.Limiter, opts ...Option) http.RoundTripper {
	if lim == nil {
		panic("httpclient: Measure with a nil limiter")
	}
	return newTransport(rt, lim, opts, false)
}

func newTransport(rt http.RoundTripper, lim *agilelimiter.Limiter, opts []Option, take bool) *transport {
	if rt == nil {
		rt = http.DefaultTransport
	}
	c := config{verdict: DefaultVerdict}
	for _, o := range opts {
		o(&c)
	}
	return &transport{next: rt, lim: lim, verdict: c.verdict, take: take, pause: !c.noPause}
}

type transport struct {
	next    http.RoundTripper
	lim     *agilelimiter.Limiter
	verdict Verdict
	take    bool
	pause   bool // honour Retry-After on 429 and 503
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if t.take {
		if _, err := t.lim.TakeContext(ctx); err != nil {
			// A RoundTripper must close the body, even on errors.
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, err
		}
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	d := time.Since(start)
	if resp == nil && err == nil {
		// A broken RoundTripper: answer as http.Client would, so that the
		// verdict and the caller see an error rather than a nil response.
		err = fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", t.next)
	}
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return resp, err
	}
	t.lim.Record(t.verdict(resp, err, d), d)
	if t.pause && resp != nil {
		now := time.Now()
		if wait, ok := agilelimiter.ClientRetryAfter(resp.StatusCode, resp.Header, now); ok && wait > 0 {
			t.lim.PauseUntil(now.Add(wait))
		}
	}
	return resp, err
}

// CloseIdleConnections passes http.Client.CloseIdleConnections on to the
// wrapped RoundTripper when it supports it.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Unwrap returns the wrapped RoundTripper.
func (t *transport) Unwrap() http.RoundTripper { return t.next }
