package httpclient

// Option configures [Wrap] and [Measure].
type Option func(*config)

type config struct {
	verdict Verdict
}

// WithVerdict sets the function that turns one attempt into an outcome. The
// default is [DefaultVerdict], the shared outbound policy; a nil v keeps it.
func WithVerdict(v Verdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}
