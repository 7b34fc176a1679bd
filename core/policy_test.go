package agilelimiter_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

func TestServerOutcome(t *testing.T) {
	for status, want := range map[int]agilelimiter.Outcome{
		200: agilelimiter.Reached, 201: agilelimiter.Reached, 204: agilelimiter.Reached,
		301: agilelimiter.Reached, 304: agilelimiter.Reached,
		400: agilelimiter.Aborted, 401: agilelimiter.Aborted, 403: agilelimiter.Aborted,
		404: agilelimiter.Aborted, 499: agilelimiter.Aborted,
		// A handler's 429 is about the client (a per-client quota): a
		// throttled client must not lower everyone's limit (issue 14.3).
		429: agilelimiter.Aborted, 503: agilelimiter.Unreachable,
		500: agilelimiter.Reached, 502: agilelimiter.Reached, 504: agilelimiter.Reached,
	} {
		if got := agilelimiter.ServerOutcome(status); got != want {
			t.Errorf("ServerOutcome(%d) = %v; want %v", status, got, want)
		}
		if got := agilelimiter.DefaultServerVerdict(agilelimiter.Exchange{Status: status}); got != want {
			t.Errorf("DefaultServerVerdict(%d) = %v; want %v", status, got, want)
		}
		// A client that went away before the answer: dropped, whatever
		// the status (issue 14.1).
		if got := agilelimiter.DefaultServerVerdict(agilelimiter.Exchange{Status: status, ClientGone: true}); got != agilelimiter.Aborted {
			t.Errorf("DefaultServerVerdict(%d, ClientGone) = %v; want Aborted", status, got)
		}
	}
}

// TimedBody adds up what its reads take, and nothing else: a handler that
// waits on a slow client's body must not read as a slow service.
func TestTimedBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &agilelimiter.TimedBody{}
		b.Reset(agiletest.SlowBody(100*time.Millisecond, "x", "x", "x", "x", "x"))
		time.Sleep(time.Second) // the handler's own work, before it reads
		data, err := io.ReadAll(b)
		if err != nil || string(data) != "xxxxx" {
			t.Fatalf("ReadAll = %q, %v", data, err)
		}
		if got := b.Waited(); got != 500*time.Millisecond {
			t.Errorf("Waited() = %v; want 500ms (five bytes 100ms apart)", got)
		}
		b.Reset(http.NoBody)
		if got := b.Waited(); got != 0 {
			t.Errorf("Waited() after Reset = %v", got)
		}
	})
}

func TestClientOutcome(t *testing.T) {
	hit := http.Header{"X-Cache": {"HIT"}}
	for _, tc := range []struct {
		status int
		h      agilelimiter.HeaderGetter
		want   agilelimiter.Outcome
	}{
		{200, nil, agilelimiter.Reached},
		{200, http.Header{}, agilelimiter.Reached},
		{200, hit, agilelimiter.Aborted},
		{404, nil, agilelimiter.Reached}, // the dependency answered: its time is real
		{500, nil, agilelimiter.Reached},
		{429, nil, agilelimiter.Unreachable},
		{503, hit, agilelimiter.Unreachable},
	} {
		if got := agilelimiter.ClientOutcome(tc.status, tc.h); got != tc.want {
			t.Errorf("ClientOutcome(%d, %v) = %v; want %v", tc.status, tc.h, got, tc.want)
		}
	}
}

