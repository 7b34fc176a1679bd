package agilegin_test

import (
	"context"
	"errors"
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
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agilegin "github.com/agilelimiter/agilelimiter/gin"
	"github.com/gin-gonic/gin"
)

func init() { gin.SetMode(gin.ReleaseMode) }

// fixed returns a limiter whose limit is n and cannot move.
func fixed(n int) *agilelimiter.ConcurrencyLimiter {
	return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: n, MaxLimit: n, InitialLimit: n})
}

func serve(h http.Handler, method, target string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
	return w
}

// recorded collects the exchanges a verdict saw, then applies the default.
type recorded struct {
	mu sync.Mutex
	ex []agilelimiter.Exchange
}

func (r *recorded) verdict(e agilelimiter.Exchange) agilelimiter.Outcome {
	r.mu.Lock()
	e.Header = http.Header(nil) // valid only during the call
	r.ex = append(r.ex, e)
	r.mu.Unlock()
	return agilelimiter.DefaultServerVerdict(e)
}

func (r *recorded) all() []agilelimiter.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]agilelimiter.Exchange(nil), r.ex...)
}

func TestCustomRejectionAlwaysAbortsAndKeepsRetryAfter(t *testing.T) {
	lim := fixed(1)
	var ran atomic.Int32
	var retryAfter string
	r := gin.New()
	// This rejection forgets to abort; the handler must still not run.
	r.Use(agilegin.Limit(lim, agilegin.WithRetryAfter(3*time.Second), agilegin.WithRejection(func(c *gin.Context) {
		retryAfter = c.Writer.Header().Get("Retry-After")
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "busy"})
	})))
	r.GET("/work", func(c *gin.Context) { ran.Add(1) })
	lim.TryTake()
	defer lim.Release()

	w := serve(r, http.MethodGet, "/work")
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "busy") || ran.Load() != 0 {
		t.Errorf("custom refusal: %d %q, handler runs %d; want 503 with its body, 0 runs", w.Code, w.Body.String(), ran.Load())
	}
	if retryAfter != "3" || w.Header().Get("Retry-After") != "3" {
		t.Errorf("Retry-After seen by the rejection %q, sent %q; want WithRetryAfter's \"3\" in both", retryAfter, w.Header().Get("Retry-After"))
	}
}

func TestSkipBypassesLimiter(t *testing.T) {
	lim := fixed(1)
	var rec recorded
	r := gin.New()
	r.Use(agilegin.Limit(lim, agilegin.WithVerdict(rec.verdict),
		agilegin.WithSkip(func(c *gin.Context) bool { return c.Request.URL.Path == "/healthz" })))
	var inflight int
	r.GET("/healthz", func(c *gin.Context) { inflight = lim.InFlight(); c.String(http.StatusOK, "ok") })
	r.GET("/work", func(c *gin.Context) {})

	if w := serve(r, http.MethodGet, "/healthz"); w.Code != http.StatusOK || inflight != 0 {
		t.Errorf("skipped request on an idle limiter: %d, in flight while it ran %d; want 200, 0", w.Code, inflight)
	}
	lim.TryTake()
	defer lim.Release()
	if w := serve(r, http.MethodGet, "/healthz"); w.Code != http.StatusOK {
		t.Errorf("skipped request on a full limiter: %d; want 200", w.Code)
	}
	if w := serve(r, http.MethodGet, "/work"); w.Code != agilelimiter.RefusalStatus {
		t.Errorf("unskipped request on a full limiter: %d; want 429", w.Code)
	}
	if n := len(rec.all()); n != 0 {
		t.Errorf("verdict ran %d times for skipped requests; want 0", n)
	}
	if s := lim.Stats(); s.Admitted != 1 || s.RejectedOverload != 1 {
		t.Errorf("Admitted %d RejectedOverload %d; want 1 (the test's own TryTake) and 1", s.Admitted, s.RejectedOverload)
	}
}

