package agileecho_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileecho "github.com/agilelimiter/agilelimiter/echo"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// seen is what a verdict was shown, copied out of the Exchange (valid only
// during the call).
type seen struct {
	method, route string
	status        int
	err           error
	panicked      bool
	duration      time.Duration
	header        string // the X-Test response header
}

// verdicts records every exchange and answers with the default policy.
type verdicts struct {
	mu  sync.Mutex
	got []seen
}

func (v *verdicts) verdict(e agilelimiter.Exchange) agilelimiter.Outcome {
	s := seen{e.Method, e.Route, e.Status, e.Err, e.Panicked, e.Duration, ""}
	if e.Header != nil {
		s.header = e.Header.Get("X-Test")
	}
	v.mu.Lock()
	v.got = append(v.got, s)
	v.mu.Unlock()
	return agilelimiter.DefaultServerVerdict(e)
}

func (v *verdicts) all() []seen {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]seen(nil), v.got...)
}

// only returns the single exchange recorded, failing the test otherwise.
func (v *verdicts) only(t *testing.T) seen {
	t.Helper()
	got := v.all()
	if len(got) != 1 {
		t.Fatalf("verdict called %d times, want 1: %+v", len(got), got)
	}
	return got[0]
}

func newEcho() *echo.Echo {
	e := echo.New()
	e.Logger.SetOutput(io.Discard) // Recover logs every stack
	return e
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
	return rec
}

func TestRefusesAtLimitWithoutRunningHandler(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []agileecho.Option
		retryAfter string
	}{
		{"default", nil, "1"},
		{"WithRetryAfter rounds up", []agileecho.Option{agileecho.WithRetryAfter(2500 * time.Millisecond)}, "3"},
		{"WithRetryAfter zero is one second", []agileecho.Option{agileecho.WithRetryAfter(0)}, "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
			var v verdicts
			ran := 0
			e := newEcho()
			e.Use(agileecho.Limit(lim, append(tc.opts, agileecho.WithVerdict(v.verdict))...))
			e.GET("/", func(c echo.Context) error { ran++; return c.String(http.StatusOK, "ok") })

			if !lim.TryTake() { // another request holds the only slot
				t.Fatal("TryTake on an empty limiter failed")
			}
			rec := serve(e, http.MethodGet, "/")
			if rec.Code != agilelimiter.RefusalStatus {
				t.Errorf("status = %d, want %d", rec.Code, agilelimiter.RefusalStatus)
			}
			if got := rec.Header().Get("Retry-After"); got != tc.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tc.retryAfter)
			}
			if got, want := rec.Header().Get("Content-Type"), "text/plain; charset=utf-8"; got != want {
				t.Errorf("Content-Type = %q, want %q", got, want)
			}
			d, _ := agilelimiter.ParseRetryAfter(tc.retryAfter, time.Time{})
			if got, want := rec.Body.String(), agilelimiter.NewRefusal(d).Body; got != want {
				t.Errorf("body = %q, want %q", got, want)
			}
			if ran != 0 || len(v.all()) != 0 {
				t.Errorf("refused request ran the handler %d times and the verdict %d times, want 0 and 0", ran, len(v.all()))
			}
			if got := lim.Stats().RejectedOverload; got != 1 {
				t.Errorf("RejectedOverload = %d, want 1", got)
			}

			lim.Release()
			if rec := serve(e, http.MethodGet, "/"); rec.Code != http.StatusOK || ran != 1 {
				t.Errorf("after the slot freed: status %d, handler ran %d times; want 200 and 1", rec.Code, ran)
			}
			if lim.InFlight() != 0 {
				t.Errorf("InFlight = %d after the request, want 0", lim.InFlight())
			}
		})
	}
}

func TestWithRejection(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	var v verdicts
	ran := false
	e := newEcho()
	e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict), agileecho.WithRejection(func(c echo.Context) error {
		return echo.NewHTTPError(http.StatusServiceUnavailable, "busy")
	})))
	e.GET("/", func(c echo.Context) error { ran = true; return nil })
	lim.TryTake()
	defer lim.Release()

	rec := serve(e, http.MethodGet, "/")
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "" {
		t.Errorf("status %d, Retry-After %q; want the custom 503 without Retry-After", rec.Code, rec.Header().Get("Retry-After"))
	}
	if ran || len(v.all()) != 0 {
		t.Errorf("handler ran: %v, verdict calls: %d; want neither", ran, len(v.all()))
	}
}

