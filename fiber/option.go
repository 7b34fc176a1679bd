package agilefiber

import (
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/gofiber/fiber/v2"
)

// config is what the options set; the zero set of options is the documented
// default of each.
type config struct {
	verdict    agilelimiter.ServerVerdict
	retryAfter time.Duration
	reject     fiber.Handler
	next       func(*fiber.Ctx) bool
}

// Option configures [Limit].
type Option func(*config)

// WithVerdict sets the policy that turns a finished request into an Outcome.
// The default is [agilelimiter.DefaultServerVerdict], the one inbound policy
// shared by every adapter: the handler's own 503 lowers the limit, its 429 and
// other 4xx say nothing, the rest is a latency sample (fasthttp gives no
// client-gone signal, so Exchange.ClientGone is always false here). Write your
// own to exclude health checks, streams or cache hits, and call the default
// for the rest.
//
// The Exchange it receives is valid only during the call: its strings and
// Header are views into fiber's and fasthttp's pooled buffers, which serve
// another request once this one is done. Copy (strings.Clone) anything the
// verdict keeps. For a streamed response the verdict runs when the stream
// ends, on fasthttp's goroutine, outside fiber's chain: a recover middleware
// does not see it panic there. A nil verdict keeps the default.
func WithVerdict(v agilelimiter.ServerVerdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfter sets the Retry-After a refusal carries, rounded up to whole
// seconds and at least 1 (see [agilelimiter.NewRefusal]). The default is
// [agilelimiter.DefaultRetryAfter] (one second): long enough for in-flight
// work to drain, short enough that a client retrying on it sees the limit
// move. It applies to a custom refusal too: the header is set before the
// handler given to [WithRejection] runs.
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithRejection replaces the refusal sent when the limiter is full. The
// Retry-After header ([WithRetryAfter]) is already set on the response when h
// runs, so the retry hint survives a custom body; h may delete it
// (c.Response().Header.Del). h writes the rest of the response (status,
// other headers, body); an error it returns goes to the app's ErrorHandler as
// usual. Nothing about a refused request is observed. The default, and what a
// nil h keeps, is [agilelimiter.NewRefusal]'s response, the same in every
// adapter of this project (429, Retry-After, a short text/plain body), and
// sending it allocates nothing.
func WithRejection(h fiber.Handler) Option {
	return func(c *config) {
		if h != nil {
			c.reject = h
		}
	}
}

// WithNext sets fiber's skip filter, as the Next field of fiber's own
// middleware configs: when it returns true the request bypasses the limiter
// entirely (no slot, nothing observed). Use it for health checks and metrics
// endpoints that must answer while the service is saturated, and for
// long-lived streams (server-sent events, large downloads), which would
// otherwise hold a slot for their whole life. The default (nil) skips nothing.
func WithNext(next func(*fiber.Ctx) bool) Option {
	return func(c *config) { c.next = next }
}
