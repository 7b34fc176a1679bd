package httpserver_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
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

func TestThirdRequestAtLimitTwoIsRefused(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 2, InitialLimit: 2})
	var ran atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	var v verdicts
	srv := httptest.NewServer(httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ran.Add(1)
		entered <- struct{}{}
		<-release
	}), lim, httpserver.WithVerdict(v.verdict)))
	defer srv.Close()

	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	<-entered
	<-entered

	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != agilelimiter.RefusalStatus {
		t.Errorf("third request: status %d, want %d", resp.StatusCode, agilelimiter.RefusalStatus)
	}
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	if want := agilelimiter.NewRefusal(time.Second).Body; string(body) != want {
		t.Errorf("body = %q, want %q", body, want)
	}
	if n := ran.Load(); n != 2 {
		t.Errorf("handler ran %d times, want 2", n)
	}
	if n := v.calls.Load(); n != 0 {
		t.Errorf("verdict ran %d times before any admitted request finished, want 0", n)
	}

	close(release)
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusOK {
			t.Errorf("admitted request %d: status %d, want 200", i, c)
		}
	}
	if n := v.calls.Load(); n != 2 {
		t.Errorf("verdict ran %d times, want 2 (the refusal is never observed)", n)
	}
	st := lim.Stats()
	if st.InFlight != 0 || st.Admitted != 2 || st.RejectedOverload != 1 {
		t.Errorf("stats: in flight %d, admitted %d, rejected %d; want 0, 2, 1", st.InFlight, st.Admitted, st.RejectedOverload)
	}
}

func TestWithRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{7 * time.Second, "7"},
		{1500 * time.Millisecond, "2"},
		{0, "1"},
	} {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
		lim.TryTake() // the only slot is busy
		h := httpserver.Wrap(http.NotFoundHandler(), lim, httpserver.WithRetryAfter(tc.d))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code != agilelimiter.RefusalStatus || rec.Header().Get("Retry-After") != tc.want {
			t.Errorf("WithRetryAfter(%v): status %d, Retry-After %q; want %d, %q",
				tc.d, rec.Code, rec.Header().Get("Retry-After"), agilelimiter.RefusalStatus, tc.want)
		}
		lim.Release()
	}
}

func TestPanicReturnsSlotAndPropagates(t *testing.T) {
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

// flood runs clients concurrent callers against h for d of virtual time. A
// refused caller waits 5ms before it tries again.
func flood(h http.Handler, clients int, d time.Duration) {
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(end) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
				if rec.Code == agilelimiter.RefusalStatus {
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
}

func TestCheapErrorsDoNotRaiseLimit(t *testing.T) {
	const initial = 8
	for _, tc := range []struct {
		status int
		rises  bool
	}{
		{http.StatusNotFound, false},
		{http.StatusUnauthorized, false},
		{http.StatusOK, true},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200, InitialLimit: initial})
				lim.Start()
				defer lim.Stop()
				h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					time.Sleep(5 * time.Millisecond)
					w.WriteHeader(tc.status)
				}), lim)
				flood(h, 60, 500*time.Millisecond)
				got := lim.Limit()
				if tc.rises && got <= initial {
					t.Errorf("instant %ds from 60 clients: limit %d, want above %d", tc.status, got, initial)
				}
				if !tc.rises && got != initial {
					t.Errorf("instant %ds from 60 clients: limit %d, want it to stay %d", tc.status, got, initial)
				}
			})
		})
	}
}

func TestShedding503DrivesLimitToMin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// SLOTarget anchors the Unreachable outcomes: this handler never
		// yields a latency sample for them to stand above.
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
			MinLimit: 2, MaxLimit: 64, InitialLimit: 32, SLOTarget: 100 * time.Millisecond,
		})
		lim.Start()
		defer lim.Stop()
		h := httpserver.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(5 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		}), lim)
		flood(h, 20, time.Second)
		if got := lim.Limit(); got != 2 {
			t.Errorf("limit after 1s of 503s = %d, want MinLimit 2", got)
		}
	})
}

func TestStatsHandler(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 16, InitialLimit: 3})
	lim.TryTake() // one request in flight
	defer lim.Release()

	rec := httptest.NewRecorder()
	httpserver.StatsHandler(lim).ServeHTTP(rec, httptest.NewRequest("GET", "/debug/limiter", nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var rep httpserver.StatsReport
	if err := json.NewDecoder(rec.Body).Decode(&rep); err != nil {
		t.Fatalf("decoding %q: %v", rec.Body.String(), err)
	}
	if rep.Limit != 3 || rep.InFlight != 1 || rep.Stats.Admitted != 1 {
		t.Errorf("report: limit %d, in flight %d, admitted %d; want 3, 1, 1", rep.Limit, rep.InFlight, rep.Stats.Admitted)
	}
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
