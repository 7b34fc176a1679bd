package httpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

// verdicts counts verdict calls and remembers the last status, then defers
// to the default policy.
type verdicts struct {
	calls  atomic.Int64
	status atomic.Int64
}

func (v *verdicts) verdict(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
	v.calls.Add(1)
	v.status.Store(int64(status))
	return httpserver.DefaultVerdict(r, status, h, d)
}

// A handler that panics after writing 200 reads as a 500 to the verdict: the
// status already sent must not hide the panic.
func TestPanicIsA500ToTheVerdict(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
	boom := &struct{ msg string }{"boom"}
	var v verdicts
	h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK) // a status already sent must not hide the panic
		panic(boom)
	}), lim, httpserver.WithVerdict(v.verdict))

	func() {
		defer func() {
			if got := recover(); got != boom {
				t.Errorf("recovered %v, want the handler's own panic value", got)
			}
		}()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		t.Error("ServeHTTP returned normally; the panic was swallowed")
	}()
	if n := lim.InFlight(); n != 0 {
		t.Errorf("in flight after a panic = %d, want 0", n)
	}
	if v.calls.Load() != 1 || v.status.Load() != http.StatusInternalServerError {
		t.Errorf("verdict calls %d, status %d; want 1, 500", v.calls.Load(), v.status.Load())
	}
}

// The stats document is one flat object of snake_case keys, every duration
// in milliseconds as a number and named so: after 200 requests of exactly
// 20 ms (virtual time), the p99 and the floor read 20 and a little.
func TestStatsHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 16, InitialLimit: 3})
		lim.Start()
		defer lim.Stop()
		work := httpserver.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			time.Sleep(20 * time.Millisecond)
		}), lim)
		for range 200 {
			work.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/work", nil))
		}
		lim.TryTake() // one request in flight
		defer lim.Release()
		// A controller tick may fall on the last request's instant: let it
		// run before the document and Stats are read, or they may straddle it.
		synctest.Wait()

		rec := httptest.NewRecorder()
		httpserver.StatsHandler(lim).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/limiter", nil))
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Fatalf("decoding %q: %v", rec.Body.String(), err)
		}
		keys := slices.Sorted(maps.Keys(doc))
		want := []string{"admitted", "baseline_ms", "decision", "high_ms", "in_flight", "limit", "p50_ms", "p99_ms",
			"peak_in_flight", "rejected_overload", "samples", "ticks", "unreachable"}
		if !slices.Equal(keys, want) {
			t.Errorf("keys %q,\nwant %q", keys, want)
		}
		// The quantiles come from the core's histogram, whose bucket for 20 ms
		// reads a little above it: the same figure as Stats, in milliseconds.
		st := lim.Stats()
		msOf := func(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }
		for k, v := range map[string]float64{
			"p99_ms": msOf(st.P99), "p50_ms": msOf(st.P50), "baseline_ms": msOf(st.Baseline), "high_ms": msOf(st.High),
			"in_flight": 1, "admitted": 201, "rejected_overload": 0,
		} {
			if doc[k] != v {
				t.Errorf("%s = %v, want %v", k, doc[k], v)
			}
		}
		for _, k := range []string{"p99_ms", "p50_ms", "baseline_ms"} {
			if v, _ := doc[k].(float64); v < 20 || v > 21 {
				t.Errorf("%s = %v, want 20 ms and a little", k, doc[k])
			}
		}
		if l, ok := doc["limit"].(float64); !ok || l != math.Trunc(l) || l < 1 || l > 16 {
			t.Errorf("limit = %v, want a whole number of requests from 1 to 16", doc["limit"])
		}
	})
}

func TestWriterInterfacesSurviveTheWrapper(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
	var v verdicts
	proceed := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Errorf("ResponseController.SetWriteDeadline through the wrapper: %v", err)
		}
		io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-proceed // the client has read "first" before the handler goes on
		if _, err := w.(io.ReaderFrom).ReadFrom(strings.NewReader("second\n")); err != nil {
			t.Errorf("ReadFrom: %v", err)
		}
	})
	mux.HandleFunc("/hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Errorf("Hijack through the wrapper: %v", err)
			return
		}
		defer conn.Close()
		brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nraw ok")
		brw.Flush()
	})
	srv := httptest.NewServer(httpserver.Wrap(mux, lim, httpserver.WithVerdict(v.verdict)))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); line != "first\n" || err != nil {
		t.Fatalf("first flushed chunk = %q, %v", line, err)
	}
	close(proceed)
	if rest, _ := io.ReadAll(br); string(rest) != "second\n" {
		t.Errorf("rest of the stream = %q, want %q", rest, "second\n")
	}
	resp.Body.Close()

	resp, err = http.Get(srv.URL + "/hijack")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "raw ok" {
		t.Errorf("hijacked response body = %q, want %q", body, "raw ok")
	}
	// The verdict runs as the handler returns, and the slot is released just
	// after it, both possibly a moment after the client has read the hijacked
	// connection's last byte.
	for deadline := time.Now().Add(5 * time.Second); (v.calls.Load() < 2 || lim.InFlight() != 0) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if v.calls.Load() != 2 || v.status.Load() != http.StatusSwitchingProtocols {
		t.Errorf("verdicts %d, last status %d; want 2, 101 for a hijack", v.calls.Load(), v.status.Load())
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("in flight = %d, want 0", n)
	}
}

