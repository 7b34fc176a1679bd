package agileresty_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
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

// TestEveryAttemptTakesASlotAndIsMeasuredAlone: resty retries twice; each
// attempt takes its own slot and is measured on its own round trip, not on
// the retry loop with its back-off.
func TestEveryAttemptTakesASlotAndIsMeasuredAlone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const roundTrip = 40 * time.Millisecond
		var attempts atomic.Int64
		dep := roundTripper(func(r *http.Request) (*http.Response, error) {
			time.Sleep(roundTrip)
			status := http.StatusOK
			if attempts.Add(1) <= 2 {
				status = http.StatusInternalServerError
			}
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("")), Request: r}, nil
		})
		// One long tick holds all three attempts, so its P50 is theirs.
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1000, InitialRate: 1000, TickInterval: 2 * time.Second})
		lim.Start()
		defer lim.Stop()
		c := agileresty.Limit(newClient().SetTransport(dep).
			SetRetryCount(2).
			SetRetryWaitTime(150*time.Millisecond).SetRetryMaxWaitTime(200*time.Millisecond).
			AddRetryCondition(func(r *resty.Response, err error) bool { return r.StatusCode() >= 500 }), lim)

		start := time.Now()
		resp, err := c.R().Get("http://dependency.test/x")
		loop := time.Since(start)
		if err != nil || resp.StatusCode() != http.StatusOK {
			t.Fatalf("Get: %v, %v; want 200 on the third attempt", resp, err)
		}
		if n := attempts.Load(); n != 3 {
			t.Errorf("the dependency saw %d attempts, want 3", n)
		}
		if n := lim.Stats().Admitted; n != 3 {
			t.Errorf("Admitted = %d, want 3: one slot per attempt", n)
		}
		time.Sleep(2 * time.Second) // the tick that reads the three attempts
		if st := lim.Stats(); st.Samples != 3 || st.P50 < roundTrip || st.P50 > roundTrip*11/10 {
			t.Errorf("tick: %d samples, P50 %v; want 3 samples of one attempt's %v (the retry loop took %v)",
				st.Samples, st.P50, roundTrip, loop)
		}
	})
}

// roundTripper is a RoundTripper written as a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// dependency is an in-memory server that counts the attempts reaching it.
type dependency struct{ calls atomic.Int64 }

func (d *dependency) RoundTrip(r *http.Request) (*http.Response, error) {
	d.calls.Add(1)
	return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{},
		Body: io.NopCloser(strings.NewReader("busy")), Request: r}, nil
}

// TestRefusalStopsRetriesBeforeConditions: the common setup, resty's own
// AddRetryAfterErrorCondition and a condition that reads the status, with a
// request whose deadline comes before its slot. resty hands retry conditions
// a nil *resty.Response for an error from a request middleware, and those
// conditions call its methods: the refusal must end the request before any
// condition runs, return the refusal, and send nothing.
func TestRefusalStopsRetriesBeforeConditions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{}
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
		lim.Take() // this second's slot is gone
		var conditions, hooks atomic.Int64
		c := newClient().SetTransport(dep).
			SetRetryCount(2).SetRetryWaitTime(time.Millisecond).
			AddRetryAfterErrorCondition().
			AddRetryCondition(func(r *resty.Response, err error) bool {
				conditions.Add(1)
				return r.StatusCode() >= 500
			}).
			AddRetryHook(func(*resty.Response, error) { hooks.Add(1) })
		agileresty.Limit(c, lim)

		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		var resp *resty.Response
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("a refused slot panicked in a retry condition: %v", p)
				}
			}()
			resp, err = c.R().SetContext(ctx).Get("http://dependency.test/x")
		}()
		if !agileresty.Refused(err) || !errors.Is(err, agilelimiter.ErrDeadline) {
			t.Errorf("err = %v, want the refusal, wrapping agilelimiter.ErrDeadline", err)
		}
		if resp == nil || resp.StatusCode() != 0 || resp.IsError() || resp.RawResponse != nil {
			t.Errorf("response = %v; want a non-nil *resty.Response with no RawResponse, safe to call", resp)
		}
		if n := dep.calls.Load(); n != 0 {
			t.Errorf("the dependency got %d attempts, want none", n)
		}
		if conditions.Load() != 0 || hooks.Load() != 0 {
			t.Errorf("retry conditions ran %d times, retry hooks %d; want neither: a refusal ends the request",
				conditions.Load(), hooks.Load())
		}
		if st := lim.Stats(); st.RejectedDeadline != 1 || st.Admitted != 1 {
			t.Errorf("rejected %d, admitted %d; want 1 and 1 (refused once, never retried)", st.RejectedDeadline, st.Admitted)
		}
	})
}

