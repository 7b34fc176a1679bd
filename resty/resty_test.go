package agileresty_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/go-resty/resty/v2"
)

// quiet keeps resty's retry warnings out of the test output.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}

func newClient() *resty.Client { return resty.New().SetLogger(quiet{}) }

// waitTicks waits (in real time) until lim's controller has ticked n more
// times, so that what was recorded before the call is in its view.
func waitTicks(t *testing.T, lim *agilelimiter.Limiter, n uint64) agilelimiter.Stats {
	t.Helper()
	from := lim.Stats().Ticks
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st := lim.Stats(); st.Ticks >= from+n {
			return st
		}
	}
	t.Fatalf("the controller did not tick %d times in 10s", n)
	return agilelimiter.Stats{}
}

func TestEveryAttemptTakesASlotAndIsMeasuredAlone(t *testing.T) {
	const roundTrip = 40 * time.Millisecond
	var attempts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(roundTrip)
		if attempts.Add(1) <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()

	// One long tick holds all three attempts, so its P50 is theirs.
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1000, InitialRate: 1000, TickInterval: 2 * time.Second})
	lim.Start()
	defer lim.Stop()
	c := agileresty.Limit(newClient().
		SetRetryCount(2).
		SetRetryWaitTime(150*time.Millisecond).SetRetryMaxWaitTime(200*time.Millisecond).
		AddRetryCondition(func(r *resty.Response, err error) bool {
			return r != nil && r.StatusCode() >= 500
		}), lim)

	start := time.Now()
	resp, err := c.R().Get(srv.URL)
	loop := time.Since(start)
	if err != nil || resp.StatusCode() != http.StatusOK {
		t.Fatalf("Get: %v, %v; want 200 on the third attempt", resp, err)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("server saw %d attempts, want 3", n)
	}
	if n := lim.Stats().Admitted; n != 3 {
		t.Errorf("Admitted = %d, want 3: one slot per attempt", n)
	}
	st := waitTicks(t, lim, 1)
	if st.Samples != 3 || st.P50 < roundTrip*3/4 || st.P50 > 2*roundTrip {
		t.Errorf("tick: %d samples, P50 %v; want 3 samples near one attempt's %v (the retry loop took %v)",
			st.Samples, st.P50, roundTrip, loop)
	}
}

func TestUnreachableDependencyDrivesRateDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	unavailable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer unavailable.Close()

	for _, tc := range []struct{ name, url string }{
		{"closed port", closed},
		{"503 everywhere", unavailable.URL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const initial, floor = 50, 10
			// SLOTarget gives an Unreachable outcome something to stand above
			// before the first real sample: this dependency never yields one.
			lim := agilelimiter.New(agilelimiter.Config{
				MinRate: floor, MaxRate: 200, InitialRate: initial, SLOTarget: 100 * time.Millisecond,
			})
			lim.Start()
			defer lim.Stop()
			c := agileresty.Limit(newClient(), lim)

			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					for ctx.Err() == nil {
						c.R().SetContext(ctx).Get(tc.url)
					}
				})
			}
			start := time.Now()
			peak := lim.Rate()
			for lim.Rate() > floor && time.Since(start) < 1500*time.Millisecond {
				peak = max(peak, lim.Rate())
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			wg.Wait()
			if peak > initial {
				t.Errorf("rate rose to %.1f req/s against an unreachable dependency", peak)
			}
			if r := lim.Rate(); r != floor {
				t.Errorf("rate after 1.5s = %.1f req/s, want MinRate %d", r, floor)
			}
		})
	}
}

