package httpclient

// Option configures [Wrap] and [Measure].
type Option func(*config)

type config struct {
	verdict Verdict
	noPause bool
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

// WithRetryAfterPause says whether a 429 or 503 with Retry-After pauses the
// limiter for that long (agilelimiter.ClientRetryAfter,
// Limiter.PauseUntil): no call goes out until then, and callers whose
// deadline comes first are refused at once. On by default: a provider with
// quotas that asks for 30 s and is sent MinRate meanwhile often extends the
// ban. Off, the refusal still lowers the rate like any other.
func WithRetryAfterPause(on bool) Option {
	return func(c *config) { c.noPause = !on }
}
