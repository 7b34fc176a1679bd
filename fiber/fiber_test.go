package agilefiber_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	fiberrecover "github.com/gofiber/fiber/v2/middleware/recover"
)

// TestMain serves one response outside any bubble first. fasthttp starts a
// process-wide goroutine that refreshes the Date header every second the
// first time it writes a response; started inside a synctest bubble it would
// belong to the bubble and never exit.
func TestMain(m *testing.M) {
	app := fiber.New()
	app.Get("/", func(c *fiber.Ctx) error { return c.SendStatus(fiber.StatusNoContent) })
	if _, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil), -1); err != nil {
		fmt.Fprintln(os.Stderr, "warming fasthttp:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// response is what a client received, body read.
type response struct {
	status      int
	body        string
	contentType string
	retryAfter  string
}

// get sends one request through app over fiber's in-memory connection.
func get(t testing.TB, app *fiber.App, path string) response {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest(http.MethodGet, path, nil), -1)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return response{resp.StatusCode, string(body), resp.Header.Get("Content-Type"), resp.Header.Get("Retry-After")}
}

// exchanges collects what the verdict was shown, copying every string: the
// Exchange is valid only during the call.
type exchanges struct {
	mu   sync.Mutex
	seen []agilelimiter.Exchange
}

func (x *exchanges) verdict(e agilelimiter.Exchange) agilelimiter.Outcome {
	e.Method, e.Route = strings.Clone(e.Method), strings.Clone(e.Route)
	e.Header = nil
	x.mu.Lock()
	x.seen = append(x.seen, e)
	x.mu.Unlock()
	return agilelimiter.DefaultServerVerdict(e)
}

func (x *exchanges) all() []agilelimiter.Exchange {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.seen)
}

// only returns the one exchange seen, failing the test if there was not
// exactly one.
func (x *exchanges) only(t *testing.T) agilelimiter.Exchange {
	t.Helper()
	all := x.all()
	if len(all) != 1 {
		t.Fatalf("verdict ran %d times, want 1: %+v", len(all), all)
	}
	return all[0]
}

func fixed(n int) *agilelimiter.ConcurrencyLimiter {
	return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: n, MaxLimit: n, InitialLimit: n})
}

