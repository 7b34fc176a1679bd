package agileecho

import (
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// config holds what the options set; newConfig fills the defaults.
type config struct {
	verdict    agilelimiter.ServerVerdict
	retryAfter time.Duration
	rejection  func(echo.Context) error
	skipper    middleware.Skipper
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
	return c
}

// WithVerdict sets the function that turns a finished request into an
// [agilelimiter.Outcome]. The default, [agilelimiter.DefaultServerVerdict],
// is the project's one inbound policy: the handler's own 429 or 503 backs the
// limit off, other 4xx say nothing about capacity, the rest are samples. Write
// a verdict to treat health checks, streams or cache hits specially and call
// the default for the rest. It runs on the request's goroutine after the
// response status is final; the Exchange it gets is valid only during the
// call. Nil keeps the default.
func WithVerdict(v agilelimiter.ServerVerdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfter sets the Retry-After of the default refusal, rounded up to
// whole seconds and at least one second (a zero invites an instant retry
// storm). The default is [agilelimiter.DefaultRetryAfter], one second: long
// enough for in-flight work to drain, short enough that a retrying client sees
// the limit move. It does not affect a refusal set by [WithRejection].
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithRejection replaces the default refusal (status
// [agilelimiter.RefusalStatus], a Retry-After header and a short plain-text
// body) with fn, run instead of the handler when the limiter is full. What fn
// returns is returned to echo, so an error goes to echo's HTTPErrorHandler.
// Nothing is observed for a refused request whatever fn writes. Nil keeps the
// default.
func WithRejection(fn func(echo.Context) error) Option {
	return func(c *config) { c.rejection = fn }
}

// WithSkipper sets echo's usual filter: requests for which skipper reports
// true bypass the limiter entirely (no slot, never refused, never observed),
// for health checks and metrics that must answer while the service is
// saturated. The default skips nothing, because every route should share the
// one budget unless told otherwise. The router has run when it is called, so
// c.Path() holds the route pattern. Nil keeps the default.
func WithSkipper(skipper middleware.Skipper) Option {
	return func(c *config) { c.skipper = skipper }
}