func TestDeadlineBeforeSlotFailsAtOnceAndIsNotRetried(t *testing.T) {
	for _, tc := range []struct {
		name      string
		condition bool
	}{
		{"no retry conditions", false},
		{"a condition that checks Refused first", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hits atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
			defer srv.Close()
			lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
			lim.Take() // this second's slot is gone
			c := newClient().SetRetryCount(3).SetRetryWaitTime(time.Millisecond)
			var sawNilResponse atomic.Bool
			if tc.condition {
				c.AddRetryCondition(func(r *resty.Response, err error) bool {
					if agileresty.Refused(err) {
						sawNilResponse.Store(r == nil)
						return false
					}
					return err != nil || r.StatusCode() >= 500
				})
			}
			agileresty.Limit(c, lim)

			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			_, err := c.R().SetContext(ctx).Get(srv.URL)
			if !errors.Is(err, agilelimiter.ErrDeadline) || !agileresty.Refused(err) {
				t.Errorf("err = %v, want a refusal wrapping agilelimiter.ErrDeadline", err)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("server saw %d requests, want none", n)
			}
			// A retry would have tried to take again: a second refusal, or a
			// cancelled wait.
			if st := lim.Stats(); st.RejectedDeadline != 1 || st.Canceled != 0 || st.Admitted != 1 {
				t.Errorf("rejected %d, cancelled %d, admitted %d; want 1, 0, 1 (refused once, never retried)",
					st.RejectedDeadline, st.Canceled, st.Admitted)
			}
			if tc.condition && !sawNilResponse.Load() {
				t.Error("the retry condition did not see the refusal with a nil *resty.Response")
			}
		})
	}
}

func TestCacheHitsAreNeverSamples(t *testing.T) {
	for _, tc := range []struct {
		xCache  string
		samples bool
	}{
		{"HIT", false},
		{"MISS", true}, // the control: the same traffic without a hit is observed
	} {
		t.Run(tc.xCache, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("X-Cache", tc.xCache)
			}))
			defer srv.Close()
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 10000, InitialRate: 10000, TickInterval: 10 * time.Millisecond})
			lim.Start()
			defer lim.Stop()
			c := agileresty.Limit(newClient(), lim)
			for range 20 {
				if _, err := c.R().Get(srv.URL); err != nil {
					t.Fatal(err)
				}
			}
			// The baseline stays zero until the first real sample arrives.
			st := waitTicks(t, lim, 2)
			if got := st.Baseline > 0; got != tc.samples {
				t.Errorf("X-Cache: %s: baseline %v after 20 requests; sampled = %v, want %v", tc.xCache, st.Baseline, got, tc.samples)
			}
		})
	}
}

// countingTransport is a user's own RoundTripper.
type countingTransport struct {
	next http.RoundTripper
	n    atomic.Int64
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestUserTransportIsKept(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin")
	}))
	defer origin.Close()
	// A forward proxy answers requests for any host itself.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "proxy for "+r.Host)
	}))
	defer proxy.Close()
	newLim := func() *agilelimiter.Limiter {
		return agilelimiter.New(agilelimiter.Config{MaxRate: 1000, InitialRate: 1000})
	}

	t.Run("custom RoundTripper set before Limit", func(t *testing.T) {
		lim := newLim()
		var verdicts atomic.Int64
		ct := &countingTransport{next: http.DefaultTransport}
		c := agileresty.Limit(newClient().SetTransport(ct), lim, agileresty.WithVerdict(
			func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome {
				verdicts.Add(1)
				return agilelimiter.Reached
			}))
		for range 3 {
			if resp, err := c.R().Get(origin.URL); err != nil || resp.String() != "origin" {
				t.Fatalf("Get: %v, %v", resp, err)
			}
		}
		if ct.n.Load() != 3 || verdicts.Load() != 3 || lim.Stats().Admitted != 3 {
			t.Errorf("user transport %d, verdicts %d, admitted %d; want 3 each", ct.n.Load(), verdicts.Load(), lim.Stats().Admitted)
		}
		if _, err := agileresty.Transport(c); err == nil {
			t.Error("Transport found an *http.Transport under a custom RoundTripper")
		}
	})

	t.Run("SetProxy before Limit", func(t *testing.T) {
		c := agileresty.Limit(newClient().SetProxy(proxy.URL), newLim())
		if resp, err := c.R().Get("http://dependency.invalid/"); err != nil || resp.String() != "proxy for dependency.invalid" {
			t.Errorf("Get: %q, %v; want the proxy's answer", resp, err)
		}
	})

	t.Run("proxy set through Transport after Limit", func(t *testing.T) {
		c := agileresty.Limit(newClient(), newLim())
		tr, err := agileresty.Transport(c)
		if err != nil {
			t.Fatal(err)
		}
		tr.Proxy = http.ProxyURL(mustParse(t, proxy.URL))
		if resp, err := c.R().Get("http://dependency.invalid/"); err != nil || resp.String() != "proxy for dependency.invalid" {
			t.Errorf("Get: %q, %v; want the proxy's answer", resp, err)
		}
	})
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
