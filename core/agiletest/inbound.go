// Package agiletest is the contract every agilelimiter adapter keeps, as a
// test suite each adapter module runs against its own constructor, in the
// manner of testing/fstest.TestFS and golang.org/x/net/nettest.TestConn.
//
// An inbound adapter (net/http's httpserver, gin, echo, fiber) runs
// [Inbound]; an outbound one (httpclient, resty) runs [Outbound]:
//
//	func TestConformance(t *testing.T) {
//		agiletest.Inbound{Name: "gin", Wrap: wrap}.Run(t)
//	}
//
// The suites check what SPEC §6 asks of every adapter and what the policy in
// agilelimiter's policy.go says a response means: the refusal is the core's
// [agilelimiter.Refusal], byte for byte; a slot comes back on every path; a
// handler's 503 or a dependency's refusal lowers the limit; cheap answers, a
// client that went away, a caller that cancelled and a cache hit record
// nothing; a slow upload's wait is not the service's; a nil limiter panics at
// construction. Everything runs in testing/synctest bubbles on virtual time,
// through httptest.ResponseRecorder and in-memory round trippers: no network,
// the same result on every machine. Framework-specific behaviour (error
// handlers, pooled contexts, re-entry) stays in each adapter's own tests.
package agiletest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Inbound is the contract an inbound adapter keeps.
type Inbound struct {
	// Name names the adapter in failures.
	Name string
	// Wrap returns h behind lim as the adapter serves it, with the
	// adapter's default options but a Retry-After of retryAfter (zero: the
	// default). It must panic when lim is nil: at construction, not on the
	// first request.
	Wrap func(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, retryAfter time.Duration) http.Handler
	// NoClientGone says the framework gives no signal that a client went
	// away before the answer (fasthttp): the suite skips that case.
	NoClientGone bool
}

// tick is the controller tick the suites run limiters at.
const tick = 100 * time.Millisecond

// Run runs the inbound contract as subtests of t.
func (c Inbound) Run(t *testing.T) {
	t.Helper()
	for _, tc := range []struct {
		name string
		fn   func(*testing.T)
	}{
		{"Refusal", c.refusal},
		{"RetryAfter", c.retryAfter},
		{"PanicReturnsTheSlot", c.panicReturnsTheSlot},
		{"SheddingLowersTheLimit", c.sheddingLowersTheLimit},
		{"CheapAnswersRecordNothing", c.cheapAnswersRecordNothing},
		{"ClientGoneRecordsNothing", c.clientGoneRecordsNothing},
		{"SlowUploadIsNotTheService", c.slowUploadIsNotTheService},
		{"Accounting", c.accounting},
		{"NilLimiterPanicsAtConstruction", c.nilLimiterPanics},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if c.Wrap == nil {
				t.Fatalf("%s: Inbound.Wrap is nil", c.Name)
			}
			tc.fn(t)
		})
	}
}

// serve sends one request through h and returns the recorded response.
func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// checkRefusal reports how w differs from the core's refusal for retryAfter.
func checkRefusal(t *testing.T, name string, w *httptest.ResponseRecorder, retryAfter time.Duration) {
	t.Helper()
	want := agilelimiter.NewRefusal(retryAfter)
	if w.Code != want.Status {
		t.Errorf("%s: refusal status %d; want %d", name, w.Code, want.Status)
	}
	for k, v := range want.Header {
		if got := w.Header().Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s: refusal header %s = %q; want %q", name, k, got, v[0])
		}
	}
	for k := range w.Header() {
		if _, ok := want.Header[k]; !ok {
			t.Errorf("%s: refusal header %s = %q; the refusal is the core's headers and nothing else", name, k, w.Header().Values(k))
		}
	}
	if got := w.Body.String(); got != want.Body {
		t.Errorf("%s: refusal body %q; want %q", name, got, want.Body)
	}
}

// refusal: at the limit, a request is refused at once with the core's
// refusal, byte for byte, and the handler does not run.
func (c Inbound) refusal(t *testing.T) { c.refuseWith(t, 0, agilelimiter.DefaultRetryAfter) }

// retryAfter: the Retry-After option reaches the refusal, rounded up.
func (c Inbound) retryAfter(t *testing.T) {
	c.refuseWith(t, 2500*time.Millisecond, 2500*time.Millisecond)
}

func (c Inbound) refuseWith(t *testing.T, opt, want time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})
		var runs int
		var mu sync.Mutex
		release := make(chan struct{})
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			runs++
			mu.Unlock()
			<-release
			_, _ = io.WriteString(w, "ok")
		}), opt)
		first := make(chan *httptest.ResponseRecorder)
		go func() { first <- serve(h, httptest.NewRequest("GET", "/a", nil)) }()
		synctest.Wait() // the first request holds the only slot
		w := serve(h, httptest.NewRequest("GET", "/b", nil))
		checkRefusal(t, c.Name, w, want)
		close(release)
		if w := <-first; w.Code != http.StatusOK || w.Body.String() != "ok" {
			t.Errorf("%s: admitted request got %d %q", c.Name, w.Code, w.Body)
		}
		if runs != 1 {
			t.Errorf("%s: handler ran %d times; want once (never for the refused request)", c.Name, runs)
		}
		if st := lim.Stats(); st.InFlight != 0 || st.Admitted != 1 || st.RejectedOverload != 1 {
			t.Errorf("%s: in flight %d, admitted %d, refused %d; want 0, 1, 1", c.Name, st.InFlight, st.Admitted, st.RejectedOverload)
		}
	})
}