func TestWithSkip(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	lim.TryTake() // saturated
	defer lim.Release()
	var v verdicts
	h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), lim,
		httpserver.WithVerdict(v.verdict),
		httpserver.WithSkip(func(r *http.Request) bool { return r.URL.Path == "/healthz" }))

	for _, tc := range []struct {
		path string
		want int
	}{{"/healthz", http.StatusOK}, {"/work", agilelimiter.RefusalStatus}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", tc.path, nil))
		if rec.Code != tc.want {
			t.Errorf("%s while saturated: status %d, want %d", tc.path, rec.Code, tc.want)
		}
	}
	if n := v.calls.Load(); n != 0 {
		t.Errorf("verdict ran %d times; a skipped request must not be observed", n)
	}
	if st := lim.Stats(); st.Admitted != 1 || st.InFlight != 1 {
		t.Errorf("admitted %d, in flight %d; a skipped request must not take a slot", st.Admitted, st.InFlight)
	}
}

// A client that hangs up is not a fast success. Over a real connection the
// client cancels its request while the handler waits; net/http cancels the
// request's context, the handler returns at once (writing nothing, so the
// status reads 200) and the default verdict must drop it (issue 14).
func TestClientGoneIsDropped(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
	entered := make(chan struct{})
	seen := make(chan agilelimiter.Outcome, 1)
	srv := httptest.NewServer(httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	}), lim, httpserver.WithVerdict(func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
		o := httpserver.DefaultVerdict(r, status, h, d)
		seen <- o
		return o
	})))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-entered
		cancel()
	}()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	if _, err := http.DefaultClient.Do(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if o := <-seen; o != agilelimiter.Aborted {
		t.Errorf("a request whose client hung up: outcome %v, want Aborted", o)
	}
}

// DefaultVerdict reads a cancelled request context as a client gone away,
// but a deadline an outer middleware set and the handler outran is the
// service being slow: that must still count.
func TestDefaultVerdictReadsTheRequestContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		status int
		want   agilelimiter.Outcome
	}{
		{"live 200", context.Background(), 200, agilelimiter.Reached},
		{"live 503", context.Background(), 503, agilelimiter.Unreachable},
		{"live 429", context.Background(), 429, agilelimiter.Aborted},
		{"client gone 200", cancelled, 200, agilelimiter.Aborted},
		{"client gone 503", cancelled, 503, agilelimiter.Aborted},
		{"deadline passed 200", expired, 200, agilelimiter.Reached},
	} {
		r := httptest.NewRequestWithContext(tc.ctx, "GET", "/x", nil)
		if got := httpserver.DefaultVerdict(r, tc.status, http.Header{}, time.Millisecond); got != tc.want {
			t.Errorf("%s: DefaultVerdict = %v, want %v", tc.name, got, tc.want)
		}
	}
	if got := httpserver.DefaultVerdict(nil, 200, nil, 0); got != agilelimiter.Reached {
		t.Errorf("DefaultVerdict(nil request) = %v, want Reached", got)
	}
}

// A slow upload is the client's time, not the service's: the handler reads a
// body the client sends over 500ms, then works 10ms, and the verdict sees
// 10ms (issue 14; the conformance suite checks what the controller records).
// The request's body is the client's own again once the handler has returned,
// a panic included.
func TestSlowUploadIsNotServiceTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const work = 10 * time.Millisecond
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
		var got []time.Duration
		h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if b, err := io.ReadAll(r.Body); err != nil || string(b) != "hello" {
				t.Errorf("body %q, %v; want hello", b, err)
			}
			time.Sleep(work)
			if r.URL.Path == "/panic" {
				panic("boom")
			}
		}), lim, httpserver.WithVerdict(func(r *http.Request, status int, h http.Header, d time.Duration) agilelimiter.Outcome {
			got = append(got, d)
			return httpserver.DefaultVerdict(r, status, h, d)
		}))

		for _, path := range []string{"/upload", "/panic"} {
			pr, pw := io.Pipe()
			go func() {
				for _, c := range "hello" {
					time.Sleep(100 * time.Millisecond)
					pw.Write([]byte{byte(c)})
				}
				pw.Close()
			}()
			req := httptest.NewRequest("POST", path, pr)
			body := req.Body
			func() {
				defer func() { _ = recover() }()
				h.ServeHTTP(httptest.NewRecorder(), req)
			}()
			if req.Body != body {
				t.Errorf("%s: request body after the handler is %T, want the client's own back", path, req.Body)
			}
		}
		if len(got) != 2 || got[0] != work || got[1] != work {
			t.Errorf("the verdict saw %v, want the handler's own %v twice", got, work)
		}
	})
}