// TestRefusalOnTheWire: what fasthttp sends for a refusal is the core's
// Refusal, each header once (fasthttp writes Content-Length itself; it must
// not appear twice), and the status and body. The conformance suite checks
// the same through fiber's net/http adaptor, which never reaches the wire.
func TestRefusalOnTheWire(t *testing.T) {
	lim := fixed(1)
	if !lim.TryTake() { // full
		t.Fatal("TryTake on an empty limiter")
	}
	defer lim.Release()
	app := fiber.New()
	app.Use(agilefiber.Limit(lim))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ran") })

	resp, err := app.Test(httptest.NewRequest(http.MethodGet, "/", nil), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	want := agilelimiter.NewRefusal(agilelimiter.DefaultRetryAfter)
	if resp.StatusCode != want.Status || string(body) != want.Body {
		t.Errorf("refusal = %d %q, want %d %q", resp.StatusCode, body, want.Status, want.Body)
	}
	for k, v := range want.Header {
		if got := resp.Header.Values(k); !slices.Equal(got, v) {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if resp.ContentLength != int64(len(want.Body)) {
		t.Errorf("ContentLength = %d, want %d", resp.ContentLength, len(want.Body))
	}
}

// TestWithRejection: a custom rejection writes its own response, and finds
// the Retry-After of WithRetryAfter already set, so the retry hint survives a
// custom body. Neither the handler nor the verdict runs.
func TestWithRejection(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []agilefiber.Option
		want string
	}{
		{"default Retry-After", nil, "1"},
		{"WithRetryAfter", []agilefiber.Option{agilefiber.WithRetryAfter(2500 * time.Millisecond)}, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := fixed(1)
			if !lim.TryTake() { // full
				t.Fatal("TryTake on an empty limiter")
			}
			defer lim.Release()
			var ran, verdicts atomic.Int32
			var seen string
			app := fiber.New()
			app.Use(agilefiber.Limit(lim, append(tc.opts,
				agilefiber.WithRejection(func(c *fiber.Ctx) error {
					seen = c.GetRespHeader(fiber.HeaderRetryAfter)
					return c.Status(fiber.StatusServiceUnavailable).JSON(fiber.Map{"error": "busy"})
				}),
				agilefiber.WithVerdict(func(agilelimiter.Exchange) agilelimiter.Outcome { verdicts.Add(1); return agilelimiter.Reached }))...))
			app.Get("/", func(c *fiber.Ctx) error { ran.Add(1); return nil })

			got := get(t, app, "/")
			if got.status != fiber.StatusServiceUnavailable || got.body != `{"error":"busy"}` || got.retryAfter != tc.want ||
				got.contentType != fiber.MIMEApplicationJSON {
				t.Errorf("custom refusal = %+v, want 503 with its JSON body and Retry-After %s", got, tc.want)
			}
			if seen != tc.want {
				t.Errorf("the rejection saw Retry-After %q when it ran, want %q already set", seen, tc.want)
			}
			if ran.Load() != 0 || verdicts.Load() != 0 {
				t.Errorf("handler ran %d times, verdict %d times; want 0 and 0", ran.Load(), verdicts.Load())
			}
		})
	}
}

func TestWithNextBypasses(t *testing.T) {
	lim := fixed(1)
	if !lim.TryTake() { // full
		t.Fatal("TryTake on an empty limiter")
	}
	var x exchanges
	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict),
		agilefiber.WithNext(func(c *fiber.Ctx) bool { return c.Path() == "/healthz" })))
	app.Get("/healthz", func(c *fiber.Ctx) error { return c.SendString("ok") })
	app.Get("/work", func(c *fiber.Ctx) error { return c.SendString("worked") })

	if got := get(t, app, "/healthz"); got.status != http.StatusOK || got.body != "ok" {
		t.Errorf("skipped route while full = %+v, want 200 ok", got)
	}
	if got := get(t, app, "/work"); got.status != agilelimiter.RefusalStatus {
		t.Errorf("limited route while full = %+v, want 429", got)
	}
	lim.Release()
	before := lim.Stats().Admitted
	if got := get(t, app, "/healthz"); got.status != http.StatusOK {
		t.Errorf("skipped route = %+v, want 200", got)
	}
	if n := lim.Stats().Admitted - before; n != 0 {
		t.Errorf("a skipped request took %d slots, want 0", n)
	}
	if n := len(x.all()); n != 0 {
		t.Errorf("verdict ran %d times, want 0: skipped requests are not observed", n)
	}
}