// byErrorsAs is an HTTPErrorHandler that, unlike echo's default, unwraps
// errors to find an *echo.HTTPError.
func byErrorsAs(err error, c echo.Context) {
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
		_ = c.NoContent(he.Code)
		return
	}
	_ = c.NoContent(http.StatusInternalServerError)
}

func TestVerdictSeesTheStatusTheClientReceives(t *testing.T) {
	errPlain := errors.New("database is down")
	errWrapped := fmt.Errorf("load item: %w", echo.NewHTTPError(http.StatusServiceUnavailable))
	errInternal := echo.NewHTTPError(http.StatusInternalServerError).SetInternal(echo.NewHTTPError(http.StatusNotFound))
	for _, tc := range []struct {
		name         string
		method, path string
		errHandler   func(error, echo.Context) // nil: echo's default
		handler      echo.HandlerFunc
		want         int
		wantErr      error
		wantOutcome  agilelimiter.Outcome
	}{
		{name: "200", handler: func(c echo.Context) error { return c.String(http.StatusOK, "ok") }, want: 200},
		{name: "nothing written is 200", handler: func(c echo.Context) error { return nil }, want: 200},
		{name: "201", handler: func(c echo.Context) error { return c.NoContent(http.StatusCreated) }, want: 201},
		{
			name:    "HTTPError 503",
			handler: func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) },
			want:    503, wantOutcome: agilelimiter.Unreachable,
		},
		{
			name:    "plain error is echo's 500",
			handler: func(c echo.Context) error { return errPlain },
			want:    500, wantErr: errPlain,
		},
		{
			name:    "wrapped HTTPError under echo's default handler is 500",
			handler: func(c echo.Context) error { return errWrapped },
			want:    500, wantErr: errWrapped,
		},
		{
			name:       "wrapped HTTPError under an unwrapping handler is 503",
			errHandler: byErrorsAs,
			handler:    func(c echo.Context) error { return errWrapped },
			want:       503, wantErr: errWrapped, wantOutcome: agilelimiter.Unreachable,
		},
		{
			name:    "HTTPError with an internal HTTPError uses the internal code",
			handler: func(c echo.Context) error { return errInternal },
			want:    404, wantErr: errInternal, wantOutcome: agilelimiter.Aborted,
		},
		{
			name: "error after the response was committed keeps the committed status",
			handler: func(c echo.Context) error {
				_ = c.NoContent(http.StatusAccepted)
				return errPlain
			},
			want: 202, wantErr: errPlain,
		},
		{
			name: "HEAD with HTTPError 503", method: http.MethodHead,
			handler: func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) },
			want:    503, wantOutcome: agilelimiter.Unreachable,
		},
		{name: "unrouted path is 404", path: "/nowhere", want: 404, wantOutcome: agilelimiter.Aborted},
		{name: "wrong method is 405", method: http.MethodDelete, want: 405, wantOutcome: agilelimiter.Aborted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
			var v verdicts
			e := newEcho()
			errorHandler := tc.errHandler
			if errorHandler == nil {
				errorHandler = e.DefaultHTTPErrorHandler
			}
			handled := 0
			e.HTTPErrorHandler = func(err error, c echo.Context) { handled++; errorHandler(err, c) }
			e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
			h := tc.handler
			if h == nil {
				h = func(c echo.Context) error { return c.NoContent(http.StatusOK) }
			}
			e.Match([]string{http.MethodGet, http.MethodHead}, "/items/:id", func(c echo.Context) error {
				c.Response().Header().Set("X-Test", "set by handler")
				return h(c)
			})
			method, path := tc.method, tc.path
			if method == "" {
				method = http.MethodGet
			}
			if path == "" {
				path = "/items/7"
			}

			rec := serve(e, method, path)
			if rec.Code != tc.want {
				t.Errorf("client got %d, want %d", rec.Code, tc.want)
			}
			s := v.only(t)
			if s.status != rec.Code {
				t.Errorf("verdict saw status %d, client got %d", s.status, rec.Code)
			}
			if s.method != method {
				t.Errorf("verdict saw method %q, want %q", s.method, method)
			}
			if tc.handler != nil && (s.route != "/items/:id" || s.header != "set by handler") {
				t.Errorf("verdict saw route %q, X-Test %q; want the pattern and the handler's header", s.route, s.header)
			}
			if tc.wantErr != nil && s.err != tc.wantErr {
				t.Errorf("verdict saw error %v, want the handler's %v", s.err, tc.wantErr)
			}
			if s.panicked {
				t.Error("verdict saw Panicked for a request that did not panic")
			}
			if got := agilelimiter.DefaultServerVerdict(agilelimiter.Exchange{Status: s.status}); got != tc.wantOutcome {
				t.Errorf("outcome = %v, want %v", got, tc.wantOutcome)
			}
			wantHandled := 0
			if s.err != nil || rec.Code >= 400 {
				wantHandled = 1
			}
			if handled != wantHandled {
				t.Errorf("error handler ran %d times, want %d", handled, wantHandled)
			}
			if lim.InFlight() != 0 {
				t.Errorf("InFlight = %d, want 0", lim.InFlight())
			}
		})
	}
}

