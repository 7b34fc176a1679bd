package agilegin

import (
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/gin-gonic/gin"
)

// config holds what the options set. The zero value of every field means the
// default documented on its option.
type config struct {
	verdict    agilelimiter.ServerVerdict
	retryAfter time.Duration
	rejection  gin.HandlerFunc
	skip       func(*gin.Context) bool
}

// Option configures [Limit].
type Option func(*config)

func newConfig(opts []Option) config {
	c := config{
		verdict:    agilelimiter.DefaultServerVerdict,
		retryAfter: agilelimiter.DefaultRetryAfter,
	}
	for _, o := range opts {
		o(&c)
	}
	if c.verdict == nil {
		c.verdict = agilelimiter.DefaultServerVerdict
	}
	return c
}

// WithVerdict sets the function that turns a finished request into an
// Outcome for the controller. The default, and what nil means, is
// [agilelimiter.DefaultServerVerdict]: the shared policy every adapter uses
// (the handler's own 503 lowers the limit; its 429 and other 4xx, and a
// request whose client went away, say nothing; the rest are latency samples).
// Write your own to treat health checks, streams or cache hits specially, and
// call the default for the rest. The verdict runs on the request's goroutine
// after the rest of the chain has returned; the Exchange it gets is valid only
// during the call, and its Duration leaves out the time spent waiting for the
// client's request body.
func WithVerdict(v agilelimiter.ServerVerdict) Option {
	return func(c *config) { c.verdict = v }
}

// WithRetryAfter sets the Retry-After of a refusal, rounded up to whole
// seconds and at least one (see [agilelimiter.NewRefusal]). The default is
// [agilelimiter.DefaultRetryAfter], one second: long enough for in-flight
// work to drain, short enough that a retrying client sees the limit move. It
// applies to a custom refusal too: the header is set before the function given
// to [WithRejection] runs.
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithRejection replaces the default refusal (429, Retry-After and a short
// plain-text body) with h, for a JSON body or a different status. The
// Retry-After header ([WithRetryAfter]) is already set on the response when h
// runs, so the retry hint survives a custom body; h may delete it. h writes
// the rest of the response; Limit aborts the chain after it returns, so the
// route's handler never runs whatever h does. Nil, the default, keeps the
// default refusal, which is the same in every adapter of this project.
func WithRejection(h gin.HandlerFunc) Option {
	return func(c *config) { c.rejection = h }
}

// WithSkip sets a filter, in the manner of gin's LoggerConfig.Skip: a request
// for which skip reports true bypasses the limiter entirely (it takes no slot,
// is never refused and is not observed). Use it for health checks and metrics
// endpoints that must answer while the service is saturated. Nil, the default,
// limits every request.
func WithSkip(skip func(*gin.Context) bool) Option {
	return func(c *config) { c.skip = skip }
}
