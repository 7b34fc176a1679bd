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
// the rest of the chain: the client gets [agilelimiter.NewRefusal]'s
// response, the same bytes every adapter of this project sends (status 429,
// a Retry-After header of 1 second unless [WithRetryAfter] says otherwise,
// and a short text/plain body), and nothing is observed. An admitted request
// runs the chain; when it is done the middleware hands the status the client
// receives, the response headers, method, route pattern and duration to the
// verdict ([agilelimiter.DefaultServerVerdict] unless [WithVerdict] says
// otherwise) and records the outcome:
//
//	503                    Unreachable  the handler shed load (a pool ran dry): the limit comes down
//	429, other 4xx         Aborted      about the client (a per-client quota, a 404), not capacity
//	everything else        Reached      the duration is a sample; a panic counts as a 500
//
// Two parts of the shared policy read differently under fasthttp. It gives
// no signal that a client went away before the answer (a RequestCtx has no
// per-request context that a closed connection cancels), so
// Exchange.ClientGone is always false here and such a request is recorded
// like any other. And it reads the whole request body before the handler
// runs, so a slow upload is never part of the duration: there is nothing to
// subtract. (With fiber.Config.StreamRequestBody, the part of a large body
// that has not arrived yet is read while the handler runs, and the time it
// waits for the client does count.)
//
// # Streams
//
// A streamed response (c.Context().SetBodyStreamWriter, c.SendStream, or a
// large file sent by c.SendFile) is sent by fasthttp after the handler has
// returned. It holds its slot for its whole life, as a net/http handler that
// streams does: the slot is released, and the exchange recorded, when fasthttp
// has finished with the response, whether the stream ran to its end, the
// client went away mid-stream (the writer's next Flush fails and it should
// return), or reading the stream panicked (fasthttp recovers that and drops
// the connection). The recorded duration runs from admission to the end of the
// stream, comparable with net/http's, and the verdict then sees the status and
// headers that were sent. A stream writer that panics takes the process down:
// fasthttp runs it on a goroutine of its own, which nothing recovers.
//
// A long-lived stream (server-sent events, a download) is therefore a slot
// taken for minutes and a sample of minutes. Keep such routes out of the
// limiter with [WithNext], or give them a verdict that returns
// [agilelimiter.Aborted] so they hold a slot without feeding the controller.
//
// Only a fasthttp server says when a response is done (it closes the
// request's user values). On a RequestCtx that no server serves
// (adaptor.FiberApp, or app.Handler called on a RequestCtx of one's own) the
// slot of a streamed response is released when the handler returns, as for
// any other response. A request that fasthttp.TimeoutHandler abandons after
// its timeout is never reset, so a stream it started would keep its slot for
// good: do not stream under fasthttp.TimeoutHandler.
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
// it returns. The middleware keeps nothing past the request (a streamed
// response's record keeps the fasthttp.RequestCtx until fasthttp has sent
// it, never the *fiber.Ctx, which fiber reuses as soon as the handler
// returns). The Exchange a
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
// package documentation for the order and why). It panics if lim is nil;
// Start and Stop lim yourself.
func Limit(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) fiber.Handler {
	if lim == nil {
		panic("agilefiber: Limit with a nil limiter")
	}
	cfg := config{verdict: agilelimiter.DefaultServerVerdict, retryAfter: agilelimiter.DefaultRetryAfter}
	for _, o := range opts {
		o(&cfg)
	}
	refusal := agilelimiter.NewRefusal(cfg.retryAfter)
	reject := refuse(refusal)
	if cfg.reject != nil {
		reject = hinted(refusal.RetryAfter, cfg.reject)
	}
	m := &middleware{lim: lim, verdict: cfg.verdict}
	next, held := cfg.next, holding{lim}
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
		streaming := false
		defer func() {
			c.Locals(held, nil)
			if !streaming {
				lim.Release()
			}
		}()
		streaming = m.serve(c)
		return nil
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

// serve runs the rest of the chain for an admitted request and records it,
// unless the response is a stream: then it hands the slot and the record to
// the stream (see stream.go) and reports true, and the caller must not release
// the slot. It never recovers a panic: if next panics, the deferred function
// records a 500 and the panic goes on with its own value and stack. (A
// runtime.Goexit in a handler unwinds the same way and is recorded the same
// way.)
func (m *middleware) serve(c *fiber.Ctx) (streaming bool) {
	start := time.Now()
	returned := false
	defer func() {
		if !returned {
			m.record(c.Method(), c.Route().Path, fiber.StatusInternalServerError, &c.Response().Header, nil, true, time.Since(start))
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
	if c.Response().IsBodyStream() && holdStream(m, c, err, start) {
		return true
	}
	m.record(c.Method(), c.Route().Path, c.Response().StatusCode(), &c.Response().Header, err, false, d)
	return false
}

// record hands one finished request to the verdict and feeds the limiter.
// The strings and h may be views into fiber's and fasthttp's pooled buffers:
// they are valid during the call.
func (m *middleware) record(method, route string, status int, h *fasthttp.ResponseHeader, err error, panicked bool, d time.Duration) {
	e := agilelimiter.Exchange{
		Method:   method,
		Route:    route,
		Status:   status,
		Header:   (*responseHeader)(h),
		Err:      err,
		Panicked: panicked,
		Duration: d,
	}
	m.lim.Record(m.verdict(e), d)
}

// refuse returns the default refusal for r: the core's Refusal, each header
// set to its single value, then the status and the body, and nothing else. It
// allocates nothing: every string was built once, in r.
func refuse(r agilelimiter.Refusal) fiber.Handler {
	return func(c *fiber.Ctx) error {
		for k, v := range r.Header {
			c.Set(k, v[0])
		}
		return c.Status(r.Status).SendString(r.Body)
	}
}

// hinted returns the custom rejection h behind a Retry-After of retryAfter,
// set before h runs so that a retry hint is never lost to a custom body.
func hinted(retryAfter string, h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderRetryAfter, retryAfter)
		return h(c)
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