// The duration is the handler's, not the error page's: an error handler that
// takes a second must not make a 30ms handler read as a slow one.
func TestDurationEndsWhenTheHandlerReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
		var v verdicts
		e := newEcho()
		e.HTTPErrorHandler = func(err error, c echo.Context) {
			time.Sleep(time.Second)
			e.DefaultHTTPErrorHandler(err, c)
		}
		e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
		e.GET("/", func(c echo.Context) error {
			time.Sleep(30 * time.Millisecond)
			return errors.New("failed slowly")
		})
		if rec := serve(e, http.MethodGet, "/"); rec.Code != http.StatusInternalServerError {
			t.Fatalf("status = %d, want 500", rec.Code)
		}
		if got := v.only(t).duration; got != 30*time.Millisecond {
			t.Errorf("Duration = %v, want 30ms (the handler's time, not the error page's)", got)
		}
	})
}

var errBoom = errors.New("boom")

func TestPanicReturnsTheSlot(t *testing.T) {
	panicking := func(c echo.Context) error {
		time.Sleep(20 * time.Millisecond)
		panic(errBoom)
	}
	t.Run("recovery outside the adapter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
			var v verdicts
			e := newEcho()
			e.Use(middleware.Recover())
			e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
			e.GET("/panic", panicking)
			e.GET("/ok", func(c echo.Context) error { return c.NoContent(http.StatusOK) })

			if rec := serve(e, http.MethodGet, "/panic"); rec.Code != http.StatusInternalServerError {
				t.Errorf("status = %d, want 500 from Recover", rec.Code)
			}
			s := v.only(t)
			if s.status != 500 || !s.panicked || s.err != errBoom || s.duration != 20*time.Millisecond {
				t.Errorf("verdict saw %+v, want status 500, Panicked, the panic's error and 20ms", s)
			}
			if lim.InFlight() != 0 {
				t.Fatalf("InFlight = %d after a panic, want 0", lim.InFlight())
			}
			if rec := serve(e, http.MethodGet, "/ok"); rec.Code != http.StatusOK {
				t.Errorf("next request on the one slot: status %d, want 200", rec.Code)
			}
		})
	})
	t.Run("recovery inside the adapter", func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
		var v verdicts
		e := newEcho()
		e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
		e.Use(middleware.Recover())
		e.GET("/panic", func(c echo.Context) error { panic("boom") })

		if rec := serve(e, http.MethodGet, "/panic"); rec.Code != http.StatusInternalServerError {
			t.Errorf("status = %d, want 500 from Recover", rec.Code)
		}
		// Recover turned the panic into an error page before the adapter saw
		// it: the verdict reads the 500 the client got.
		if s := v.only(t); s.status != 500 || s.panicked {
			t.Errorf("verdict saw status %d, Panicked %v; want 500 and false", s.status, s.panicked)
		}
		if lim.InFlight() != 0 {
			t.Errorf("InFlight = %d after a panic, want 0", lim.InFlight())
		}
	})
	t.Run("no recovery: the panic continues with the same value", func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
		var v verdicts
		e := newEcho()
		e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
		e.GET("/panic", func(c echo.Context) error { panic(errBoom) })

		got := func() (r any) {
			defer func() { r = recover() }()
			serve(e, http.MethodGet, "/panic")
			return nil
		}()
		if got != errBoom {
			t.Errorf("recovered %v, want the handler's own panic value", got)
		}
		if s := v.only(t); s.status != 500 || !s.panicked {
			t.Errorf("verdict saw status %d, Panicked %v; want 500 and true", s.status, s.panicked)
		}
		if lim.InFlight() != 0 {
			t.Errorf("InFlight = %d after a panic, want 0", lim.InFlight())
		}
	})
}