// Requests without a body keep theirs (nil or http.NoBody): there is nothing
// to wait for, and nothing to time.
func TestNoBodyIsLeftAlone(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
	var seen io.ReadCloser
	h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Body }), lim)
	for _, body := range []io.ReadCloser{nil, http.NoBody} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Body = body
		h.ServeHTTP(httptest.NewRecorder(), req)
		if seen != body || req.Body != body {
			t.Errorf("body %v: the handler saw %v, and %v after it", body, seen, req.Body)
		}
	}
}

// The refusal is agilelimiter's, byte for byte: its status, exactly its
// headers and its body, nothing else.
func TestRefusalIsCoresExactly(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	lim.TryTake()
	defer lim.Release()
	want := agilelimiter.NewRefusal(3 * time.Second)
	rec := httptest.NewRecorder()
	httpserver.Wrap(http.NotFoundHandler(), lim, httpserver.WithRetryAfter(3*time.Second)).
		ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != want.Status || !reflect.DeepEqual(rec.Header(), http.Header(want.Header)) || rec.Body.String() != want.Body {
		t.Errorf("refusal: %d %v %q; want %d %v %q", rec.Code, rec.Header(), rec.Body, want.Status, want.Header, want.Body)
	}
}

// A custom rejection finds Retry-After already set, honouring WithRetryAfter,
// and writes the rest itself.
func TestWithRejectionKeepsRetryAfter(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	lim.TryTake()
	defer lim.Release()
	h := httpserver.Wrap(http.NotFoundHandler(), lim,
		httpserver.WithRetryAfter(7*time.Second),
		httpserver.WithRejection(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if got := w.Header().Get("Retry-After"); got != "7" {
				t.Errorf("Retry-After before the custom rejection = %q, want 7", got)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"busy"}`)
		})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Body.String() != `{"error":"busy"}` || rec.Header().Get("Retry-After") != "7" {
		t.Errorf("custom rejection: %d %v %q", rec.Code, rec.Header(), rec.Body)
	}
	if rec.Header().Get("X-Content-Type-Options") != "" || rec.Header().Get("Content-Length") != "" {
		t.Errorf("custom rejection got the default refusal's headers too: %v", rec.Header())
	}
}

// A nil limiter is a mistake at construction, not on the first request.
func TestNilLimiterPanicsAtConstruction(t *testing.T) {
	for name, build := range map[string]func(){
		"Wrap":       func() { httpserver.Wrap(http.NotFoundHandler(), nil) },
		"Middleware": func() { httpserver.Middleware(nil) },
	} {
		func() {
			defer func() {
				want := "httpserver: " + name + " with a nil limiter"
				if got := recover(); got != want {
					t.Errorf("%s(nil limiter) panicked with %v, want %q", name, got, want)
				}
			}()
			build()
		}()
	}
}

// A throttled client must not lower everyone's limit. A per-client quota
// inside the wrapper answers ten greedy clients 429 at once, while twenty
// others call a 10ms route: the handler's 429s are about those clients, not
// the service's capacity (issue 14), so the limit stays where the legitimate
// traffic puts it and none of it is refused.
func TestThrottledClientsLowerNobodysLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const initial = 32
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 64, InitialLimit: initial})
		lim.Start()
		defer lim.Stop()
		h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Client") == "greedy" {
				time.Sleep(100 * time.Microsecond)
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}), lim)

		var sent, refused atomic.Int64
		var wg sync.WaitGroup
		end := time.Now().Add(3 * time.Second)
		for i := range 30 {
			greedy := i < 10
			wg.Go(func() {
				for time.Now().Before(end) {
					req := httptest.NewRequest("GET", "/", nil)
					if greedy {
						req.Header.Set("X-Client", "greedy")
					}
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if greedy {
						time.Sleep(time.Millisecond)
						continue
					}
					sent.Add(1)
					if rec.Code == agilelimiter.RefusalStatus {
						refused.Add(1)
						time.Sleep(5 * time.Millisecond)
					}
				}
			})
		}
		wg.Wait()
		if got := lim.Limit(); got < initial {
			t.Errorf("limit after 3s of throttled clients = %d, want at least %d (stats %+v)", got, initial, lim.Stats())
		}
		if n := refused.Load(); n > 0 {
			t.Errorf("%d of %d legitimate requests refused, want none", n, sent.Load())
		}
	})
}
