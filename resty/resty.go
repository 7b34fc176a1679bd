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
//     its slot fails that attempt at once, without a network call, with an
//     error wrapping agilelimiter.ErrDeadline; a request cancelled while it
//     waits fails with the context's error. See [Refused].
//   - It wraps the client's transport with httpclient.Measure, so that each
//     attempt is timed from the send to the response headers and handed to
//     the verdict (httpclient.DefaultVerdict unless [WithVerdict] says
//     otherwise). Neither the wait for the slot nor resty's back-off between
//     retries is ever part of a sample: the clock lives inside one round trip.
//     An attempt its caller cancelled is dropped; an expired deadline counts.
//
// # Retries
//
// resty marks errors from request middlewares as not retryable, so with no
// retry conditions a refused take is returned at once, never retried as if
// the dependency had failed. Retry conditions still run for it, and they
// receive a nil *resty.Response: a condition must look at err first. resty's
// own AddRetryAfterErrorCondition, and any condition that calls a method of
// the response (StatusCode, IsError) without a nil check, panics there.
// Start every condition with
//
//	if agileresty.Refused(err) { return false }
//
// or guard on r == nil.
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
// afterwards replaces the measuring one and attempts go unmeasured. Call Limit
// once per client.
package agileresty

import (
	"errors"
	"net/http"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
	"github.com/go-resty/resty/v2"
)

// Limit paces c with lim and returns c, for chaining. It keeps the transport
// c already has (http.DefaultTransport if it has none) and wraps it. lim must
// be started (lim.Start) for the rate to move. See the package documentation
// for what changes for retries and for resty's transport settings.
func Limit(c *resty.Client, lim *agilelimiter.Limiter, opts ...Option) *resty.Client {
	cfg := config{verdict: httpclient.DefaultVerdict}
	for _, o := range opts {
		o(&cfg)
	}
	hc := c.GetClient()
	hc.Transport = httpclient.Measure(hc.Transport, lim, httpclient.WithVerdict(cfg.verdict))
	c.OnBeforeRequest(func(_ *resty.Client, req *resty.Request) error {
		if _, err := lim.TakeContext(req.Context()); err != nil {
			return &refusal{err: err}
		}
		return nil
	})
	return c
}

// refusal is the error of an attempt that got no slot. It unwraps to the
// take's error: agilelimiter.ErrDeadline or the context's error.
type refusal struct{ err error }

func (r *refusal) Error() string { return "agileresty: attempt not sent: " + r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// Refused reports whether err comes from an attempt that Limit did not send
// because it got no slot: the slot would have come after the request's
// deadline (errors.Is(err, agilelimiter.ErrDeadline) also holds), or the
// request's context ended while it waited. Retry conditions should return
// false for it.
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
