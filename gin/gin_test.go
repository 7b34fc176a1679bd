package agilegin_test

import (
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

func TestRefusesAtLimitWithoutRunningHandler(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []agilegin.Option
		retryAfter time.Duration
	}{
		{"default", nil, agilelimiter.DefaultRetryAfter},
		{"WithRetryAfter", []agilegin.Option{agilegin.WithRetryAfter(2500 * time.Millisecond)}, 2500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := fixed(1)
			var rec recorded
			var ran atomic.Int32
			r := gin.New()
			r.Use(agilegin.Limit(lim, append(tc.opts, agilegin.WithVerdict(rec.verdict))...))
			r.GET("/work", func(c *gin.Context) { ran.Add(1); c.String(http.StatusOK, "done") })

			if !lim.TryTake() { // another request holds the only slot
				t.Fatal("TryTake on an empty limiter failed")
			}
			w := serve(r, http.MethodGet, "/work")
			want := agilelimiter.NewRefusal(tc.retryAfter)
			if w.Code != agilelimiter.RefusalStatus || w.Header().Get("Retry-After") != want.RetryAfter ||
				w.Body.String() != want.Body || w.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Errorf("refusal = %d Retry-After %q Content-Type %q body %q; want %d %q text/plain %q",
					w.Code, w.Header().Get("Retry-After"), w.Header().Get("Content-Type"), w.Body.String(),
					agilelimiter.RefusalStatus, want.RetryAfter, want.Body)
			}
			if ran.Load() != 0 || len(rec.all()) != 0 {
				t.Errorf("handler ran %d times and verdict %d times on a refusal; want 0, 0", ran.Load(), len(rec.all()))
			}
			lim.Release()

			if w := serve(r, http.MethodGet, "/work"); w.Code != http.StatusOK || ran.Load() != 1 {
				t.Errorf("after the slot freed: status %d, handler runs %d; want 200, 1", w.Code, ran.Load())
			}
			if lim.InFlight() != 0 {
				t.Errorf("InFlight = %d after the request; want 0", lim.InFlight())
			}
		})
	}
}

func TestCustomRejectionAlwaysAborts(t *testing.T) {
	lim := fixed(1)
	var ran atomic.Int32
	r := gin.New()
	// This rejection forgets to abort; the handler must still not run.
	r.Use(agilegin.Limit(lim, agilegin.WithRejection(func(c *gin.Context) {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "busy"})
	})))
	r.GET("/work", func(c *gin.Context) { ran.Add(1) })
	lim.TryTake()
	defer lim.Release()

	w := serve(r, http.MethodGet, "/work")
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "busy") || ran.Load() != 0 {
		t.Errorf("custom refusal: %d %q, handler runs %d; want 503 with its body, 0 runs", w.Code, w.Body.String(), ran.Load())
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

func TestPanicWithoutRecoveryPropagates(t *testing.T) {
	lim := fixed(1)
	boom := &panicValue{"boom"}
	r := gin.New()
	r.Use(agilegin.Limit(lim))
	r.GET("/p", func(c *gin.Context) { panic(boom) })

	got := func() (v any) {
		defer func() { v = recover() }()
		serve(r, http.MethodGet, "/p")
		return nil
	}()
	if got != boom {
		t.Errorf("ServeHTTP panicked with %v; want the handler's value", got)
	}
	if lim.InFlight() != 0 {
		t.Errorf("InFlight = %d; want 0", lim.InFlight())
	}
}

func TestNilLimiterPanics(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "agilegin") {
			t.Errorf("Limit(nil) panicked with %v; want a message naming the package", v)
		}
	}()
	agilegin.Limit(nil)
}
