package httpserver

import (
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Option configures [Wrap] and [Middleware].
type Option func(*config)

type config struct {
	verdict    Verdict
	retryAfter time.Duration
	skip       func(*http.Request) bool
	reject     http.Handler
}

func newConfig(opts []Option) config {
	c := config{verdict: DefaultVerdict, retryAfter: agilelimiter.DefaultRetryAfter}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithVerdict sets the function that turns a finished request into an
// outcome. The default is [DefaultVerdict], the shared inbound policy; a nil
// v keeps it.
func WithVerdict(v Verdict) Option {
	return func(c *config) {
		if v != nil {
			c.verdict = v
		}
	}
}

// WithRetryAfter sets the Retry-After a refusal carries, rounded up to whole
// seconds and at least 1 (a Retry-After of 0 invites an instant retry storm).
// The default is agilelimiter.DefaultRetryAfter, 1 second: long enough for
// in-flight work to drain, short enough that a client retrying on it sees the
// limit move.
func WithRetryAfter(d time.Duration) Option {
	return func(c *config) { c.retryAfter = d }
}

// WithSkip sets a filter for requests that bypass the limiter entirely:
// when skip returns true the request runs without a slot, is never refused
// and is not observed. Use it for health checks, metrics and long-lived
// streams. The default is nil: every request is limited.
func WithSkip(skip func(*http.Request) bool) Option {
	return func(c *config) { c.skip = skip }
}

// WithRejection sets the handler that answers a refused request, in place of
// the default 429 with a one-line text/plain body. Retry-After is already set
// on the response headers when it runs; it writes the status and the body.
// The default is nil: the standard refusal.
func WithRejection(h http.Handler) Option {
	return func(c *config) { c.reject = h }
}

// rejection returns the handler for refused requests. The refusal is built
// once here, so refusing a request allocates nothing.
func (c config) rejection() http.Handler {
	rf := agilelimiter.NewRefusal(c.retryAfter)
	return &refusal{
		retryAfter:  []string{rf.RetryAfter},
		contentType: []string{"text/plain; charset=utf-8"},
		nosniff:     []string{"nosniff"},
		body:        []byte(rf.Body),
		custom:      c.reject,
	}
}

// refusal writes agilelimiter's refusal. The header values are shared
// one-element slices (capacity 1, so an Add copies rather than writes through)
// assigned straight into the header map: http.Header.Set would allocate a new
// one per refusal.
type refusal struct {
	retryAfter, contentType, nosniff []string
	body                             []byte
	custom                           http.Handler
}

func (rf *refusal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Retry-After"] = rf.retryAfter
	if rf.custom != nil {
		rf.custom.ServeHTTP(w, r)
		return
	}
	h["Content-Type"] = rf.contentType
	h["X-Content-Type-Options"] = rf.nosniff
	w.WriteHeader(agilelimiter.RefusalStatus)
	_, _ = w.Write(rf.body)
}
