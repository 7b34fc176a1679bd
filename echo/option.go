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
	httpError  bool
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
// is the project's one inbound policy: the handler's own 503 backs the limit
// off; its 429 and other 4xx, and a request whose client went away, say
// nothing about capacity; the rest are samples. Write a verdict to treat
// health checks, streams or cache hits specially and call the default for the
// rest. It runs on the request's goroutine after the response status is final;
// the Exchange it gets is valid only during the call, and its Duration leaves
// out the time spent waiting for the client's request body. Nil keeps the
// default.
func WithVerdict(v agilelimiter.ServerVerdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfter sets the Retry-After of a refusal, rounded up to whole
// seconds and at least one second (a zero invites an instant retry storm).
// The default is [agilelimiter.DefaultRetryAfter], one second: long enough for
// in-flight work to drain, short enough that a retrying client sees the limit
// move. It applies to every kind of refusal: the default one, [WithHTTPError]'s,
// and a custom one, on whose response the header is set before the function
// given to [WithRejection] runs.
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithRejection replaces the default refusal (status
// [agilelimiter.RefusalStatus], a Retry-After header and a short plain-text
// body) with fn, run instead of the handler when the limiter is full. The
// Retry-After header ([WithRetryAfter]) is already set on the response when
// fn runs, so the retry hint survives a custom body; fn may delete it. What fn
// returns is returned to echo, so an error goes to echo's HTTPErrorHandler.
// Nothing is observed for a refused request whatever fn writes. It takes
// precedence over [WithHTTPError]. Nil keeps the default.
func WithRejection(fn func(echo.Context) error) Option {
	return func(c *config) { c.rejection = fn }
}

// WithHTTPError makes a refusal echo's way: the middleware sets the
// Retry-After header on the response and returns an *echo.HTTPError with
// status [agilelimiter.RefusalStatus] and, as its message, the default
// refusal's text without its trailing newline. Echo hands it to the
// application's HTTPErrorHandler (through any middleware outside the
// limiter), so an error handler that renders every error as JSON renders
// refusals too. Each refusal then costs what the error handler costs, and
// allocates at least its HTTPError.
//
// It is not the default: by default the middleware writes the refusal
// itself, so that it is the same bytes behind every adapter of this project
// and never depends on the application's error handler, which may log, render
// a template or fail at the moment the server is busiest. [WithRejection]
// takes precedence over it.
func WithHTTPError() Option {
	return func(c *config) { c.httpError = true }
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
