package httpclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// closedPort returns a URL nobody listens on: a port the kernel handed out
// and that was closed again.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	return url
}

// drive sends GETs to url through c from workers goroutines until ctx ends,
// and returns a function that waits for them.
func drive(ctx context.Context, c *http.Client, url string, workers int) (wait func()) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				if resp, err := c.Do(req); err == nil {
					resp.Body.Close()
				}
			}
		})
	}
	return wg.Wait
}

// waitTicks waits (in real time) until lim's controller has ticked n more
// times, so that what was recorded before the call is in its view.
func waitTicks(t *testing.T, lim *agilelimiter.Limiter, n uint64) agilelimiter.Stats {
	t.Helper()
	from := lim.Stats().Ticks
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := lim.Stats()
		if st.Ticks >= from+n {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the controller did not tick %d times in 10s", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A real dial to a closed port (the error net/http itself returns, which the
// conformance suite only imitates) reads as never arrived and drives the rate
// to its floor.
func TestRefusedConnectionDrivesRateToMin(t *testing.T) {
	const initial, floor = 50, 10
	// SLOTarget gives an Unreachable outcome something to stand above
	// before the first real sample: this dependency never yields one.
	lim := agilelimiter.New(agilelimiter.Config{
		MinRate: floor, MaxRate: 200, InitialRate: initial, SLOTarget: 100 * time.Millisecond,
	})
	lim.Start()
	defer lim.Stop()
	c := &http.Client{Transport: httpclient.Wrap(nil, lim)}

	ctx, cancel := context.WithCancel(context.Background())
	wait := drive(ctx, c, closedPort(t), 8)
	start := time.Now()
	peak := lim.Rate()
	for lim.Rate() > floor && time.Since(start) < 1500*time.Millisecond {
		peak = max(peak, lim.Rate())
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	wait()
	if peak > initial {
		t.Errorf("rate rose to %.1f req/s against an unreachable dependency", peak)
	}
	if r := lim.Rate(); r != floor {
		t.Errorf("rate after 1.5s = %.1f req/s, want MinRate %d (stats %+v)", r, floor, lim.Stats())
	}
}

// A custom verdict never sees an attempt its caller cancelled: it is dropped
// before the verdict runs.
func TestCallerCancelledRequestNeverReachesVerdict(t *testing.T) {
	entered := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100})
	var verdicts atomic.Int64
	c := &http.Client{Transport: httpclient.Wrap(nil, lim, httpclient.WithVerdict(
		func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
			verdicts.Add(1)
			return httpclient.DefaultVerdict(resp, err, d)
		}))}

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	_, err := c.Do(req)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := verdicts.Load(); n != 0 {
		t.Errorf("verdict ran %d times for a request its caller cancelled, want 0", n)
	}
	if st := lim.Stats(); st.Admitted != 1 {
		t.Errorf("admitted %d, want 1: the attempt did take its slot", st.Admitted)
	}
}

