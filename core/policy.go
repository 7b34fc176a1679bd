package agilelimiter

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// This file is the one place that says what an HTTP exchange means to the
// controller and what a refusal looks like. The adapters (nethttp, gin, echo,
// fiber, resty) only translate their framework's response into these calls.
//
// Inbound (a finished request the service handled), by DefaultServerVerdict:
//
//	client went away       Aborted      the answer was cut short: a truncated measurement
//	503                    Unreachable  the handler shed load: a pool ran dry
//	429, other 4xx         Aborted      about the client (a per-client quota, a 404), not capacity
//	everything else        Reached      1xx, 2xx, 3xx, 5xx, and panics (as 500)
//
// The duration an adapter records leaves out the time the handler spent
// waiting for the client to send its body (see TimedBody).
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
	// before any error page was rendered, less the time it spent waiting
	// for the client to send the request body (see [TimedBody]).
	Duration time.Duration
	// ClientGone reports that the client went away before the answer was
	// complete: when the handler returned, the request's context had been
	// cancelled (errors.Is(ctx.Err(), context.Canceled), which is how
	// net/http says the connection closed). A context whose deadline passed
	// is not a client gone: it is a server-side timeout, and the time it
	// took is a real, slow answer. Adapters whose framework gives no such
	// signal (fasthttp) leave it false.
	ClientGone bool
}

// ServerVerdict turns a finished inbound exchange into an Outcome. Write one
// to treat health checks, streams or cache hits specially, and call
// [DefaultServerVerdict] for the rest.
type ServerVerdict func(Exchange) Outcome

// DefaultServerVerdict is the inbound policy. A request whose client went
// away before the answer (ClientGone) is Aborted: its duration is a truncated
// measurement, as a caller's cancel is on the client side, and a client that
// hangs up after a millisecond must not read as a fast, healthy service. The
// rest is [ServerOutcome] of the status the client received.
func DefaultServerVerdict(e Exchange) Outcome {
	if e.ClientGone {
		return Aborted
	}
	return ServerOutcome(e.Status)
}

// ServerOutcome reads the final status of a request the service handled. The
// handler's own 503 means it shed load (a pool ran dry): Unreachable, so the
// limit comes down. A 429 and any other 4xx are Aborted: a handler's 429 is
// almost always a per-client quota, which says nothing about the service's
// capacity (a throttled client must not lower everyone's limit), and a flood
// of instant 404s or 401s must not read as a fast, healthy service and raise
// it. The rest is Reached. Outbound the reading differs: a dependency's 429 is
// about us (see [ClientOutcome]).
func ServerOutcome(status int) Outcome {
	switch {
	case status == 503:
		return Unreachable
	case status >= 400 && status < 500:
		return Aborted
	}
	return Reached
}

