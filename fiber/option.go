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
// shared by every adapter: the handler's own 429/503 lowers the limit, other
// 4xx say nothing, the rest is a latency sample. Write your own to exclude
// health checks, streams or cache hits, and call the default for the rest.
//
// The Exchange it receives is valid only during the call: its strings and
// Header are views into fiber's pooled context, which serves another request
// once the handler returns. Copy (strings.Clone) anything the verdict keeps.
// A nil verdict keeps the default.
func WithVerdict(v agilelimiter.ServerVerdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfter sets the Retry-After a refusal carries, rounded up to whole
// seconds and at least 1. The default is [agilelimiter.DefaultRetryAfter]
// (one second): long enough for in-flight work to drain, short enough that a
// client retrying on it sees the limit move. It has no effect on a custom
// refusal set by [WithRejection].
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithRejection replaces the refusal sent when the limiter is full. The
// handler writes the whole response (status, headers, body); an error it
// returns goes to the app's ErrorHandler as usual. Nothing about a refused
// request is observed. The default sends [agilelimiter.RefusalStatus] (429)
// with Retry-After and a short text/plain body, and allocates nothing. A nil
// handler keeps the default.
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
// endpoints that must answer while the service is saturated. The default (nil)
// skips nothing.
func WithNext(next func(*fiber.Ctx) bool) Option {
	return func(c *config) { c.next = next }
}