// TestRetryWithoutASlotEndsTheRequest: the first attempt gets a 503 and the
// condition asks for a retry; the retry's slot would come after the
// deadline, so the retry is refused, the request ends with the refusal, and
// the condition is not asked about it.
func TestRetryWithoutASlotEndsTheRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{}
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
		var conditions atomic.Int64
		c := agileresty.Limit(newClient().SetTransport(dep).
			SetRetryCount(3).SetRetryWaitTime(10*time.Millisecond).SetRetryMaxWaitTime(10*time.Millisecond).
			AddRetryCondition(func(r *resty.Response, err error) bool {
				conditions.Add(1)
				return r.StatusCode() == http.StatusServiceUnavailable
			}), lim)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := c.R().SetContext(ctx).Get("http://dependency.test/x")
		if !agileresty.Refused(err) || !errors.Is(err, agilelimiter.ErrDeadline) {
			t.Errorf("err = %v, want the retry's refusal", err)
		}
		if dep.calls.Load() != 1 || conditions.Load() != 1 {
			t.Errorf("dependency calls %d, conditions run %d; want 1 and 1 (the 503 only)", dep.calls.Load(), conditions.Load())
		}
	})
}

// TestRefusalIsNotRetriedByDefault: with no retry conditions resty retries
// any error by default; a refusal is not the dependency's failure and must
// not be retried, nor wait out resty's back-off.
func TestRefusalIsNotRetriedByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{}
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
		lim.Take()
		c := agileresty.Limit(newClient().SetTransport(dep).SetRetryCount(3).SetRetryWaitTime(time.Second), lim)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.R().SetContext(ctx).Get("http://dependency.test/x")
		if !agileresty.Refused(err) || !errors.Is(err, agilelimiter.ErrDeadline) {
			t.Errorf("err = %v, want the refusal, wrapping agilelimiter.ErrDeadline", err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("the refused request took %v, want an immediate answer", waited)
		}
		if st := lim.Stats(); dep.calls.Load() != 0 || st.RejectedDeadline != 1 || st.Canceled != 0 {
			t.Errorf("dependency calls %d, refused %d, cancelled %d; want 0, 1, 0", dep.calls.Load(), st.RejectedDeadline, st.Canceled)
		}
	})
}

// TestRefusedRequestCanBeSentAgain: a refusal does not stick to the
// *resty.Request: sent again once a slot is free, it goes through.
func TestRefusedRequestCanBeSentAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dep := &dependency{}
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
		lim.Take()
		c := agileresty.Limit(newClient().SetTransport(dep), lim)
		req := c.R().SetContext(context.Background())
		refused, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		if _, err := req.SetContext(refused).Get("http://dependency.test/x"); !agileresty.Refused(err) {
			t.Fatalf("first send: %v, want a refusal", err)
		}
		resp, err := req.SetContext(context.Background()).Get("http://dependency.test/x")
		if err != nil || resp.StatusCode() != http.StatusServiceUnavailable || dep.calls.Load() != 1 {
			t.Errorf("second send: %v, %v after %d calls; want the dependency's 503", resp, err, dep.calls.Load())
		}
	})
}

func TestLimitNilLimiterPanics(t *testing.T) {
	defer func() {
		if p := recover(); p != "agileresty: Limit with a nil limiter" {
			t.Errorf("Limit(c, nil) panicked with %v, want the message naming the mistake", p)
		}
	}()
	agileresty.Limit(newClient(), nil)
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

// A 429 with Retry-After: 5 pauses the limiter: for 5 s no attempt reaches
// the dependency and requests with a 1 s deadline are refused at once;
// after it they go again. WithRetryAfterPause(false) keeps sending.
func TestRetryAfterPauses(t *testing.T) {
	run := func(t *testing.T, opts ...agileresty.Option) (sentDuring int64, refusedAtOnce int) {
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int64
			var pauseEnd time.Time
			dep := roundTripper(func(r *http.Request) (*http.Response, error) {
				resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}
				if !pauseEnd.IsZero() && time.Now().Before(pauseEnd) {
					sentDuring++
				}
				if calls.Add(1) == 1 {
					pauseEnd = time.Now().Add(5 * time.Second)
					resp.StatusCode = http.StatusTooManyRequests
					resp.Header.Set("Retry-After", "5")
				}
				return resp, nil
			})
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100})
			lim.Start()
			defer lim.Stop()
			c := agileresty.Limit(newClient().SetTransport(dep), lim, opts...)
			if resp, err := c.R().Get("http://dependency.test/x"); err != nil || resp.StatusCode() != http.StatusTooManyRequests {
				t.Fatalf("first request: %v, %v; want the 429", resp, err)
			}
			start := time.Now()
			for time.Since(start) < 4500*time.Millisecond {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				asked := time.Now()
				_, err := c.R().SetContext(ctx).Get("http://dependency.test/x")
				cancel()
				if agileresty.Refused(err) && time.Since(asked) == 0 {
					refusedAtOnce++
				}
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(time.Second)
			if resp, err := c.R().Get("http://dependency.test/x"); err != nil || resp.StatusCode() != http.StatusOK {
				t.Errorf("after the pause: %v, %v; want 200", resp, err)
			}
		})
		return
	}
	if sent, refused := run(t); sent != 0 || refused < 40 {
		t.Errorf("paused: %d attempts sent in the 5 s asked for, %d refused at once; want none sent, all ~45 refused", sent, refused)
	}
	if sent, _ := run(t, agileresty.WithRetryAfterPause(false)); sent < 40 {
		t.Errorf("WithRetryAfterPause(false): %d attempts sent in the 5 s after the 429; want them all (~45)", sent)
	}
}
