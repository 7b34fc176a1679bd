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
// seconds and at least 1 (a Retry-After of 0 invites an instant retry storm);
// a huge d saturates rather than wrapping. It applies beside [WithRejection]
// too: the header is set before the custom rejection runs. The default is
// agilelimiter.DefaultRetryAfter, 1 second: long enough for in-flight work to
// drain, short enough that a client retrying on it sees the limit move.
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
// agilelimiter's refusal (429, a one-line text/plain body), for a service
// whose errors have their own format. Retry-After (see [WithRetryAfter]) is
// already set on the response headers when it runs, so the retry hint is
// never lost; it writes the status and the body. The default is nil:
// agilelimiter's refusal.
func WithRejection(h http.Handler) Option {
	return func(c *config) { c.reject = h }
}

// rejection returns the handler for refused requests. The refusal is built
// once here, so refusing a request allocates nothing.
func (c config) rejection() http.Handler {
	rf := agilelimiter.NewRefusal(c.retryAfter)
	return &refusal{
		header:     rf.Header,
		retryAfter: []string{rf.RetryAfter},
		status:     rf.Status,
		body:       []byte(rf.Body),
		custom:     c.reject,
	}
}

// refusal writes agilelimiter's refusal: exactly its headers, its status and
// its body. The header values are the refusal's shared one-element slices
// (capacity 1, so an Add copies rather than writes through) assigned straight
// into the header map: http.Header.Set would allocate a new one per refusal.
// A custom rejection gets Retry-After alone, in a slice of its own, so that
// nothing it does reaches the default refusal's.
type refusal struct {
	header     map[string][]string
	retryAfter []string
	status     int
	body       []byte
	custom     http.Handler
}

func (rf *refusal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	if rf.custom != nil {
		h["Retry-After"] = rf.retryAfter
		rf.custom.ServeHTTP(w, r)
		return
	}
	for k, v := range rf.header {
		h[k] = v
	}
	w.WriteHeader(rf.status)
	_, _ = w.Write(rf.body)
}