// panicReturnsTheSlot: a handler that panics gives its slot back, and the
// panic goes on with its own value.
func (c Inbound) panicReturnsTheSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})
		type boom struct{ n int }
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/panic" {
				panic(boom{7})
			}
			_, _ = io.WriteString(w, "ok")
		}), 0)
		for range 3 {
			func() {
				defer func() {
					if p := recover(); p != nil && p != (boom{7}) {
						t.Errorf("%s: panic value %v; want the handler's own", c.Name, p)
					}
				}()
				serve(h, httptest.NewRequest("GET", "/panic", nil))
			}()
			if n := lim.InFlight(); n != 0 {
				t.Fatalf("%s: %d slots held after a panic; want 0", c.Name, n)
			}
		}
		if w := serve(h, httptest.NewRequest("GET", "/", nil)); w.Code != http.StatusOK {
			t.Errorf("%s: after three panics a request got %d; want 200", c.Name, w.Code)
		}
	})
}

// load runs clients requests in a closed loop through h until stop, each
// built by req, and returns the statuses they got.
func load(h http.Handler, clients int, d time.Duration, req func() *http.Request) map[int]int {
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				w := serve(h, req())
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
				// A client thinks between requests (longer after a
				// refusal): a closed loop on a 50µs handler would send
				// hundreds of thousands of requests, seconds of work under
				// the race detector for nothing the contract needs.
				if w.Code == agilelimiter.RefusalStatus {
					time.Sleep(5 * time.Millisecond)
				} else {
					time.Sleep(2 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return codes
}

// watch sums the samples the controller of st read, tick by tick, for d.
func watch(st func() agilelimiter.Stats, d time.Duration) (samples, unreachable int) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(tick)
		s := st()
		samples += s.Samples
		unreachable += s.Unreachable
	}
	return samples, unreachable
}

// sheddingLowersTheLimit: a handler's own 503 (a pool ran dry) brings the
// limit down to its floor.
func (c Inbound) sheddingLowersTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// SLOTarget anchors the Unreachable answers: this handler never
		// yields a latency sample for them to stand above.
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
			MinLimit: 2, MaxLimit: 64, InitialLimit: 32, SLOTarget: 100 * time.Millisecond, TickInterval: tick,
		})
		lim.Start()
		defer lim.Stop()
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		}), 0)
		load(h, 20, time.Second, func() *http.Request { return httptest.NewRequest("GET", "/", nil) })
		if got := lim.Limit(); got != 2 {
			t.Errorf("%s: limit %d after 1s of 503s from the handler; want its floor, 2", c.Name, got)
		}
	})
}

// cheapAnswersRecordNothing: 404s, 401s and a handler's own 429s (a
// per-client quota) are about the client: nothing is recorded and the limit
// does not move.
func (c Inbound) cheapAnswersRecordNothing(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusUnauthorized, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 40, InitialLimit: 20, TickInterval: tick})
				lim.Start()
				defer lim.Stop()
				h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(50 * time.Microsecond)
					w.WriteHeader(status)
				}), 0)
				var samples int
				done := make(chan struct{})
				go func() { samples, _ = watch(lim.Stats, 2*time.Second); close(done) }()
				codes := load(h, 10, 2*time.Second, func() *http.Request { return httptest.NewRequest("GET", "/x", nil) })
				<-done
				if codes[status] == 0 {
					t.Fatalf("%s: no %d answered (%v)", c.Name, status, codes)
				}
				if samples != 0 || lim.Limit() != 20 {
					t.Errorf("%s: %d answers of %d read %d samples and moved the limit 20 → %d; want none and 20",
						c.Name, codes[status], status, samples, lim.Limit())
				}
			})
		})
	}
}

