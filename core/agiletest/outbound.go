package agiletest

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Outbound is the contract an outbound adapter keeps.
type Outbound struct {
	// Name names the adapter in failures.
	Name string
	// Client returns a function that sends a request through the adapter
	// with lim, over rt (the dependency), with the adapter's default
	// options, and returns the dependency's response (its body unread or
	// read, either way) or the error. It must panic when lim is nil: at
	// construction, not on the first request.
	Client func(lim *agilelimiter.Limiter, rt http.RoundTripper) func(*http.Request) (*http.Response, error)
}

// Run runs the outbound contract as subtests of t.
func (c Outbound) Run(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"AnswersAreSamples", c.answersAreSamples},
		{"RefusalsLowerTheRate", c.refusalsLowerTheRate},
		{"CacheHitsRecordNothing", c.cacheHitsRecordNothing},
		{"CallerCancelRecordsNothing", c.callerCancelRecordsNothing},
		{"DeadlineBeforeTheSlotSendsNothing", c.deadlineBeforeTheSlot},
		{"NilResponseIsAnError", c.nilResponseIsAnError},
		{"NilLimiterPanicsAtConstruction", c.nilLimiterPanics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c.Client == nil {
				t.Fatalf("%s: Outbound.Client is nil", c.Name)
			}
			tc.fn(t)
		})
	}
}

// dependency is an in-memory server: answer says what each call gets.
type dependency struct {
	calls  atomic.Int64
	answer func(*http.Request) (*http.Response, error)
}

func (d *dependency) RoundTrip(r *http.Request) (*http.Response, error) {
	d.calls.Add(1)
	if r.Body != nil {
		_ = r.Body.Close()
	}
	return d.answer(r)
}

// reply returns a response of status with headers h (key, value pairs).
func reply(r *http.Request, status int, h ...string) *http.Response {
	resp := &http.Response{
		StatusCode: status, Status: http.StatusText(status), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("answer")), ContentLength: 6, Request: r,
	}
	for i := 0; i+1 < len(h); i += 2 {
		resp.Header.Set(h[i], h[i+1])
	}
	return resp
}

// call sends one GET through do with a context of deadline d, closing the body.
func call(do func(*http.Request) (*http.Response, error), d time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://dependency.test/x", nil)
	resp, err := do(req)
	if resp == nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, err
}

// drive runs callers in a closed loop for d, each call with a deadline of a second.
func drive(do func(*http.Request) (*http.Response, error), callers int, d time.Duration) {
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				if _, err := call(do, time.Second); err != nil {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

// answersAreSamples: an answer's duration is the round trip alone, not the
// wait for a slot: a dependency that takes 20 ms reads 20 ms.
func (c Outbound) answersAreSamples(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 50, MaxRate: 50, InitialRate: 50})
		lim.Start()
		defer lim.Stop()
		dep := &dependency{answer: func(r *http.Request) (*http.Response, error) {
			time.Sleep(20 * time.Millisecond)
			return reply(r, http.StatusOK), nil
		}}
		do := c.Client(lim, dep)
		drive(do, 8, 2*time.Second) // 8 callers at 50/s: most of each call is the wait
		st := lim.Stats()
		if st.P50 < 20*time.Millisecond || st.P99 > 25*time.Millisecond {
			t.Errorf("%s: p50 %v, p99 %v for a 20ms dependency; want the round trip alone", c.Name, st.P50, st.P99)
		}
	})
}

// refusalsLowerTheRate: a dependency that refuses for capacity (503, 429)
// or that cannot be reached (connection refused) brings the rate down to
// MinRate.
func (c Outbound) refusalsLowerTheRate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(*http.Request) (*http.Response, error)
	}{
		{"503", func(r *http.Request) (*http.Response, error) { return reply(r, http.StatusServiceUnavailable), nil }},
		{"429", func(r *http.Request) (*http.Response, error) { return reply(r, http.StatusTooManyRequests), nil }},
		{"refused", func(r *http.Request) (*http.Response, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.New(agilelimiter.Config{MinRate: 2, MaxRate: 200, InitialRate: 200, SLOTarget: 100 * time.Millisecond})
				lim.Start()
				defer lim.Stop()
				dep := &dependency{answer: func(r *http.Request) (*http.Response, error) {
					time.Sleep(time.Millisecond)
					return tc.answer(r)
				}}
				drive(c.Client(lim, dep), 10, 5*time.Second)
				if got := lim.Rate(); got != 2 {
					t.Errorf("%s: rate %.1f/s after 5s of %s; want MinRate, 2/s", c.Name, got, tc.name)
				}
			})
		})
	}
}