func TestExpiredDeadlineIsObserved(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100, TickInterval: 10 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	var seen struct {
		err error
		o   agilelimiter.Outcome
	}
	c := &http.Client{Transport: httpclient.Wrap(nil, lim, httpclient.WithVerdict(
		func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
			seen.err, seen.o = err, httpclient.DefaultVerdict(resp, err, d)
			return seen.o
		}))}

	const timeout = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	if _, err := c.Do(req); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if !errors.Is(seen.err, context.DeadlineExceeded) || seen.o != agilelimiter.Reached {
		t.Fatalf("verdict saw err %v and returned %v; want the deadline and Reached", seen.err, seen.o)
	}
	// The timeout is the controller's only sample: once its round closes (half
	// a second with one answer), the baseline is its length, within the
	// latency histogram's bucket resolution.
	var st agilelimiter.Stats
	for i := 0; i < 100 && st.Baseline == 0; i++ {
		st = waitTicks(t, lim, 10)
	}
	if st.Baseline < timeout*8/10 {
		t.Errorf("baseline %v after a %v timeout, want about the timeout", st.Baseline, timeout)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name   string
		status int
		value  string
		want   time.Duration
		ok     bool
		approx bool // an HTTP-date: whole seconds, so up to a second short
	}{
		{"seconds on 429", 429, "120", 120 * time.Second, true, false},
		{"seconds on 503", 503, "7", 7 * time.Second, true, false},
		{"padded", 429, " 3 ", 3 * time.Second, true, false},
		{"zero", 429, "0", 0, true, false},
		{"http-date", 503, now.Add(30 * time.Second).UTC().Format(http.TimeFormat), 30 * time.Second, true, true},
		{"date in the past", 503, "Wed, 21 Oct 2015 07:28:00 GMT", 0, true, false},
		{"huge", 429, "99999999999999999999999", 24 * time.Hour, true, false},
		{"negative", 429, "-5", 0, false, false},
		{"fraction", 429, "1.5", 0, false, false},
		{"garbage", 429, "soon", 0, false, false},
		{"missing", 429, "", 0, false, false},
		{"not a refusal", 200, "5", 0, false, false},
		{"server error", 500, "5", 0, false, false},
	} {
		resp := &http.Response{StatusCode: tc.status, Header: http.Header{}}
		if tc.value != "" {
			resp.Header.Set("Retry-After", tc.value)
		}
		d, ok := httpclient.RetryAfter(resp)
		good := ok == tc.ok && d == tc.want
		if tc.approx {
			good = ok == tc.ok && d <= tc.want && d > tc.want-2*time.Second
		}
		if !good {
			t.Errorf("%s: RetryAfter(%d, %q) = %v, %v; want %v, %v", tc.name, tc.status, tc.value, d, ok, tc.want, tc.ok)
		}
	}
	if d, ok := httpclient.RetryAfter(nil); ok || d != 0 {
		t.Errorf("RetryAfter(nil) = %v, %v; want 0, false", d, ok)
	}
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "", " 1 ", "-1", "1e9", "Wed, 21 Oct 2015 07:28:00 GMT",
		"Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "18446744073709551616", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		resp := &http.Response{StatusCode: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {v}}}
		d, ok := httpclient.RetryAfter(resp)
		if !ok && d != 0 {
			t.Errorf("RetryAfter(%q) = %v, false; a rejected value must give 0", v, d)
		}
		if d < 0 || d > 24*time.Hour {
			t.Errorf("RetryAfter(%q) = %v, outside [0, 24h]", v, d)
		}
	})
}

// rtFunc makes a function a RoundTripper.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A RoundTripper that returns neither a response nor an error gets the error
// http.Client would give, through both Wrap and Measure, with the default
// verdict and with one of the caller's, and nothing panics (issue 14).
func TestNilResponseWithNilErrorIsAnError(t *testing.T) {
	broken := rtFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	const want = "http: RoundTripper implementation (httpclient_test.rtFunc) returned a nil *Response with a nil error"
	for _, tc := range []struct {
		name string
		wrap func(http.RoundTripper, *agilelimiter.Limiter, ...httpclient.Option) http.RoundTripper
	}{{"Wrap", httpclient.Wrap}, {"Measure", httpclient.Measure}} {
		for _, custom := range []bool{false, true} {
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100})
			var seen []error
			var opts []httpclient.Option
			if custom {
				opts = append(opts, httpclient.WithVerdict(func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
					if resp == nil {
						seen = append(seen, err)
					}
					return httpclient.DefaultVerdict(resp, err, d)
				}))
			}
			rt := tc.wrap(broken, lim, opts...)
			req, _ := http.NewRequest("GET", "http://dependency.test/", nil)
			var resp *http.Response
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Errorf("%s (custom verdict %v): panicked: %v", tc.name, custom, p)
					}
				}()
				resp, err = rt.RoundTrip(req)
			}()
			if resp != nil || err == nil || err.Error() != want {
				t.Errorf("%s (custom verdict %v): RoundTrip = %v, %v; want nil, %q", tc.name, custom, resp, err, want)
			}
			if custom && (len(seen) != 1 || seen[0] == nil || seen[0].Error() != want) {
				t.Errorf("%s: the verdict saw a nil response with errors %v; want the one error", tc.name, seen)
			}
		}
	}
	if o := httpclient.DefaultVerdict(nil, nil, 0); o != agilelimiter.Reached {
		t.Errorf("DefaultVerdict(nil, nil) = %v, want Reached", o)
	}
}