func TestClientErrorOutcome(t *testing.T) {
	dial := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	for _, tc := range []struct {
		name string
		err  error
		want agilelimiter.Outcome
	}{
		{"nil", nil, agilelimiter.Reached},
		{"refused", dial(os.NewSyscallError("connect", syscall.ECONNREFUSED)), agilelimiter.Unreachable},
		{"refused wrapped", fmt.Errorf("Get %q: %w", "http://x", dial(syscall.ECONNREFUSED)), agilelimiter.Unreachable},
		{"dns", &net.DNSError{Err: "no such host", Name: "nope.invalid", IsNotFound: true}, agilelimiter.Unreachable},
		{"no route", dial(syscall.EHOSTUNREACH), agilelimiter.Unreachable},
		{"net unreachable", syscall.ENETUNREACH, agilelimiter.Unreachable},
		{"dial timeout", dial(timeoutErr{}), agilelimiter.Unreachable},
		{"tls handshake timeout", errors.New("net/http: TLS handshake timeout"), agilelimiter.Unreachable},
		{"read timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, agilelimiter.Reached},
		{"deadline", context.DeadlineExceeded, agilelimiter.Reached},
		{"reset after send", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, agilelimiter.Reached},
		{"other", errors.New("boom"), agilelimiter.Reached},
	} {
		if got := agilelimiter.ClientErrorOutcome(tc.err); got != tc.want {
			t.Errorf("%s: ClientErrorOutcome(%v) = %v; want %v", tc.name, tc.err, got, tc.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestIsCacheHit(t *testing.T) {
	for _, tc := range []struct {
		h    http.Header
		want bool
	}{
		{http.Header{}, false},
		{http.Header{"X-Cache": {"HIT"}}, true},
		{http.Header{"X-Cache": {"hit"}}, true},
		{http.Header{"X-Cache": {"Hit from cloudfront"}}, true},
		{http.Header{"X-Cache": {"Miss from cloudfront"}}, false},
		{http.Header{"X-Cache": {"MISS, HIT"}}, true},
		{http.Header{"X-Cache": {"TCP_MEM_HIT"}}, true},
		{http.Header{"X-Cache": {"WHITEHIT"}}, false}, // a word, not a substring
		{http.Header{"X-Cache-Status": {"STALE"}}, true},
		{http.Header{"X-Cache-Status": {"BYPASS"}}, false},
		{http.Header{"Cf-Cache-Status": {"HIT"}}, true},
		{http.Header{"Cf-Cache-Status": {"DYNAMIC"}}, false},
		{http.Header{"Cache-Status": {"ExampleCache; hit"}}, true},
		{http.Header{"Cache-Status": {"ExampleCache; fwd=uri-miss"}}, false},
		// RFC 9211's own examples: a stale response the origin validated
		// is a miss (the round trip was real), whatever words it holds.
		{http.Header{"Cache-Status": {"ExampleCache; fwd=stale; fwd-status=304"}}, false},
		{http.Header{"Cache-Status": {"ExampleCache; hit; ttl=30; key=\"/hit;stale\""}}, true},
		{http.Header{"Cache-Status": {"OriginCache; hit; ttl=1100, \"CDN Company Here\"; hit; ttl=545"}}, true},
		{http.Header{"Cache-Status": {"ReverseProxyCache; hit, ForwardProxyCache; fwd=uri-miss; collapsed; stored"}}, true},
		{http.Header{"Cache-Status": {"ExampleCache; fwd=uri-miss; stored"}}, false},
		{http.Header{"Cache-Status": {"ExampleCache; hit=?0"}}, false},
		{http.Header{"Cache-Status": {"ExampleCache; detail=hit"}}, false},
		{http.Header{"Cache-Status": {"hit"}}, false}, // a cache named hit, with no parameter
		{http.Header{"Cache-Status": {"\"unterminated; hit"}}, false},
		{http.Header{"X-Something": {"HIT"}}, false},
	} {
		if got := agilelimiter.IsCacheHit(tc.h); got != tc.want {
			t.Errorf("IsCacheHit(%v) = %v; want %v", tc.h, got, tc.want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"120", 120 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"99999999999999999999999", 24 * time.Hour, true},
		{"1e3", 0, false},
		{"-1", 0, false},
		{"3.5", 0, false},
		{"soon", 0, false},
		{"Sun, 29 Nov 2026 12:00:30 GMT", 30 * time.Second, true},
		{"Sunday, 29-Nov-26 12:01:00 GMT", time.Minute, true},
		{"Sun Nov 29 12:00:05 2026", 5 * time.Second, true},
		{"Sun, 29 Nov 2026 11:00:00 GMT", 0, true}, // past
		{"Sun, 29 Nov 2036 11:00:00 GMT", 24 * time.Hour, true},
		{"Sun, 32 Nov 2026 11:00:00 GMT", 0, false},
		// RFC 9110: an HTTP-date is in GMT; any other zone, known or not,
		// used to be read as UTC (issue 14.8).
		{"Sun, 29 Nov 2026 04:01:00 PST", 0, false},
		{"Sun, 29 Nov 2026 12:00:30 CET", 0, false},
		{"Sun, 29 Nov 2026 12:00:30 XYZ", 0, false},
		{"Sun, 29 Nov 2026 12:00:30 UTC", 0, false},
		{"Sunday, 29-Nov-26 12:01:00 EST", 0, false},
	} {
		got, ok := agilelimiter.ParseRetryAfter(tc.v, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"", "1", "120", "Sun, 29 Nov 2026 12:00:30 GMT", "-0", "9999999999999999999999", "\x00"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := agilelimiter.ParseRetryAfter(v, now)
		if d < 0 || d > 24*time.Hour || (!ok && d != 0) {
			t.Errorf("ParseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}

func TestNewRefusal(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "1", -time.Second: "1", time.Millisecond: "1", time.Second: "1",
		1500 * time.Millisecond: "2", 7 * time.Second: "7", time.Hour: "3600",
		// Saturates: (d + time.Second - 1) used to wrap a huge d to 1s
		// (issue 14.10).
		math.MaxInt64:                 "9223372037",
		math.MaxInt64 - time.Second/2: "9223372037",
	} {
		r := agilelimiter.NewRefusal(d)
		if r.RetryAfter != want || r.Header["Retry-After"][0] != want {
			t.Errorf("NewRefusal(%v) Retry-After = %q, %q; want %q", d, r.RetryAfter, r.Header["Retry-After"], want)
		}
		if r.Body == "" || r.Body[len(r.Body)-1] != '\n' {
			t.Errorf("NewRefusal(%v).Body = %q; want a short line", d, r.Body)
		}
		if r.Status != http.StatusTooManyRequests {
			t.Errorf("NewRefusal(%v).Status = %d", d, r.Status)
		}
		for k, v := range map[string]string{
			"Content-Type":           "text/plain; charset=utf-8",
			"X-Content-Type-Options": "nosniff",
			"Content-Length":         strconv.Itoa(len(r.Body)),
		} {
			if got := r.Header[k]; len(got) != 1 || got[0] != v {
				t.Errorf("NewRefusal(%v).Header[%s] = %q; want %q", d, k, got, v)
			}
		}
		if len(r.Header) != 4 {
			t.Errorf("NewRefusal(%v).Header = %v; want exactly four headers", d, r.Header)
		}
	}
	if agilelimiter.RefusalStatus != http.StatusTooManyRequests {
		t.Errorf("RefusalStatus = %d", agilelimiter.RefusalStatus)
	}
}

// Record maps each outcome to what the controller sees: Reached is a
// sample, Unreachable a synthetic one above the SLO, Aborted nothing.
func TestRecord(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10, SLOTarget: time.Second})
		out := agilelimiter.New(agilelimiter.Config{MaxRate: 10, SLOTarget: time.Second, TickInterval: tick})
		in.Start()
		out.Start()
		defer in.Stop()
		defer out.Stop()
		for _, o := range []agilelimiter.Outcome{agilelimiter.Reached, agilelimiter.Unreachable, agilelimiter.Aborted, agilelimiter.Aborted} {
			in.Record(o, 5*time.Millisecond)
			out.Record(o, 5*time.Millisecond)
		}
		time.Sleep(tick + tick/2)
		for name, st := range map[string]agilelimiter.Stats{"inbound": in.Stats(), "outbound": out.Stats()} {
			if st.Samples != 2 || st.Unreachable != 1 || st.P99 <= time.Second {
				t.Errorf("%s: samples %d, unreachable %d, p99 %v; want 2, 1 and a p99 above the 1s SLO", name, st.Samples, st.Unreachable, st.P99)
			}
		}
	})
	if agilelimiter.Reached.String() != "Reached" || agilelimiter.Outcome(9).String() != "Outcome(9)" {
		t.Errorf("Outcome.String: %v %v", agilelimiter.Reached, agilelimiter.Outcome(9))
	}
}

// Whatever a dependency sends in its cache headers, IsCacheHit answers
// without panicking, and the hit parameter of a well-formed Cache-Status
// member is found wherever it stands.
func FuzzIsCacheHit(f *testing.F) {
	for _, s := range []string{"", "ExampleCache; hit", "ExampleCache; fwd=stale; fwd-status=304", `"a;b"; hit`, `"`, `x; key="\`, ";;,,;=", "a; hit=?0, b; hit"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		for _, k := range []string{"Cache-Status", "X-Cache"} {
			agilelimiter.IsCacheHit(http.Header{k: {v}})
		}
		if !strings.ContainsAny(v, "\",;\\") {
			h := http.Header{"Cache-Status": {"Origin; fwd=miss, " + strings.TrimSpace(v) + "x; ttl=3; hit"}}
			if !agilelimiter.IsCacheHit(h) {
				t.Errorf("IsCacheHit(%q) = false; want the hit of its last member", h.Get("Cache-Status"))
			}
		}
	})
}

// ClientRetryAfter reads Retry-After on 429 and 503 only.
func TestClientRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	h := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	for _, c := range []struct {
		status int
		h      agilelimiter.HeaderGetter
		want   time.Duration
		ok     bool
	}{
		{429, h("5"), 5 * time.Second, true},
		{503, h("Wed, 02 Dec 2026 12:00:30 GMT"), 30 * time.Second, true},
		{503, h("0"), 0, true},
		{429, h("soon"), 0, false},
		{429, http.Header{}, 0, false},
		{429, nil, 0, false},
		{500, h("5"), 0, false},
		{200, h("5"), 0, false},
		{429, h("999999999999"), 24 * time.Hour, true},
	} {
		if d, ok := agilelimiter.ClientRetryAfter(c.status, c.h, now); d != c.want || ok != c.ok {
			t.Errorf("ClientRetryAfter(%d, %v) = %v, %v; want %v, %v", c.status, c.h, d, ok, c.want, c.ok)
		}
	}
}