// A handler that ends its goroutine with runtime.Goexit sent nothing and
// says nothing about capacity: the slot comes back and nothing is recorded.
func TestGoexitReturnsTheSlot(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	var v verdicts
	e := newEcho()
	e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
	e.GET("/", func(c echo.Context) error { runtime.Goexit(); return nil })

	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(e, http.MethodGet, "/")
	}()
	<-done
	if lim.InFlight() != 0 || len(v.all()) != 0 {
		t.Errorf("InFlight %d, verdict calls %d; want 0 and 0", lim.InFlight(), len(v.all()))
	}
}

func TestWithSkipperBypasses(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	var v verdicts
	e := newEcho()
	e.Use(agileecho.Limit(lim,
		agileecho.WithVerdict(v.verdict),
		agileecho.WithSkipper(func(c echo.Context) bool { return c.Path() == "/healthz" }),
	))
	ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
	e.GET("/healthz", ok)
	e.GET("/work", ok)
	lim.TryTake() // the service is saturated
	defer lim.Release()

	if rec := serve(e, http.MethodGet, "/healthz"); rec.Code != http.StatusOK {
		t.Errorf("skipped route: status %d, want 200 while saturated", rec.Code)
	}
	if rec := serve(e, http.MethodGet, "/work"); rec.Code != agilelimiter.RefusalStatus {
		t.Errorf("limited route: status %d, want %d", rec.Code, agilelimiter.RefusalStatus)
	}
	st := lim.Stats()
	if len(v.all()) != 0 || st.Admitted != 1 || st.RejectedOverload != 1 {
		t.Errorf("verdict calls %d, Admitted %d, RejectedOverload %d; want 0, 1 (ours), 1 (/work)",
			len(v.all()), st.Admitted, st.RejectedOverload)
	}
}

// swarm runs clients goroutines that request path through h until the
// virtual clock reaches until, and counts the statuses they got. A refused
// client waits as long as a request takes before retrying, so the bubble's
// clock moves.
func swarm(h http.Handler, clients int, until time.Time, path string) map[int]int {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		codes = map[int]int{}
	)
	for range clients {
		wg.Go(func() {
			for time.Now().Before(until) {
				rec := serve(h, http.MethodGet, path)
				mu.Lock()
				codes[rec.Code]++
				mu.Unlock()
				if rec.Code == agilelimiter.RefusalStatus {
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	wg.Wait()
	return codes
}

// loaded returns an echo whose every request, routed or not, takes 5ms of
// virtual time inside the adapter, so that 60 clients keep the limiter full
// and the controller has demand to react to.
func loaded(lim *agilelimiter.ConcurrencyLimiter, shed *atomic.Bool) *echo.Echo {
	e := newEcho()
	e.Use(agileecho.Limit(lim))
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			time.Sleep(5 * time.Millisecond)
			return next(c)
		}
	})
	e.GET("/ok", func(c echo.Context) error {
		if shed != nil && shed.Load() {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "pool exhausted")
		}
		return c.String(http.StatusOK, "ok")
	})
	return e
}

func TestNotFoundFloodDoesNotRaiseTheLimit(t *testing.T) {
	const initial = 5
	cfg := agilelimiter.ConcurrencyConfig{MinLimit: 1, MaxLimit: 100, InitialLimit: initial}
	for _, tc := range []struct {
		name, path string
		status     int
		raises     bool
	}{
		{"200s raise it", "/ok", http.StatusOK, true},
		{"404s do not", "/no/such/page", http.StatusNotFound, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.NewConcurrency(cfg)
				lim.Start()
				defer lim.Stop()
				codes := swarm(loaded(lim, nil), 60, time.Now().Add(3*time.Second), tc.path)
				if codes[tc.status] == 0 || codes[agilelimiter.RefusalStatus] == 0 {
					t.Fatalf("codes %v: want %d and refusals (demand above the limit)", codes, tc.status)
				}
				switch got := lim.Limit(); {
				case tc.raises && got < 8*initial:
					t.Errorf("limit after 3s of saturating %s = %d, want at least %d (codes %v)", tc.path, got, 8*initial, codes)
				case !tc.raises && got != initial:
					t.Errorf("limit after 3s of saturating %s = %d, want it held at %d (codes %v)", tc.path, got, initial, codes)
				}
			})
		})
	}
}