// TestStatusTheClientReceives compares each response with the adapter to the
// same app without it: the client must see exactly what fiber would have
// sent, and the verdict must see that status, the error and the route.
func TestStatusTheClientReceives(t *testing.T) {
	errPlain := errors.New("database on fire")
	for _, tc := range []struct {
		name       string
		handler    fiber.Handler
		errHandler fiber.ErrorHandler // nil: fiber's default
		path       string
		route      string
		status     int
		wantErr    bool
		outcome    agilelimiter.Outcome
	}{
		{name: "200", handler: func(c *fiber.Ctx) error { return c.SendString("hi") },
			path: "/users/7", route: "/users/:id", status: 200, outcome: agilelimiter.Reached},
		{name: "handler sets 201", handler: func(c *fiber.Ctx) error { return c.Status(201).SendString("made") },
			path: "/users/7", route: "/users/:id", status: 201, outcome: agilelimiter.Reached},
		{name: "plain error is fiber's 500", handler: func(*fiber.Ctx) error { return errPlain },
			path: "/users/7", route: "/users/:id", status: 500, wantErr: true, outcome: agilelimiter.Reached},
		{name: "fiber.NewError 503", handler: func(*fiber.Ctx) error { return fiber.NewError(503, "pool empty") },
			path: "/users/7", route: "/users/:id", status: 503, wantErr: true, outcome: agilelimiter.Unreachable},
		{name: "wrapped *fiber.Error 503", handler: func(*fiber.Ctx) error { return fmt.Errorf("lookup: %w", fiber.ErrServiceUnavailable) },
			path: "/users/7", route: "/users/:id", status: 503, wantErr: true, outcome: agilelimiter.Unreachable},
		{name: "ErrTooManyRequests is about the client", handler: func(*fiber.Ctx) error { return fiber.ErrTooManyRequests },
			path: "/users/7", route: "/users/:id", status: 429, wantErr: true, outcome: agilelimiter.Aborted},
		{name: "ErrNotFound", handler: func(*fiber.Ctx) error { return fiber.ErrNotFound },
			path: "/users/7", route: "/users/:id", status: 404, wantErr: true, outcome: agilelimiter.Aborted},
		{name: "no route matched: fiber's 404, route of the middleware", handler: func(c *fiber.Ctx) error { return nil },
			path: "/nowhere", route: "/", status: 404, wantErr: true, outcome: agilelimiter.Aborted},
		{name: "custom error handler", handler: func(*fiber.Ctx) error { return errPlain },
			errHandler: func(c *fiber.Ctx, err error) error {
				c.Set("X-Handled", "yes")
				return c.Status(fiber.StatusTeapot).JSON(fiber.Map{"error": err.Error()})
			},
			path: "/users/7", route: "/users/:id", status: 418, wantErr: true, outcome: agilelimiter.Aborted},
		{name: "failing error handler is a bare 500", handler: func(*fiber.Ctx) error { return fiber.ErrServiceUnavailable },
			path: "/users/7", route: "/users/:id", status: 500, wantErr: true, outcome: agilelimiter.Reached,
			errHandler: func(*fiber.Ctx, error) error { return errors.New("cannot render") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(limited bool, x *exchanges, errHandlerRuns *atomic.Int32) *fiber.App {
				cfg := fiber.Config{}
				if tc.errHandler != nil {
					cfg.ErrorHandler = func(c *fiber.Ctx, err error) error { errHandlerRuns.Add(1); return tc.errHandler(c, err) }
				}
				app := fiber.New(cfg)
				if limited {
					app.Use(agilefiber.Limit(fixed(4), agilefiber.WithVerdict(x.verdict)))
				}
				app.Get("/users/:id", tc.handler)
				return app
			}
			var x exchanges
			var bareRuns, limitedRuns atomic.Int32
			want := get(t, build(false, nil, &bareRuns), tc.path)
			got := get(t, build(true, &x, &limitedRuns), tc.path)
			if got != want {
				t.Errorf("with the adapter the client got %+v, without it %+v", got, want)
			}
			if got.status != tc.status {
				t.Errorf("status = %d, want %d", got.status, tc.status)
			}
			if limitedRuns.Load() != bareRuns.Load() {
				t.Errorf("error handler ran %d times with the adapter, %d without", limitedRuns.Load(), bareRuns.Load())
			}
			e := x.only(t)
			if e.Status != tc.status || e.Method != http.MethodGet || e.Route != tc.route || e.Panicked || (e.Err != nil) != tc.wantErr {
				t.Errorf("verdict saw %+v, want status %d, GET %s, error %v", e, tc.status, tc.route, tc.wantErr)
			}
			if o := agilelimiter.DefaultServerVerdict(e); o != tc.outcome {
				t.Errorf("outcome = %v, want %v", o, tc.outcome)
			}
		})
	}
}

// TestMountedErrorHandler: an error under a mounted sub-app is rendered by the
// sub-app's ErrorHandler, whether the adapter sits in the parent or the sub-app.
func TestMountedErrorHandler(t *testing.T) {
	for _, inSub := range []bool{false, true} {
		t.Run("adapter in sub-app "+strconv.FormatBool(inSub), func(t *testing.T) {
			var x exchanges
			var subRuns, rootRuns atomic.Int32
			root := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
				rootRuns.Add(1)
				return c.Status(fiber.StatusBadGateway).SendString("root")
			}})
			sub := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
				subRuns.Add(1)
				return c.Status(fiber.StatusServiceUnavailable).SendString("sub: " + err.Error())
			}})
			mw := agilefiber.Limit(fixed(4), agilefiber.WithVerdict(x.verdict))
			if inSub {
				sub.Use(mw)
			} else {
				root.Use(mw)
			}
			sub.Get("/orders/:id", func(*fiber.Ctx) error { return errors.New("no stock") })
			root.Mount("/api", sub)

			got := get(t, root, "/api/orders/1")
			if got.status != fiber.StatusServiceUnavailable || got.body != "sub: no stock" {
				t.Errorf("client got %+v, want the sub-app's 503", got)
			}
			if subRuns.Load() != 1 || rootRuns.Load() != 0 {
				t.Errorf("sub-app error handler ran %d times, root's %d; want 1 and 0", subRuns.Load(), rootRuns.Load())
			}
			if e := x.only(t); e.Status != fiber.StatusServiceUnavailable || e.Route != "/api/orders/:id" {
				t.Errorf("verdict saw status %d route %q, want 503 /api/orders/:id", e.Status, e.Route)
			}
		})
	}
}

