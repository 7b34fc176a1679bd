package agileecho_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
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

func TestWithRejection(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	var v verdicts
	ran := false
	var retryAfter string
	e := newEcho()
	e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict), agileecho.WithRetryAfter(3*time.Second),
		agileecho.WithHTTPError(), // WithRejection takes precedence
		agileecho.WithRejection(func(c echo.Context) error {
			retryAfter = c.Response().Header().Get("Retry-After")
			return echo.NewHTTPError(http.StatusServiceUnavailable, "busy")
		})))
	e.GET("/", func(c echo.Context) error { ran = true; return nil })
	lim.TryTake()
	defer lim.Release()

	rec := serve(e, http.MethodGet, "/")
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "busy") {
		t.Errorf("status %d, body %q; want the custom 503", rec.Code, rec.Body.String())
	}
	if retryAfter != "3" || rec.Header().Get("Retry-After") != "3" {
		t.Errorf("Retry-After seen by the rejection %q, sent %q; want WithRetryAfter's \"3\" in both", retryAfter, rec.Header().Get("Retry-After"))
	}
	if ran || len(v.all()) != 0 {
		t.Errorf("handler ran: %v, verdict calls: %d; want neither", ran, len(v.all()))
	}
}

// jsonErrors is an application's HTTPErrorHandler that renders every error
// as {"error": ..., "status": ...}.
func jsonErrors(err error, c echo.Context) {
	status, msg := http.StatusInternalServerError, err.Error()
	if he := (*echo.HTTPError)(nil); errors.As(err, &he) {
		status, msg = he.Code, fmt.Sprint(he.Message)
	}
	_ = c.JSON(status, map[string]any{"error": msg, "status": status})
}

// WithHTTPError hands the refusal to the application's error handler, which
// renders it in the application's JSON format; Retry-After is already set.
func TestWithHTTPError(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
	var v verdicts
	ran := false
	var logged []error
	e := newEcho()
	e.HTTPErrorHandler = jsonErrors
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc { // a logger outside the limiter
		return func(c echo.Context) error {
			err := next(c)
			logged = append(logged, err)
			return err
		}
	})
	e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict), agileecho.WithRetryAfter(2*time.Second), agileecho.WithHTTPError()))
	e.GET("/", func(c echo.Context) error { ran = true; return c.String(http.StatusOK, "ok") })
	lim.TryTake()

	for i := range 2 { // the second refusal is not changed by what the first one's handler saw
		rec := serve(e, http.MethodGet, "/")
		want := agilelimiter.NewRefusal(2 * time.Second)
		var got struct {
			Error  string
			Status int
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("refusal %d: body %q is not the handler's JSON: %v", i, rec.Body.String(), err)
		}
		if rec.Code != agilelimiter.RefusalStatus || got.Status != agilelimiter.RefusalStatus ||
			got.Error != strings.TrimSuffix(want.Body, "\n") || rec.Header().Get("Retry-After") != "2" {
			t.Errorf("refusal %d = %d %q Retry-After %q; want 429, the JSON of %q and Retry-After 2",
				i, rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"), strings.TrimSuffix(want.Body, "\n"))
		}
		if he := (*echo.HTTPError)(nil); len(logged) != i+1 || !errors.As(logged[i], &he) || he.Code != agilelimiter.RefusalStatus {
			t.Errorf("the middleware outside saw %v; want an *echo.HTTPError 429 for each refusal", logged)
		} else {
			he.Message = "changed by an error handler"
		}
	}
	if ran || len(v.all()) != 0 {
		t.Errorf("handler ran: %v, verdict calls: %d; want neither", ran, len(v.all()))
	}
	lim.Release()
	if rec := serve(e, http.MethodGet, "/"); rec.Code != http.StatusOK || rec.Body.String() != "ok" {
		t.Errorf("after the slot freed: %d %q; want 200 ok", rec.Code, rec.Body.String())
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

// The conformance suite checks that a slow upload is not service time on a
// handler that returns; here, the same when it returns an error (the error
// handler's page is not the handler's time either) or panics under Recover,
// and the request gets its own body back on every path.
func TestBodyTimedAndRestoredOnEveryPath(t *testing.T) {
	for _, ending := range []string{"returns", "fails", "panics"} {
		t.Run(ending, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, InitialLimit: 1})
				var v verdicts
				var got string
				e := newEcho()
				e.Use(middleware.Recover())
				e.Use(agileecho.Limit(lim, agileecho.WithVerdict(v.verdict)))
				e.POST("/upload", func(c echo.Context) error {
					b, err := io.ReadAll(c.Request().Body)
					if err != nil {
						t.Errorf("reading the body: %v", err)
					}
					got = string(b)
					time.Sleep(30 * time.Millisecond)
					switch ending {
					case "fails":
						return errBoom
					case "panics":
						panic(errBoom)
					}
					return c.NoContent(http.StatusCreated)
				})

				body := agiletest.SlowBody(200*time.Millisecond, "he", "ll", "o")
				req := httptest.NewRequest(http.MethodPost, "/upload", body)
				e.ServeHTTP(httptest.NewRecorder(), req)
				if got != "hello" {
					t.Errorf("handler read %q; want \"hello\"", got)
				}
				if s := v.only(t); s.duration != 30*time.Millisecond || s.panicked != (ending == "panics") {
					t.Errorf("verdict saw %+v; want 30ms (the handler's work, not the upload's 600ms)", s)
				}
				if req.Body != io.ReadCloser(body) {
					t.Errorf("request body after the chain = %T; want the client's own body back", req.Body)
				}
				if lim.InFlight() != 0 {
					t.Errorf("InFlight = %d; want 0", lim.InFlight())
				}
			})
		})
	}
}

