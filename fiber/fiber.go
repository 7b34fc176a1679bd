// Package agilefiber limits how many requests a fiber (v2) app handles at
// once with an [agilelimiter.ConcurrencyLimiter]:
//
//	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200})
//	lim.Start()
//	defer lim.Stop()
//	app.Use(recover.New())          // outermost: fasthttp does not recover panics
//	app.Use(logger.New())
//	app.Use(agilefiber.Limit(lim))  // every route below shares one budget
//
// A request that finds the limiter full is refused at once, without running
// the rest of the chain: the client receives 429 Too Many Requests with a
// Retry-After header (1 second by default, see [WithRetryAfter]) and a short
// text/plain body, and nothing is observed. An admitted request runs the
// chain; when it is done the middleware hands the status the client receives,
// the response headers, method, route pattern and duration to the shared
// verdict ([agilelimiter.DefaultServerVerdict] unless [WithVerdict] says
// otherwise) and records the outcome.
//
// # What the client receives
//
// Fiber turns an error returned by a handler into a response in the app's
// ErrorHandler, after every middleware has returned, so the status still reads
// 200 when next returns. The middleware therefore renders the error itself,
// as fiber's logger does: it calls c.App().ErrorHandler (which picks a mounted
// sub-app's handler by path prefix, exactly as fiber would), falls back to a
// bare 500 if that handler fails, and returns nil, so the error page is
// written once and middleware outside this one sees a nil error. The verdict
// sees the status the error handler wrote (a *fiber.Error with code 503 reads
// 503; a plain error reads fiber's 500) and the error itself in
// Exchange.Err. The duration ends when next returns, before the error page
// is rendered. Exchange.Route is the pattern of the last route that matched
// ("/users/:id"); when no route matched (fiber's own 404) it is the pattern
// the middleware was mounted on ("/" for app.Use).
//
// # Panics and middleware order
//
// fasthttp does not recover panics: a panic no middleware recovers kills the
// process. Put recover.New() outside everything, this middleware included.
// Either order keeps the accounting right. With recover outside (recommended)
// the panic unwinds through this middleware, which releases the slot, records
// the request as a 500 with Panicked set, and lets the panic continue
// untouched (never recovered, so the outer recover sees the same value). With
// recover inside, recover turns the panic into an error and this middleware
// sees a returned error like any other.
//
// A request takes one slot of a limiter however often fiber runs the
// middleware for it: c.RestartRouting runs the chain again, and the second
// pass goes straight through.
//
// # Pooled contexts
//
// Fiber reuses its *fiber.Ctx and the buffers behind every string and []byte
// it returns. The middleware keeps nothing past the request. The Exchange a
// verdict receives (its Route, Method, Header and the strings Header.Get
// returns) is valid only during the verdict call; a verdict that keeps any of
// it must copy it (strings.Clone).
package agilefiber

import (
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"
)

// Limit returns fiber middleware that admits a request only while lim has a
// free slot and feeds lim the outcome of every admitted request. Use it once,
// around the whole protected subtree, with recover.New() outside it (see the
// package documentation for the order and why). lim must not be nil; Start
// and Stop it yourself.
func Limit(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) fiber.Handler {
	if lim == nil {
		panic("agilefiber: Limit with a nil limiter")
	}
	cfg := config{verdict: agilelimiter.DefaultServerVerdict, retryAfter: agilelimiter.DefaultRetryAfter}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.reject == nil {
		cfg.reject = refuse(agilelimiter.NewRefusal(cfg.retryAfter))
	}
	m := &middleware{lim: lim, verdict: cfg.verdict}
	next, reject, held := cfg.next, cfg.reject, holding{lim}
	return func(c *fiber.Ctx) error {
		if next != nil && next(c) {
			return c.Next()
		}
		if c.Locals(held) != nil {
			// The request already holds a slot of lim: fiber is running the
			// chain again (c.RestartRouting), and one request takes one slot.
			return c.Next()
		}
		if !lim.TryTake() {
			return reject(c)
		}
		c.Locals(held, true)
		defer func() {
			c.Locals(held, nil)
			lim.Release()
		}()
		return m.serve(c)
	}
}

// holding is the key of the request-local that marks a request holding a slot
// of lim. One pointer wide, so using it as a key allocates nothing; distinct
// limiters (a global one and one per group) each still take their own slot.
type holding struct {
	lim *agilelimiter.ConcurrencyLimiter
}

// middleware holds what an admitted request needs.
type middleware struct {
	lim     *agilelimiter.ConcurrencyLimiter
	verdict agilelimiter.ServerVerdict
}

// serve runs the rest of the chain for an admitted request and records it.
// It never recovers a panic: if next panics, the deferred function records a
// 500 and the panic goes on with its own value and stack. (A runtime.Goexit
// in a handler unwinds the same way and is recorded the same way.)
func (m *middleware) serve(c *fiber.Ctx) error {
	start := time.Now()
	returned := false
	defer func() {
		if !returned {
			m.record(c, fiber.StatusInternalServerError, nil, true, time.Since(start))
		}
	}()
	err := c.Next()
	d := time.Since(start)
	returned = true
	if err != nil {
		// As fiber's app handler and logger do: the ErrorHandler writes the
		// response; if it fails, a bare 500.
		if catch := c.App().ErrorHandler(c, err); catch != nil {
			_ = c.SendStatus(fiber.StatusInternalServerError)
		}
	}
	m.record(c, c.Response().StatusCode(), err, false, d)
	return nil
}

// record hands one finished request to the verdict and feeds the limiter.
func (m *middleware) record(c *fiber.Ctx, status int, err error, panicked bool, d time.Duration) {
	e := agilelimiter.Exchange{
		Method:   c.Method(),
		Route:    c.Route().Path,
		Status:   status,
		Header:   (*responseHeader)(&c.Response().Header),
		Err:      err,
		Panicked: panicked,
		Duration: d,
	}
	m.lim.Record(m.verdict(e), d)
}

// refuse returns the default refusal handler for r. It allocates nothing:
// every string was built once, in r.
func refuse(r agilelimiter.Refusal) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderRetryAfter, r.RetryAfter)
		c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
		return c.Status(agilelimiter.RefusalStatus).SendString(r.Body)
	}
}

// responseHeader reads fasthttp's response header as an
// [agilelimiter.HeaderGetter]. It is a pointer, so converting it to the
// interface allocates nothing; Get returns a view into the header's buffer,
// valid until the request ends.
type responseHeader fasthttp.ResponseHeader

// Get returns the first value of the header key, or "".
func (h *responseHeader) Get(key string) string {
	return utils.UnsafeString((*fasthttp.ResponseHeader)(h).Peek(key))
}