// TestDurationEndsWhenNextReturns: a slow error page is not the handler's time.
func TestDurationEndsWhenNextReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var x exchanges
		app := fiber.New(fiber.Config{ErrorHandler: func(c *fiber.Ctx, err error) error {
			time.Sleep(time.Second)
			return fiber.DefaultErrorHandler(c, err)
		}})
		app.Use(agilefiber.Limit(fixed(1), agilefiber.WithVerdict(x.verdict)))
		app.Get("/", func(*fiber.Ctx) error {
			time.Sleep(30 * time.Millisecond)
			return fiber.ErrServiceUnavailable
		})
		if got := get(t, app, "/"); got.status != fiber.StatusServiceUnavailable {
			t.Fatalf("status = %d, want 503", got.status)
		}
		if e := x.only(t); e.Duration != 30*time.Millisecond {
			t.Errorf("Duration = %v, want 30ms (the handler, not the error page)", e.Duration)
		}
	})
}

// panicValue is compared by identity: the panic must go on with this value.
var panicValue = &struct{ msg string }{"handler exploded"}

func TestPanicRecoverOutside(t *testing.T) {
	lim := fixed(1)
	var x exchanges
	var recovered atomic.Value
	app := fiber.New()
	app.Use(fiberrecover.New(fiberrecover.Config{EnableStackTrace: true,
		StackTraceHandler: func(_ *fiber.Ctx, e any) { recovered.Store(e) }}))
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
	app.Get("/boom", func(*fiber.Ctx) error { panic(panicValue) })
	app.Get("/ok", func(c *fiber.Ctx) error { return c.SendString("ok") })

	if got := get(t, app, "/boom"); got.status != fiber.StatusInternalServerError {
		t.Errorf("client got %+v, want 500", got)
	}
	if r := recovered.Load(); r != panicValue {
		t.Errorf("outer recover got %v, want the handler's own panic value", r)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after a panic, want 0", n)
	}
	if e := x.only(t); e.Status != fiber.StatusInternalServerError || !e.Panicked || e.Route != "/boom" {
		t.Errorf("verdict saw %+v, want status 500, Panicked, route /boom", e)
	}
	if got := get(t, app, "/ok"); got.status != http.StatusOK {
		t.Errorf("after the panic the only slot is still held: got %+v", got)
	}
}

func TestPanicRecoverInside(t *testing.T) {
	lim := fixed(1)
	var x exchanges
	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
	app.Use(fiberrecover.New())
	app.Get("/boom", func(*fiber.Ctx) error { panic("exploded") })
	app.Get("/ok", func(c *fiber.Ctx) error { return c.SendString("ok") })

	if got := get(t, app, "/boom"); got.status != fiber.StatusInternalServerError || got.body != "exploded" {
		t.Errorf("client got %+v, want fiber's 500 with the panic message", got)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after a panic, want 0", n)
	}
	if e := x.only(t); e.Status != fiber.StatusInternalServerError || e.Err == nil || e.Err.Error() != "exploded" {
		t.Errorf("verdict saw %+v, want status 500 and recover's error", e)
	}
	if got := get(t, app, "/ok"); got.status != http.StatusOK {
		t.Errorf("after the panic the only slot is still held: got %+v", got)
	}
}