// A nil limiter is a mistake at construction, not on the first request.
func TestNilLimiterPanicsAtConstruction(t *testing.T) {
	for name, build := range map[string]func(){
		"Wrap":    func() { httpclient.Wrap(nil, nil) },
		"Measure": func() { httpclient.Measure(nil, nil) },
	} {
		func() {
			defer func() {
				want := "httpclient: " + name + " with a nil limiter"
				if got := recover(); got != want {
					t.Errorf("%s(nil limiter) panicked with %v, want %q", name, got, want)
				}
			}()
			build()
		}()
	}
}

// A dependency that answers 429 with Retry-After: 5 gets no call for 5 s;
// callers whose 1 s deadline falls inside the pause are refused at once
// with ErrDeadline, never sent. With WithRetryAfterPause(false) the calls go
// on (the 429 still lowers the rate).
func TestRetryAfterPausesTheLimiter(t *testing.T) {
	run := func(t *testing.T, opts ...httpclient.Option) (during int, refusedLate int, refused int) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100})
			lim.Start()
			defer lim.Stop()
			var mu sync.Mutex
			var calls []time.Time
			var pauseAt time.Time
			dep := rtFunc(func(r *http.Request) (*http.Response, error) {
				mu.Lock()
				now := time.Now()
				calls = append(calls, now)
				first := pauseAt.IsZero() && now.Sub(calls[0]) >= time.Second
				if first {
					pauseAt = now
				}
				mu.Unlock()
				resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}
				if first {
					resp.StatusCode = 429
					resp.Header.Set("Retry-After", "5")
					return resp, nil
				}
				time.Sleep(10 * time.Millisecond)
				return resp, nil
			})
			c := &http.Client{Transport: httpclient.Wrap(dep, lim, opts...)}
			ctx, stop := context.WithTimeout(context.Background(), 8*time.Second)
			defer stop()
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for ctx.Err() == nil {
						rctx, cancel := context.WithTimeout(ctx, time.Second)
						req, _ := http.NewRequestWithContext(rctx, "GET", "http://dependency/x", nil)
						start := time.Now()
						resp, err := c.Do(req)
						cancel()
						if err == nil {
							resp.Body.Close()
							continue
						}
						if errors.Is(err, agilelimiter.ErrDeadline) {
							mu.Lock()
							refused++
							// Asked during the pause: refused at once.
							if !pauseAt.IsZero() && start.After(pauseAt) && start.Before(pauseAt.Add(4*time.Second)) && time.Since(start) > 0 {
								refusedLate++
							}
							mu.Unlock()
							time.Sleep(100 * time.Millisecond)
						}
					}
				})
			}
			wg.Wait()
			for _, at := range calls {
				if at.After(pauseAt) && at.Before(pauseAt.Add(5*time.Second)) {
					during++
				}
			}
		})
		return
	}
	if during, late, refused := run(t); during != 0 || refused == 0 || late != 0 {
		t.Errorf("paused: %d calls in the 5 s asked for, %d refused (%d asked during the pause and refused only after waiting); want none sent, refusals during it at once", during, refused, late)
	}
	if during, _, _ := run(t, httpclient.WithRetryAfterPause(false)); during < 50 {
		t.Errorf("WithRetryAfterPause(false): %d calls in the 5 s after the 429; want the calls to go on", during)
	}
}
