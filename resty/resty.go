// Package agileresty paces a resty v2 client's calls to one dependency with an
// agilelimiter.Limiter, taking a slot and measuring the round trip for every
// attempt, retries included.
//
// [Limit] does two things to the client:
//
//   - It registers a request middleware (OnBeforeRequest) that takes a slot
//     with lim.TakeContext(req.Context()). resty runs request middlewares once
//     per attempt (Client.execute, called by each pass of the retry loop), so
//     every retry waits for its own slot. A request whose deadline comes before
//     its slot is refused at once, without a network call, with an error
//     wrapping agilelimiter.ErrDeadline; a request cancelled while it waits is
//     refused with the context's error. See [Refused].
//   - It wraps the client's transport with httpclient.Measure, so that each
//     attempt is timed from the send to the response headers and handed to
//     the verdict (httpclient.DefaultVerdict unless [WithVerdict] says
//     otherwise). Neither the wait for the slot nor resty's back-off between
//     retries is ever part of a sample: the clock lives inside one round trip.
//     An attempt its caller cancelled is dropped; an expired deadline counts.
//     A 429 or 503 with Retry-After pauses lim for that long
//     ([WithRetryAfterPause]): a provider that asks for a pause is left
//     alone, and attempts with no time to wait it out are refused at once.
//
// # Refusals and retries
//
// A refused attempt ends the request: it is not the dependency's failure, and
// retrying it would only wait for another slot the caller has no time for. No
// retry condition and no retry hook runs for it, so conditions need no guard
// against it: resty's own AddRetryAfterErrorCondition, or one that calls
// r.StatusCode(), is safe as it stands. The request returns a non-nil
// *resty.Response with no RawResponse (StatusCode 0, IsError false) and an
// error for which [Refused] reports true (through the *url.Error that
// http.Client adds). With no retry conditions at all, resty would retry any
// other error; a refusal is returned at once.
//
// How: a request middleware that returned the refusal would leave resty
// handing its retry conditions a nil *resty.Response, on which they panic.
// Instead the middleware lets the attempt go on with a context that is
// already cancelled (its cause is the refusal); the transport Limit installed
// answers such an attempt with the refusal, without a network call; and
// resty's retry loop, which checks the request's context before any
// condition, stops. Two consequences: the returned response's
// Request.Context() is that cancelled context (the request can still be sent
// again: the next Execute starts from the context it had before), and request
// middlewares registered after Limit (and resty's own SetRateLimiter) still
// run for a refused attempt, which then sends nothing. Register middleware
// that must not run for a refused attempt, such as one fetching a token,
// before Limit.
//
// # Transport settings
//
// After Limit the client's transport is no longer an *http.Transport, so
// resty's SetProxy, RemoveProxy, SetTLSClientConfig, SetCertificates and
// SetRootCertificate* log "current transport is not an *http.Transport
// instance" and change nothing, and Client.Transport returns that error.
// Either call them before Limit (the wrapped *http.Transport keeps what they
// set), or reach the *http.Transport afterwards with [Transport] and set its
// fields directly. Call SetTransport before Limit too: a transport set
// afterwards replaces the one Limit installed, so attempts go unmeasured and
// a refused attempt reaches it (with a cancelled context, which an
// *http.Transport answers at once but a custom RoundTripper may not check).
// Call Limit once per client.
package agileresty

import (
	"context"
	"errors"
	"net/http"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
	"github.com/go-resty/resty/v2"
)

// Limit paces c with lim and returns c, for chaining. It keeps the transport
// c already has (http.DefaultTransport if it has none) and wraps it. It
// panics if lim is nil. lim must be started (lim.Start) for the rate to move.
// See the package documentation for what changes for retries and for resty's
// transport settings.
func Limit(c *resty.Client, lim *agilelimiter.Limiter, opts ...Option) *resty.Client {
	if lim == nil {
		panic("agileresty: Limit with a nil limiter")
	}
	cfg := config{verdict: httpclient.DefaultVerdict, pause: true}
	for _, o := range opts {
		o(&cfg)
	}
	hc := c.GetClient()
	hc.Transport = &transport{next: httpclient.Measure(hc.Transport, lim, httpclient.WithVerdict(cfg.verdict), httpclient.WithRetryAfterPause(cfg.pause))}
	c.OnBeforeRequest(func(_ *resty.Client, req *resty.Request) error {
		ctx := req.Context()
		if r, ok := ctx.Value(refusedKey{}).(*refused); ok {
			// An earlier Execute of this request was refused: start again
			// from the context it had then.
			ctx = r.parent
			req.SetContext(ctx)
		}
		if _, err := lim.TakeContext(ctx); err != nil {
			req.SetContext(refuse(ctx, &refusal{err: err}))
		}
		return nil
	})
	return c
}

// A refused attempt must end the request without reaching the dependency and
// without running resty's retry conditions. Returning the refusal from the
// request middleware would do neither: resty then hands its retry conditions
// a nil *resty.Response, on which its own AddRetryAfterErrorCondition (and any
// condition that calls r.StatusCode()) panics. resty's retry loop does check
// one thing before the conditions: whether the request's context is done. So
// the middleware gives a refused request a context that is already cancelled
// and carries the refusal, and lets the attempt go on; [transport] answers it
// with the refusal without a network call, resty builds its usual non-nil
// *resty.Response around that error, and the loop stops on the done context.

// refusedKey is the context key of a refused attempt.
type refusedKey struct{}

// refused is what a refused attempt's context carries: the refusal, and the
// context the request had before, to start from if it is sent again.
type refused struct {
	parent context.Context
	err    *refusal
}

// refuse returns a context derived from parent, already cancelled with err as
// its cause, that marks the attempt as refused.
func refuse(parent context.Context, err *refusal) context.Context {
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, refusedKey{}, &refused{parent: parent, err: err}))
	cancel(err)
	return ctx
}

// transport answers a refused attempt with its refusal, without a network
// call, and passes every other to next.
type transport struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if r, ok := req.Context().Value(refusedKey{}).(*refused); ok {
		// A RoundTripper must close the body, even on errors.
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, r.err
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections passes http.Client.CloseIdleConnections on to the
// wrapped RoundTripper.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Unwrap returns the wrapped RoundTripper.
func (t *transport) Unwrap() http.RoundTripper { return t.next }

// refusal is the error of an attempt that got no slot. It unwraps to the
// take's error: agilelimiter.ErrDeadline or the context's error.
type refusal struct{ err error }

func (r *refusal) Error() string { return "agileresty: attempt not sent: " + r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// Refused reports whether err comes from an attempt that Limit did not send
// because it got no slot: the slot would have come after the request's
// deadline (errors.Is(err, agilelimiter.ErrDeadline) also holds), or the
// request's context ended while it waited. Such an attempt ends the request
// before any retry condition runs (see the package documentation); use
// Refused on the error the request returns, to tell "no slot in time" from
// the dependency's failure.
func Refused(err error) bool {
	var r *refusal
	return errors.As(err, &r)
}

// Transport returns the *http.Transport under the measuring transport Limit
// installed, so that proxy and TLS settings can still be changed after Limit.
// It reports an error when the transport underneath is not an *http.Transport
// (a custom RoundTripper the caller configures directly).
func Transport(c *resty.Client) (*http.Transport, error) {
	rt := c.GetClient().Transport
	for {
		switch t := rt.(type) {
		case *http.Transport:
			return t, nil
		case interface{ Unwrap() http.RoundTripper }:
			rt = t.Unwrap()
		default:
			return nil, errors.New("agileresty: the client's transport is not an *http.Transport")
		}
	}
}