// TestVerdictCopiesOutliveTheContext: fiber reuses contexts and their
// buffers. A verdict that keeps the route and a response header must copy
// them (strings.Clone), and the copies must hold across many requests.
func TestVerdictCopiesOutliveTheContext(t *testing.T) {
	type kept struct{ route, id, contentType string }
	var mu sync.Mutex
	var all []kept
	app := fiber.New()
	app.Use(agilefiber.Limit(fixed(64), agilefiber.WithVerdict(func(e agilelimiter.Exchange) agilelimiter.Outcome {
		k := kept{strings.Clone(e.Route), strings.Clone(e.Header.Get("X-Id")), strings.Clone(e.Header.Get("Content-Type"))}
		mu.Lock()
		all = append(all, k)
		mu.Unlock()
		return agilelimiter.DefaultServerVerdict(e)
	})))
	app.Get("/users/:id", func(c *fiber.Ctx) error { c.Set("X-Id", "user-"+c.Params("id")); return c.SendString("u") })
	app.Get("/items/:sku/detail", func(c *fiber.Ctx) error { c.Set("X-Id", "item-"+c.Params("sku")); return c.JSON(1) })

	const clients, each = 10, 30
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			for i := range each {
				n := strconv.Itoa(w*each + i)
				if i%2 == 0 {
					get(t, app, "/users/"+n)
				} else {
					get(t, app, "/items/"+n+"/detail")
				}
			}
		})
	}
	wg.Wait()

	if len(all) != clients*each {
		t.Fatalf("verdict ran %d times, want %d", len(all), clients*each)
	}
	ids := map[string]bool{}
	for _, k := range all {
		var want kept
		switch {
		case strings.HasPrefix(k.id, "user-"):
			want = kept{"/users/:id", k.id, fiber.MIMETextPlainCharsetUTF8}
		case strings.HasPrefix(k.id, "item-"):
			want = kept{"/items/:sku/detail", k.id, fiber.MIMEApplicationJSON}
		}
		if k != want || ids[k.id] {
			t.Errorf("kept %+v: wrong route, content type or a duplicate id", k)
		}
		ids[k.id] = true
	}
}

// TestRestartRoutingTakesOneSlot: c.RestartRouting runs app.Use middleware a
// second time for the same request; with one slot, a naive adapter would
// refuse the request it already admitted. A second, distinct limiter on a
// group still takes its own slot.
func TestRestartRoutingTakesOneSlot(t *testing.T) {
	global, group := fixed(1), fixed(1)
	var x exchanges
	app := fiber.New()
	app.Use(agilefiber.Limit(global, agilefiber.WithVerdict(x.verdict)))
	app.Get("/old", func(c *fiber.Ctx) error { c.Path("/api/new"); return c.RestartRouting() })
	api := app.Group("/api", agilefiber.Limit(group))
	api.Get("/new", func(c *fiber.Ctx) error { return c.SendString("new") })

	if got := get(t, app, "/old"); got.status != http.StatusOK || got.body != "new" {
		t.Errorf("client got %+v, want 200 new", got)
	}
	if e := x.only(t); e.Route != "/api/new" || e.Status != http.StatusOK {
		t.Errorf("verdict saw route %q status %d, want /api/new 200", e.Route, e.Status)
	}
	if a, b := global.Stats().Admitted, group.Stats().Admitted; a != 1 || b != 1 {
		t.Errorf("admitted %d by the global limiter and %d by the group's, want 1 and 1", a, b)
	}
	if global.InFlight() != 0 || group.InFlight() != 0 {
		t.Errorf("in flight after the request: %d and %d, want 0 and 0", global.InFlight(), group.InFlight())
	}
}

// TestSecondPassAfterReleaseTakesASlot: an outer middleware that runs the
// chain again after it returned (a fallback, say) must go through the limiter
// again: the first pass released its slot.
func TestSecondPassAfterReleaseTakesASlot(t *testing.T) {
	lim := fixed(1)
	var x exchanges
	app := fiber.New()
	app.Use(func(c *fiber.Ctx) error {
		if c.Locals("retried") != nil {
			return c.Next()
		}
		if err := c.Next(); err != nil {
			return err
		}
		c.Locals("retried", true)
		c.Path("/second")
		return c.RestartRouting()
	})
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
	app.Get("/first", func(c *fiber.Ctx) error { return c.SendString("first") })
	app.Get("/second", func(c *fiber.Ctx) error { return c.SendString("second") })

	if got := get(t, app, "/first"); got.status != http.StatusOK || got.body != "second" {
		t.Errorf("client got %+v, want 200 second", got)
	}
	if st := lim.Stats(); st.Admitted != 2 || st.InFlight != 0 {
		t.Errorf("Admitted %d, InFlight %d; want 2 and 0", st.Admitted, st.InFlight)
	}
	if n := len(x.all()); n != 2 {
		t.Errorf("verdict ran %d times, want 2", n)
	}
}