// A request without a body keeps http.NoBody (handlers compare against it).
func TestNoBodyIsLeftAlone(t *testing.T) {
	e := newEcho()
	e.Use(agileecho.Limit(agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1})))
	var body io.ReadCloser
	e.POST("/", func(c echo.Context) error { body = c.Request().Body; return nil })
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Body = http.NoBody
	e.ServeHTTP(httptest.NewRecorder(), req)
	if body != http.NoBody {
		t.Errorf("handler saw body %T; want http.NoBody", body)
	}
}

// A client that hangs up before the answer leaves a truncated measurement,
// whether the handler then answers or returns the context's error (which
// echo's error handler turns into a 500): the default verdict drops both.
// Limit reads the context of the request as it arrived: one the chain derives
// with c.SetRequest and cancels on its way out (a timeout middleware's) is
// not the client's.
func TestClientGoneReadsTheClientsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 2, InitialLimit: 2})
		var outcomes []agilelimiter.Outcome
		var gone []bool
		e := newEcho()
		e.Use(agileecho.Limit(lim, agileecho.WithVerdict(func(x agilelimiter.Exchange) agilelimiter.Outcome {
			o := agilelimiter.DefaultServerVerdict(x)
			outcomes, gone = append(outcomes, o), append(gone, x.ClientGone)
			return o
		})))
		e.GET("/answers", func(c echo.Context) error {
			time.Sleep(time.Millisecond)
			return c.String(http.StatusOK, "too late")
		})
		e.GET("/fails", func(c echo.Context) error {
			<-c.Request().Context().Done()
			return c.Request().Context().Err() // echo's error handler makes it a 500
		})
		inner := e.Group("", func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				ctx, cancel := context.WithTimeout(c.Request().Context(), time.Second)
				defer cancel()
				c.SetRequest(c.Request().WithContext(ctx))
				return next(c)
			}
		})
		inner.GET("/timeout", func(c echo.Context) error { return c.String(http.StatusOK, "in time") })

		for _, path := range []string{"/answers", "/fails"} {
			ctx, hangup := context.WithCancel(context.Background())
			go func() { time.Sleep(500 * time.Microsecond); hangup() }()
			e.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil))
		}
		serve(e, http.MethodGet, "/timeout")

		if !reflect.DeepEqual(gone, []bool{true, true, false}) ||
			!reflect.DeepEqual(outcomes, []agilelimiter.Outcome{agilelimiter.Aborted, agilelimiter.Aborted, agilelimiter.Reached}) {
			t.Errorf("ClientGone %v, outcomes %v; want [true true false], [Aborted Aborted Reached]", gone, outcomes)
		}
	})
}