// cacheHitsRecordNothing: an answer a cache gave never reached the
// dependency: nothing is recorded.
func (c Outbound) cacheHitsRecordNothing(t *testing.T) {
	for _, h := range [][2]string{{"Cache-Status", "ExampleCache; hit"}, {"X-Cache", "HIT"}} {
		t.Run(h[0], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.New(agilelimiter.Config{MaxRate: 200})
				lim.Start()
				defer lim.Stop()
				dep := &dependency{answer: func(r *http.Request) (*http.Response, error) {
					return reply(r, http.StatusOK, h[0], h[1]), nil
				}}
				do := c.Client(lim, dep)
				var samples int
				done := make(chan struct{})
				go func() { samples, _ = watch(lim.Stats, 2*time.Second); close(done) }()
				drive(do, 4, 2*time.Second)
				<-done
				if dep.calls.Load() == 0 || samples != 0 {
					t.Errorf("%s: %d cache hits read %d samples; want none", c.Name, dep.calls.Load(), samples)
				}
			})
		})
	}
}

// callerCancelRecordsNothing: a call its caller cancelled is a truncated
// measurement, dropped.
func (c Outbound) callerCancelRecordsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 200})
		lim.Start()
		defer lim.Stop()
		dep := &dependency{answer: func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}}
		do := c.Client(lim, dep)
		var samples int
		done := make(chan struct{})
		go func() { samples, _ = watch(lim.Stats, time.Second); close(done) }()
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(5*time.Millisecond, cancel)
				req, _ := http.NewRequestWithContext(ctx, "GET", "http://dependency.test/x", nil)
				if resp, err := do(req); err == nil {
					_ = resp.Body.Close()
					t.Errorf("%s: a cancelled call returned no error", c.Name)
				}
			})
			time.Sleep(10 * time.Millisecond)
		}
		wg.Wait()
		<-done
		if dep.calls.Load() == 0 || samples != 0 {
			t.Errorf("%s: %d cancelled calls read %d samples; want none", c.Name, dep.calls.Load(), samples)
		}
	})
}

// deadlineBeforeTheSlot: a call whose deadline falls before its slot fails
// at once with ErrDeadline and never reaches the dependency.
func (c Outbound) deadlineBeforeTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MinRate: 1, MaxRate: 1, InitialRate: 1})
		dep := &dependency{answer: func(r *http.Request) (*http.Response, error) { return reply(r, http.StatusOK), nil }}
		do := c.Client(lim, dep)
		if _, err := call(do, time.Second); err != nil {
			t.Fatalf("%s: first call: %v", c.Name, err)
		}
		start := time.Now()
		_, err := call(do, 100*time.Millisecond) // the next slot is a second away
		if !errors.Is(err, agilelimiter.ErrDeadline) {
			t.Errorf("%s: call with a deadline before its slot: %v; want ErrDeadline", c.Name, err)
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("%s: the refused call waited %v; want none", c.Name, waited)
		}
		if n := dep.calls.Load(); n != 1 {
			t.Errorf("%s: the dependency got %d calls; want 1", c.Name, n)
		}
	})
}

// nilResponseIsAnError: a transport that breaks its contract, returning
// neither a response nor an error, gives the caller an error, not a panic.
func (c Outbound) nilResponseIsAnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
		dep := &dependency{answer: func(*http.Request) (*http.Response, error) { return nil, nil }}
		do := c.Client(lim, dep)
		var err error
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s: a (nil, nil) transport panicked: %v", c.Name, p)
				}
			}()
			_, err = call(do, time.Second)
		}()
		if err == nil {
			t.Errorf("%s: a (nil, nil) transport gave no error", c.Name)
		}
	})
}

// nilLimiterPanics: a nil limiter is a programming error, caught at
// construction rather than on the first call in production.
func (c Outbound) nilLimiterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("%s: Client with a nil limiter did not panic at construction", c.Name)
		}
	}()
	c.Client(nil, http.DefaultTransport)
}