func TestHTTPError503DrivesTheLimitToMin(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const minLimit = 2
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: minLimit, MaxLimit: 100, InitialLimit: 10})
		lim.Start()
		defer lim.Stop()
		var shed atomic.Bool
		e := loaded(lim, &shed)

		swarm(e, 60, time.Now().Add(time.Second), "/ok")
		healthy := lim.Limit()
		if healthy < 4*minLimit {
			t.Fatalf("limit after a healthy second = %d, want well above MinLimit %d", healthy, minLimit)
		}
		shed.Store(true)
		codes := swarm(e, 60, time.Now().Add(2*time.Second), "/ok")
		if codes[http.StatusServiceUnavailable] == 0 {
			t.Fatalf("codes %v: want the handler's 503s", codes)
		}
		if got := lim.Limit(); got != minLimit {
			t.Errorf("limit after 2s of 503s = %d (from %d), want MinLimit %d", got, healthy, minLimit)
		}
	})
}

// Fifty clients on a real server, outside any bubble, with the controller
// running: the race detector watches the adapter, the semaphore never holds
// more than the limit, and every slot comes back whether the handler
// succeeded, failed or panicked.
func TestConcurrentClients(t *testing.T) {
	const limit = 5
	// MinLimit = MaxLimit pins the limit while the controller ticks, so that
	// "never above the limit" is a fixed bound.
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: limit, MaxLimit: limit, InitialLimit: limit, TickInterval: 5 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	var over, peak atomic.Int64
	e := newEcho()
	e.Use(middleware.Recover())
	e.Use(agileecho.Limit(lim))
	e.GET("/:kind", func(c echo.Context) error {
		n := int64(lim.InFlight())
		if n > int64(lim.Limit()) {
			over.Add(1)
		}
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(200 * time.Microsecond)
		switch c.Param("kind") {
		case "error":
			return errors.New("failed")
		case "panic":
			panic("boom")
		}
		return c.String(http.StatusOK, "ok")
	})
	srv := httptest.NewServer(e)
	client := srv.Client()
	client.Transport.(*http.Transport).MaxIdleConnsPerHost = 50

	const clients, each = 50, 30
	var wg sync.WaitGroup
	var ok, failed, refused, other atomic.Int64
	for i := range clients {
		wg.Go(func() {
			for j := range each {
				kind := [...]string{"ok", "ok", "error", "panic"}[(i+j)%4]
				resp, err := client.Get(srv.URL + "/" + kind)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusInternalServerError:
					failed.Add(1)
				case agilelimiter.RefusalStatus:
					refused.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	wg.Wait()
	srv.Close() // waits for every handler to return

	if over.Load() != 0 || peak.Load() > limit || peak.Load() < 1 {
		t.Errorf("in flight above the limit %d times, peak %d; want 0 and a peak in [1, %d]", over.Load(), peak.Load(), limit)
	}
	if lim.InFlight() != 0 {
		t.Errorf("InFlight = %d after every request finished, want 0", lim.InFlight())
	}
	st := lim.Stats()
	if other.Load() != 0 || ok.Load()+failed.Load()+refused.Load() != clients*each {
		t.Errorf("statuses: %d ok, %d 500, %d refused, %d other; want %d in the first three", ok.Load(), failed.Load(), refused.Load(), other.Load(), clients*each)
	}
	if st.Admitted != uint64(ok.Load()+failed.Load()) || st.RejectedOverload != uint64(refused.Load()) {
		t.Errorf("Admitted %d, RejectedOverload %d; clients saw %d answered and %d refused",
			st.Admitted, st.RejectedOverload, ok.Load()+failed.Load(), refused.Load())
	}
}
