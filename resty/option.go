package agileresty

import "github.com/agilelimiter/agilelimiter/nethttp/httpclient"

// Option configures [Limit].
type Option func(*config)

type config struct {
	verdict httpclient.Verdict
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