func TestExchangeCarriesRouteMethodHeaderDuration(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := fixed(4)
		var rec recorded
		var header string
		r := gin.New()
		r.Use(agilegin.Limit(lim, agilegin.WithVerdict(func(e agilelimiter.Exchange) agilelimiter.Outcome {
			if e.Status == http.StatusCreated {
				header = e.Header.Get("X-Cache")
			}
			return rec.verdict(e)
		})))
		r.POST("/users/:id", func(c *gin.Context) {
			time.Sleep(30 * time.Millisecond)
			c.Header("X-Cache", "HIT")
			c.Status(http.StatusCreated)
		})

		serve(r, http.MethodPost, "/users/42")
		serve(r, http.MethodGet, "/nowhere/7")
		ex := rec.all()
		if len(ex) != 2 {
			t.Fatalf("verdict ran %d times; want 2", len(ex))
		}
		if e := ex[0]; e.Method != http.MethodPost || e.Route != "/users/:id" || e.Status != http.StatusCreated ||
			e.Duration != 30*time.Millisecond || e.Panicked || e.Err != nil || header != "HIT" {
			t.Errorf("exchange = %+v, X-Cache %q; want POST /users/:id 201 30ms, X-Cache HIT", e, header)
		}
		if e := ex[1]; e.Route != "/nowhere/7" || e.Status != http.StatusNotFound {
			t.Errorf("unmatched exchange = %+v; want the path as Route and 404", e)
		}
	})
}

func TestHandleContextTakesOneSlot(t *testing.T) {
	lim := fixed(1)
	var rec recorded
	r := gin.New()
	r.Use(agilegin.Limit(lim, agilegin.WithVerdict(rec.verdict)))
	r.GET("/old", func(c *gin.Context) {
		c.Request.URL.Path = "/new"
		r.HandleContext(c)
	})
	inflight := -1
	r.GET("/new", func(c *gin.Context) {
		inflight = lim.InFlight()
		c.String(http.StatusOK, "moved")
	})

	w := serve(r, http.MethodGet, "/old")
	if w.Code != http.StatusOK || w.Body.String() != "moved" || inflight != 1 {
		t.Errorf("rewritten request: %d %q, %d slots held in the inner handler; want 200 \"moved\", 1", w.Code, w.Body.String(), inflight)
	}
	if ex := rec.all(); len(ex) != 1 || ex[0].Route != "/old" || ex[0].Status != http.StatusOK {
		t.Errorf("exchanges = %+v; want one, route /old, 200", ex)
	}
	if lim.InFlight() != 0 {
		t.Errorf("InFlight = %d after the request; want 0", lim.InFlight())
	}
}

// renderErrors is the error-rendering middleware an application puts inside
// the adapter: it turns c.Errors into a 500 the client sees.
func renderErrors(c *gin.Context) {
	c.Next()
	if len(c.Errors) > 0 && !c.Writer.Written() {
		c.String(http.StatusInternalServerError, "internal error")
	}
}

var errDB = errors.New("db: connection reset")

func TestErrorReachesClientAndVerdict(t *testing.T) {
	t.Run("rendered inside", func(t *testing.T) {
		var rec recorded
		r := gin.New()
		r.Use(agilegin.Limit(fixed(1), agilegin.WithVerdict(rec.verdict)), renderErrors)
		r.GET("/q", func(c *gin.Context) { _ = c.Error(errDB) })

		w := serve(r, http.MethodGet, "/q")
		if w.Code != http.StatusInternalServerError || w.Body.String() != "internal error" {
			t.Errorf("client got %d %q; want the renderer's 500", w.Code, w.Body.String())
		}
		if ex := rec.all(); len(ex) != 1 || ex[0].Status != http.StatusInternalServerError || !errors.Is(ex[0].Err, errDB) {
			t.Errorf("exchanges = %+v; want one with 500 and Err wrapping errDB", ex)
		}
	})
	t.Run("no renderer", func(t *testing.T) {
		// c.Error alone leaves the client a 200; the verdict sees that 200 and
		// the error beside it.
		var rec recorded
		r := gin.New()
		r.Use(agilegin.Limit(fixed(1), agilegin.WithVerdict(rec.verdict)))
		r.GET("/q", func(c *gin.Context) { _ = c.Error(errDB) })

		w := serve(r, http.MethodGet, "/q")
		ex := rec.all()
		if len(ex) != 1 || ex[0].Status != w.Code || !errors.Is(ex[0].Err, errDB) {
			t.Errorf("client got %d; exchanges = %+v; want one with the client's status and Err wrapping errDB", w.Code, ex)
		}
		var ge *gin.Error
		if len(ex) == 1 && !errors.As(ex[0].Err, &ge) {
			t.Errorf("Err = %T; want a *gin.Error", ex[0].Err)
		}
	})
}

