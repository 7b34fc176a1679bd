package agilelimiter

import (
	"errors"
	"net"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// This file is the one place that says what an HTTP exchange means to the
// controller and what a refusal looks like. The adapters (nethttp, gin, echo,
// fiber, resty) only translate their framework's response into these calls.
//
// Inbound (a finished request the service handled), by ServerOutcome:
//
//	429, 503               Unreachable  the handler shed load: a pool ran dry
//	other 4xx              Aborted      cheap refusals say nothing about capacity
//	everything else        Reached      1xx, 2xx, 3xx, 5xx, and panics (as 500)
//
// Outbound (one attempt at a dependency), by ClientOutcome and ClientErrorOutcome:
//
//	never arrived          Unreachable  refused, DNS failure, no route, dial or TLS handshake timeout
//	429, 503               Unreachable  the dependency refused for lack of capacity
//	a cache answered       Aborted      X-Cache: HIT and friends (see IsCacheHit)
//	everything else        Reached      including other errors: a timeout is a real signal

// HeaderGetter reads one header. http.Header satisfies it; an adapter for a
// framework with its own header type wraps it in a one-method type.
type HeaderGetter interface {
	Get(key string) string
}

// Exchange is one finished inbound request as a framework adapter saw it. It
// is passed by value to a [ServerVerdict] and is valid only during that call:
// an adapter over pooled contexts (fiber) may hand in views of reused buffers.
type Exchange struct {
	// Method and Route are the request's method and matched route pattern
	// ("/users/:id"), or the path when the framework has no pattern.
	Method, Route string
	// Status is the status the client receives: after the framework's error
	// handler has turned a returned error into a response, and 500 for a panic.
	Status int
	// Header holds the response headers. It may be nil.
	Header HeaderGetter
	// Err is the error the handler returned or recorded, if any. After a
	// panic it is the panic value when that is an error and the adapter saw
	// it (adapters that never recover leave it nil): Panicked is the signal
	// to rely on.
	Err error
	// Panicked reports whether the handler panicked (Status is then 500).
	Panicked bool
	// Duration is the handler's run time, up to the moment it returned and
	// before any error page was rendered.
	Duration time.Duration
}

// ServerVerdict turns a finished inbound exchange into an Outcome. Write one
// to treat health checks, streams or cache hits specially, and call
// [DefaultServerVerdict] for the rest.
type ServerVerdict func(Exchange) Outcome

// DefaultServerVerdict is the inbound policy: [ServerOutcome] of the status
// the client received.
func DefaultServerVerdict(e Exchange) Outcome { return ServerOutcome(e.Status) }

// ServerOutcome reads the final status of a request the service handled. The
// handler's own 429 or 503 means it shed load (a pool ran dry): Unreachable,
// so the limit comes down. Any other 4xx is Aborted: a flood of instant 404s or
// 401s must not read as a fast, healthy service and raise the limit. The rest
// is Reached.
func ServerOutcome(status int) Outcome {
	switch {
	case status == 429 || status == 503:
		return Unreachable
	case status >= 400 && status < 500:
		return Aborted
	}
	return Reached
}

// ClientOutcome reads a response a dependency sent to one attempt. 429 and 503
// mean it refused for lack of capacity: Unreachable. A response a cache
// answered ([IsCacheHit]) never reached the origin: Aborted. The rest is
// Reached. h may be nil.
func ClientOutcome(status int, h HeaderGetter) Outcome {
	if status == 429 || status == 503 {
		return Unreachable
	}
	if h != nil && IsCacheHit(h) {
		return Aborted
	}
	return Reached
}

// ClientErrorOutcome reads the error of an attempt that got no response.
// Errors that show the request never reached the dependency are Unreachable:
// connection refused, DNS failure, no route to host or network, a dial or
// connect timeout, a TLS handshake timeout. Any other error is Reached: a
// timeout after the request was sent says the dependency took at least that
// long. A nil error is Reached.
//
// The caller-cancelled case is not decided here: adapters drop such attempts
// before any verdict runs.
func ClientErrorOutcome(err error) Outcome {
	if err == nil {
		return Reached
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTDOWN) {
		return Unreachable
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return Unreachable
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return Unreachable
	}
	// net/http reports a handshake timeout with an unexported type; its text
	// is stable ("net/http: TLS handshake timeout").
	if strings.Contains(err.Error(), "TLS handshake timeout") {
		return Unreachable
	}
	return Reached
}

// cacheHeaders are the response headers caches use to say whether they
// answered: Varnish, Fastly, CloudFront and Squid (X-Cache), nginx
// (X-Cache-Status, X-Proxy-Cache), Cloudflare (CF-Cache-Status), Drupal
// (X-Drupal-Cache), and the standard Cache-Status of RFC 9211.
var cacheHeaders = [...]string{"X-Cache", "X-Cache-Status", "Cf-Cache-Status", "X-Proxy-Cache", "X-Drupal-Cache", "Cache-Status"}

// IsCacheHit reports whether the response headers say a cache answered
// without the origin: one of the common cache headers (see the source for the
// list) carrying HIT or STALE as a word, case-insensitively ("HIT",
// "Hit from cloudfront", "TCP_MEM_HIT", "MISS, HIT", "ExampleCache; hit").
// It does not allocate.
func IsCacheHit(h HeaderGetter) bool {
	for _, k := range cacheHeaders {
		if v := h.Get(k); v != "" && hasHitWord(v) {
			return true
		}
	}
	return false
}

// hasHitWord reports whether v holds "hit" or "stale" delimited by anything
// but a letter (underscores count as delimiters: TCP_HIT).
func hasHitWord(v string) bool {
	for i := 0; i < len(v); {
		for i < len(v) && !isLetter(v[i]) {
			i++
		}
		j := i
		for j < len(v) && isLetter(v[j]) {
			j++
		}
		if w := v[i:j]; strings.EqualFold(w, "hit") || strings.EqualFold(w, "stale") {
			return true
		}
		i = j
	}
	return false
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// maxRetryAfter bounds what ParseRetryAfter returns: a day is already longer
// than any sane pause, and a bound keeps arithmetic on it from overflowing.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads a Retry-After header value: delay-seconds ("120") or an
// HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT", and the two obsolete formats),
// relative to now. It reports false for an empty or malformed value, never
// panics, returns 0 for a date in the past and caps the result at 24 hours.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v[0] >= '0' && v[0] <= '9' {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			if errors.Is(err, strconv.ErrRange) {
				return maxRetryAfter, true
			}
			return 0, false
		}
		if n > uint64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	for _, layout := range [...]string{time.RFC1123, "Monday, 02-Jan-06 15:04:05 MST", time.ANSIC} {
		t, err := time.Parse(layout, v)
		if err != nil {
			continue
		}
		d := t.Sub(now)
		switch {
		case d < 0:
			return 0, true
		case d > maxRetryAfter:
			return maxRetryAfter, true
		}
		return d, true
	}
	return 0, false
}

// DefaultRetryAfter is the Retry-After a refusal carries when the adapter is
// not told otherwise: one second is long enough to let in-flight work drain
// and short enough that a client retrying on it sees the limit move.
const DefaultRetryAfter = time.Second

// RefusalStatus is the status of every refusal: 429 Too Many Requests. Not
// 503: the service is healthy and shedding on purpose, and clients and proxies
// treat 429 as "slow down" rather than "this backend is broken".
const RefusalStatus = 429

// Refusal is what an inbound adapter sends when the limiter is full: status
// [RefusalStatus], the Retry-After header value and a short body. Build it once
// with [NewRefusal] so that refusing allocates nothing.
type Refusal struct {
	// RetryAfter is the Retry-After header value: whole seconds, at least 1.
	RetryAfter string
	// Body is a short plain-text explanation, ending in a newline.
	Body string
}

// NewRefusal returns the refusal for a Retry-After of d, rounded up to whole
// seconds and at least 1 (a Retry-After of 0 invites an instant retry storm).
func NewRefusal(d time.Duration) Refusal {
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	ra := strconv.FormatInt(secs, 10)
	return Refusal{
		RetryAfter: ra,
		Body:       "429 too many requests: concurrency limit reached, retry after " + ra + "s\n",
	}
}
