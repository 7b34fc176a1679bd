package agileresty

import "github.com/agilelimiter/agilelimiter/nethttp/httpclient"

// Option configures [Limit].
type Option func(*config)

type config struct {
	verdict httpclient.Verdict
	pause   bool
}

// WithVerdict sets the function that turns one attempt into an outcome; it
// is the same type and contract as in httpclient. The default is
// httpclient.DefaultVerdict, the shared outbound policy; a nil v keeps it.
func WithVerdict(v httpclient.Verdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfterPause says whether a 429 or 503 with Retry-After pauses the
// limiter for that long, as httpclient.WithRetryAfterPause: no attempt goes
// out until then, and an attempt whose deadline comes first is refused at
// once (a refusal, which ends the request: see the package documentation).
// On by default, for the reason given there.
func WithRetryAfterPause(on bool) Option {
	return func(c *config) { c.pause = on }
}