type panicValue struct{ msg string }

func TestPanicReleasesSlot(t *testing.T) {
	boom := &panicValue{"boom"}
	for _, tc := range []struct {
		name           string
		recoveryInside bool
		wantPanicked   bool
	}{
		{"recovery outside", false, true},
		{"recovery inside", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := fixed(1)
			var rec recorded
			var recovered any
			recovery := gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, v any) {
				recovered = v
				c.AbortWithStatus(http.StatusInternalServerError)
			})
			limit := agilegin.Limit(lim, agilegin.WithVerdict(rec.verdict))
			r := gin.New()
			if tc.recoveryInside {
				r.Use(limit, recovery)
			} else {
				r.Use(recovery, limit)
			}
			r.GET("/p", func(c *gin.Context) {
				c.Status(http.StatusOK) // the status still reads 200 when the panic unwinds
				panic(boom)
			})

			w := serve(r, http.MethodGet, "/p")
			if w.Code != http.StatusInternalServerError {
				t.Errorf("client got %d; want 500", w.Code)
			}
			if recovered != boom {
				t.Errorf("recovery saw %v; want the handler's own panic value", recovered)
			}
			if lim.InFlight() != 0 {
				t.Errorf("InFlight = %d after the panic; want 0", lim.InFlight())
			}
			if ex := rec.all(); len(ex) != 1 || ex[0].Status != http.StatusInternalServerError || ex[0].Panicked != tc.wantPanicked {
				t.Errorf("exchanges = %+v; want one with 500, Panicked %v", ex, tc.wantPanicked)
			}
			// The slot really is free: the next request is admitted.
			if w := serve(r, http.MethodGet, "/p"); w.Code == agilelimiter.RefusalStatus {
				t.Error("the request after a panic was refused")
			}
		})
	}
}

// The conformance suite checks that a slow upload is not service time on a
// handler that returns; here, the same when a panic unwinds through gin's
// Recovery outside Limit, and the request gets its own body back on both
// paths.
func TestBodyTimedAndRestoredOnEveryPath(t *testing.T) {
	for _, panics := range []bool{false, true} {
		t.Run(map[bool]string{false: "returns", true: "panics"}[panics], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := fixed(1)
				var rec recorded
				var got string
				r := gin.New()
				r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) { c.AbortWithStatus(500) }))
				r.Use(agilegin.Limit(lim, agilegin.WithVerdict(rec.verdict)))
				r.POST("/upload", func(c *gin.Context) {
					b, err := io.ReadAll(c.Request.Body)
					if err != nil {
						t.Errorf("reading the body: %v", err)
					}
					got = string(b)
					time.Sleep(30 * time.Millisecond)
					if panics {
						panic("boom")
					}
					c.Status(http.StatusCreated)
				})

				body := agiletest.SlowBody(200*time.Millisecond, "he", "ll", "o")
				req := httptest.NewRequest(http.MethodPost, "/upload", body)
				r.ServeHTTP(httptest.NewRecorder(), req)
				if got != "hello" {
					t.Errorf("handler read %q; want \"hello\"", got)
				}
				if ex := rec.all(); len(ex) != 1 || ex[0].Duration != 30*time.Millisecond || ex[0].Panicked != panics {
					t.Errorf("exchanges = %+v; want one of 30ms (the handler's work, not the upload's 600ms), Panicked %v", ex, panics)
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

// A request without a body keeps http.NoBody (handlers and gin compare against it).
func TestNoBodyIsLeftAlone(t *testing.T) {
	r := gin.New()
	r.Use(agilegin.Limit(fixed(1)))
	var body io.ReadCloser
	r.POST("/", func(c *gin.Context) { body = c.Request.Body })
	req := httptest.NewRequest(http.MethodPost, "/", nil)
	req.Body = http.NoBody
	r.ServeHTTP(httptest.NewRecorder(), req)
	if body != http.NoBody {
		t.Errorf("handler saw body %T; want http.NoBody", body)
	}
}

// Limit reads the context of the request as it arrived, not c.Request's when
// the chain returns: a context the chain derives and cancels on its way out
// (a timeout middleware's) is not the client's, while a client that hung up is
// dropped by the default verdict.
func TestClientGoneReadsTheClientsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := fixed(2)
		var rec recorded
		var outcomes []agilelimiter.Outcome
		r := gin.New()
		r.Use(agilegin.Limit(lim, agilegin.WithVerdict(func(e agilelimiter.Exchange) agilelimiter.Outcome {
			o := rec.verdict(e)
			outcomes = append(outcomes, o)
			return o
		})))
		r.GET("/hangup", func(c *gin.Context) {
			time.Sleep(time.Millisecond)
			c.String(http.StatusOK, "too late")
		})
		inner := r.Group("/", func(c *gin.Context) {
			ctx, cancel := context.WithTimeout(c.Request.Context(), time.Second)
			defer cancel()
			c.Request = c.Request.WithContext(ctx)
			c.Next()
		})
		inner.GET("/timeout", func(c *gin.Context) { c.String(http.StatusOK, "in time") })

		ctx, hangup := context.WithCancel(context.Background())
		go func() { time.Sleep(500 * time.Microsecond); hangup() }()
		r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequestWithContext(ctx, http.MethodGet, "/hangup", nil))
		serve(r, http.MethodGet, "/timeout")

		ex := rec.all()
		if len(ex) != 2 || !ex[0].ClientGone || ex[1].ClientGone {
			t.Fatalf("exchanges = %+v; want two, ClientGone true for the hang-up and false for the other", ex)
		}
		if outcomes[0] != agilelimiter.Aborted || outcomes[1] != agilelimiter.Reached {
			t.Errorf("outcomes = %v; want [Aborted Reached]", outcomes)
		}
	})
}