// clientGoneRecordsNothing: a request whose client went away before the
// answer (its context cancelled, as net/http does when the connection
// closes) is a truncated measurement, dropped: a client that hangs up after
// a millisecond is not a fast, healthy service. A server-side deadline that
// passed is not a client gone: that answer is a real, slow one, recorded.
func (c Inbound) clientGoneRecordsNothing(t *testing.T) {
	if c.NoClientGone {
		t.Skipf("%s: the framework gives no signal that a client went away", c.Name)
	}
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 40, InitialLimit: 20, TickInterval: tick})
		lim.Start()
		defer lim.Stop()
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done() // a handler that finishes anyway, once the client is gone
			_, _ = io.WriteString(w, "too late")
		}), 0)
		send := func(n int, ctxFor func() (context.Context, context.CancelFunc)) (samples int) {
			done := make(chan struct{})
			go func() { samples, _ = watch(lim.Stats, 2*time.Second); close(done) }()
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					ctx, cancel := ctxFor()
					defer cancel()
					serve(h, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
				})
				time.Sleep(5 * time.Millisecond)
			}
			wg.Wait()
			<-done
			return samples
		}
		gone := send(200, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(time.Millisecond, cancel) // the client hangs up
			return ctx, cancel
		})
		if gone != 0 || lim.Limit() != 20 {
			t.Errorf("%s: 200 requests whose client left after 1ms read %d samples and moved the limit 20 → %d; want none and 20",
				c.Name, gone, lim.Limit())
		}
		if n := lim.InFlight(); n != 0 {
			t.Errorf("%s: %d slots held after every client left", c.Name, n)
		}
		timedOut := send(50, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 30*time.Millisecond) // a server-side timeout
		})
		if timedOut == 0 {
			t.Errorf("%s: 50 requests that ran into a server-side deadline read no samples; a timeout is a real, slow answer", c.Name)
		}
	})
}

// slowUploadIsNotTheService: the time a handler spends waiting for a slow
// client's body is the client's: the recorded latency is the handler's own
// 10 ms, not the 500 ms the upload took.
func (c Inbound) slowUploadIsNotTheService(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64, InitialLimit: 64, TickInterval: tick})
		lim.Start()
		defer lim.Stop()
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil || string(body) != "xxxxx" {
				http.Error(w, "bad body", http.StatusBadRequest)
				return
			}
			time.Sleep(10 * time.Millisecond)
			_, _ = io.WriteString(w, "ok")
		}), 0)
		var wg sync.WaitGroup
		for range 3 {
			for range 16 {
				wg.Go(func() {
					r := httptest.NewRequest("POST", "/upload", SlowBody(100*time.Millisecond, "x", "x", "x", "x", "x"))
					r.ContentLength = -1
					if w := serve(h, r); w.Code != http.StatusOK {
						t.Errorf("%s: upload got %d %q", c.Name, w.Code, w.Body)
					}
				})
			}
			wg.Wait()
			time.Sleep(tick) // the round closes on the next tick
		}
		st := lim.Stats()
		if st.P99 > 50*time.Millisecond || st.P99 < 10*time.Millisecond {
			t.Errorf("%s: p99 %v for a 10ms handler behind 500ms uploads; want about 10ms", c.Name, st.P99)
		}
	})
}

// accounting: many clients at once against a fixed limit: every request is
// admitted or refused, the counters agree with what clients saw, and no slot
// is left held.
func (c Inbound) accounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: 4, MaxLimit: 4, InitialLimit: 4})
		h := c.Wrap(lim, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(10 * time.Millisecond)
			_, _ = io.WriteString(w, "ok")
		}), 0)
		var mu sync.Mutex
		codes := map[int]int{}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				time.Sleep(time.Duration(i%7) * time.Millisecond)
				w := serve(h, httptest.NewRequest("GET", "/", strings.NewReader("")))
				mu.Lock()
				codes[w.Code]++
				mu.Unlock()
			})
		}
		wg.Wait()
		st := lim.Stats()
		ok, refused := codes[http.StatusOK], codes[agilelimiter.RefusalStatus]
		if ok+refused != 50 || ok < 4 || refused == 0 {
			t.Errorf("%s: statuses %v for 50 requests at a limit of 4", c.Name, codes)
		}
		if st.Admitted != uint64(ok) || st.RejectedOverload != uint64(refused) || st.InFlight != 0 {
			t.Errorf("%s: admitted %d, refused %d, in flight %d; clients saw %d admitted, %d refused",
				c.Name, st.Admitted, st.RejectedOverload, st.InFlight, ok, refused)
		}
	})
}

// nilLimiterPanics: a nil limiter is a programming error, caught at
// construction rather than on the first request in production.
func (c Inbound) nilLimiterPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("%s: Wrap with a nil limiter did not panic at construction", c.Name)
		}
	}()
	c.Wrap(nil, http.NotFoundHandler(), 0)
}

// SlowBody returns a request body a slow client sends: each Read waits
// wait (on the time package's clock, so virtual inside a synctest bubble)
// and then yields the next of chunks, until they run out. Adapters' own
// tests use it to check that a slow upload is not read as a slow service.
func SlowBody(wait time.Duration, chunks ...string) io.ReadCloser {
	return &slowBody{chunks: chunks, wait: wait}
}

type slowBody struct {
	chunks []string
	wait   time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.chunks) == 0 {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	time.Sleep(b.wait)
	n := copy(p, b.chunks[0])
	if b.chunks[0] = b.chunks[0][n:]; b.chunks[0] == "" {
		b.chunks = b.chunks[1:]
	}
	return n, nil
}

func (b *slowBody) Close() error { return nil }