// ClientGone reports whether ctx, a request's context, says the client went
// away: it was cancelled (context.Canceled). A deadline that passed is not
// one (see [Exchange].ClientGone). Inbound adapters set Exchange.ClientGone
// from it when the handler returns.
func ClientGone(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// TimedBody wraps a request body and adds up the time its Read calls take:
// time the handler spent waiting for the client to send, which is the
// client's and not the service's. An inbound adapter puts it in place of the
// request's body and subtracts Waited from the duration it records, so a slow
// upload does not read as a slow service (20 connections sending 5 bytes over
// 500 ms pushed a 100 ms SLO's p99 past it and refused a fifth of everyone
// else). Reads that find the bytes already buffered cost it a clock read and
// add next to nothing.
type TimedBody struct {
	io.ReadCloser
	waited atomic.Int64
}

// Read reads from the body and adds the time it took to Waited.
func (b *TimedBody) Read(p []byte) (int, error) {
	start := time.Now()
	n, err := b.ReadCloser.Read(p)
	b.waited.Add(int64(time.Since(start)))
	return n, err
}

// Waited returns the time Read calls have taken so far.
func (b *TimedBody) Waited() time.Duration { return time.Duration(b.waited.Load()) }

// Since returns the time since start less what b's reads waited, never
// below zero: the part of a request the service is answerable for. b may be
// nil (a request without a body): then it is time.Since(start).
func (b *TimedBody) Since(start time.Time) time.Duration {
	d := time.Since(start)
	if b != nil {
		d = max(d-b.Waited(), 0)
	}
	return d
}

// Reset makes b time body from zero, for an adapter that reuses it.
func (b *TimedBody) Reset(body io.ReadCloser) {
	b.ReadCloser = body
	b.waited.Store(0)
}

// ClientRetryAfter reads a response a dependency sent as a request to wait: a
// 429 or 503 with a Retry-After header (delay-seconds or an HTTP-date, see
// [ParseRetryAfter], capped at 24 hours) asks for that long without calls.
// It reports false for any other status, a nil h, and a missing or malformed
// header. httpclient and agileresty pause their Limiter for it
// ([Limiter.PauseUntil]) when the delay is positive.
func ClientRetryAfter(status int, h HeaderGetter, now time.Time) (time.Duration, bool) {
	if h == nil || (status != 429 && status != 503) {
		return 0, false
	}
	return ParseRetryAfter(h.Get("Retry-After"), now)
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
// without the origin. The standard Cache-Status (RFC 9211) is parsed as the
// structured list it is: a hit is a member with the hit parameter
// ("ExampleCache; hit"), and a member that forwarded the request
// ("ExampleCache; fwd=stale; fwd-status=304", RFC 9211's own example of a
// miss) is not one. The older headers (X-Cache, CF-Cache-Status and the rest;
// see the source for the list) have no grammar: HIT or STALE as a word,
// case-insensitively ("HIT", "Hit from cloudfront", "TCP_MEM_HIT", "MISS,
// HIT"). It does not allocate.
func IsCacheHit(h HeaderGetter) bool {
	for _, k := range cacheHeaders {
		v := h.Get(k)
		if v == "" {
			continue
		}
		if k == "Cache-Status" {
			if cacheStatusHit(v) {
				return true
			}
		} else if hasHitWord(v) {
			return true
		}
	}
	return false
}

// cacheStatusHit reports whether a Cache-Status value (an RFC 8941 list of
// caches, each an item with parameters) has a member whose hit parameter is
// true: some cache answered, and the origin was not reached. Values it
// cannot parse are not hits: the call is then a sample, which is what a
// response without the header is too.
func cacheStatusHit(v string) bool {
	i := 0
	for i < len(v) {
		// The member's item: a token or a quoted string.
		i = skipSP(v, i)
		if i < len(v) && v[i] == '"' {
			if i = skipString(v, i); i < 0 {
				return false
			}
		} else {
			for i < len(v) && v[i] != ';' && v[i] != ',' {
				i++
			}
		}
		// Its parameters: ;key or ;key=value.
		for i < len(v) && v[i] == ';' {
			i = skipSP(v, i+1)
			k := i
			for i < len(v) && v[i] != '=' && v[i] != ';' && v[i] != ',' && v[i] != ' ' {
				i++
			}
			key := v[k:i]
			val := "?1" // a bare key is boolean true
			if i < len(v) && v[i] == '=' {
				i++
				s := i
				if i < len(v) && v[i] == '"' {
					if i = skipString(v, i); i < 0 {
						return false
					}
				} else {
					for i < len(v) && v[i] != ';' && v[i] != ',' && v[i] != ' ' {
						i++
					}
				}
				val = v[s:i]
			}
			if key == "hit" && val == "?1" {
				return true
			}
			i = skipSP(v, i)
		}
		// The next member, or an item the grammar does not allow.
		i = skipSP(v, i)
		if i < len(v) {
			if v[i] != ',' {
				return false
			}
			i++
		}
	}
	return false
}

// skipSP returns the index of the first byte at or after i that is not a
// space or a tab.
func skipSP(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the quoted string starting at
// v[i] == '"', or -1 if it does not end.
func skipString(v string, i int) int {
	for i++; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
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
// relative to now. It reports false for an empty or malformed value and for a
// date in any zone but GMT (RFC 9110 allows no other), never panics, returns 0
// for a date in the past and caps the result at 24 hours.
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
	// RFC 9110 §5.6.7: an HTTP-date is in GMT. Layouts that spell the zone
	// accept GMT alone: "… 04:01:00 PST", or a zone time.Parse does not
	// know, would otherwise be read as UTC. asctime's has no zone: GMT.
	for _, layout := range [...]string{"Mon, 02 Jan 2006 15:04:05 GMT", "Monday, 02-Jan-06 15:04:05 GMT", time.ANSIC} {
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

// Refusal is the whole response an inbound adapter sends when the limiter is
// full: Status, Header and Body, written once here so that every adapter sends
// the same bytes. An adapter copies Header's values into its response (they
// are shared and must not be modified), writes Status and then Body, and
// nothing else. Build it once with [NewRefusal] so that refusing allocates
// nothing.
type Refusal struct {
	// Status is [RefusalStatus].
	Status int
	// Header holds, under canonical keys: Retry-After (whole seconds, at
	// least 1), Content-Type (text/plain; charset=utf-8),
	// X-Content-Type-Options (nosniff, so no browser reads the body as
	// anything else) and Content-Length.
	Header map[string][]string
	// RetryAfter is the Retry-After value alone. An adapter sets it before
	// running a custom rejection too, so that a retry hint is never lost to
	// a JSON body.
	RetryAfter string
	// Body is a short plain-text explanation, ending in a newline.
	Body string
}

// NewRefusal returns the refusal for a Retry-After of d, rounded up to whole
// seconds and at least 1 (a Retry-After of 0 invites an instant retry storm).
// It saturates: no d, however large, wraps around to a short Retry-After.
func NewRefusal(d time.Duration) Refusal {
	secs := int64(d / time.Second)
	if d%time.Second > 0 {
		secs++
	}
	secs = max(secs, 1)
	ra := strconv.FormatInt(secs, 10)
	body := "429 too many requests: concurrency limit reached, retry after " + ra + "s\n"
	return Refusal{
		Status: RefusalStatus,
		Header: map[string][]string{
			"Retry-After":            {ra},
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
			"Content-Length":         {strconv.Itoa(len(body))},
		},
		RetryAfter: ra,
		Body:       body,
	}
}