// TestConcurrentClientsKeepAccounting runs 50 clients against a real server
// with every path mixed: plain, 404, error, panic under recovery, and
// HandleContext. The limit is pinned (MinLimit = MaxLimit) so that "in flight
// never above the limit" is an invariant; the controller still runs, so its
// ticks race with the requests.
func TestConcurrentClientsKeepAccounting(t *testing.T) {
	const limit = 8
	lim := fixed(limit)
	lim.Start()
	defer lim.Stop()

	var running, peak, over atomic.Int64
	enter := func() func() {
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		if lim.InFlight() > lim.Limit() {
			over.Add(1)
		}
		time.Sleep(time.Millisecond)
		return func() { running.Add(-1) }
	}
	r := gin.New()
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) { c.AbortWithStatus(500) }))
	r.Use(agilegin.Limit(lim), renderErrors)
	r.GET("/ok", func(c *gin.Context) { defer enter()(); c.String(http.StatusOK, "ok") })
	r.GET("/err", func(c *gin.Context) { defer enter()(); _ = c.Error(errDB) })
	r.GET("/panic", func(c *gin.Context) { defer enter()(); panic("boom") })
	r.GET("/old", func(c *gin.Context) { c.Request.URL.Path = "/ok"; r.HandleContext(c) })
	r.NoRoute(func(c *gin.Context) { defer enter()(); c.Status(http.StatusNotFound) })

	srv := httptest.NewServer(r)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 50}}
	defer client.CloseIdleConnections()

	paths := []string{"/ok", "/err", "/panic", "/old", "/missing"}
	var codes [600]atomic.Int64
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			for j := range 40 {
				resp, err := client.Get(srv.URL + paths[(i+j)%len(paths)])
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				codes[resp.StatusCode].Add(1)
			}
		})
	}
	wg.Wait()

	if p := peak.Load(); p > limit || over.Load() != 0 {
		t.Errorf("peak handlers at once %d, requests that saw InFlight > Limit %d; want ≤ %d and 0", p, over.Load(), limit)
	}
	if codes[200].Load() == 0 || codes[429].Load() == 0 || codes[500].Load() == 0 || codes[404].Load() == 0 {
		t.Errorf("200: %d, 404: %d, 429: %d, 500: %d; want every kind", codes[200].Load(), codes[404].Load(), codes[429].Load(), codes[500].Load())
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after every client finished; want 0", n)
	}
	if s := lim.Stats(); s.Admitted+s.RejectedOverload != 50*40 {
		t.Errorf("admitted %d + refused %d = %d; want one decision per request, %d", s.Admitted, s.RejectedOverload,
			s.Admitted+s.RejectedOverload, 50*40)
	}
}
