// Package agilegin caps how many requests a gin engine handles at once with an
// [agilelimiter.ConcurrencyLimiter], and feeds the limiter's controller what
// each request took:
//
//	router.Use(agilegin.Limit(lim))
//
// A request that finds the limiter full is refused at once, without running the
// route's handler: the client gets [agilelimiter.NewRefusal]'s response, the
// same bytes every adapter of this project sends (status 429, a Retry-After
// header of 1s unless [WithRetryAfter] says otherwise, and a short plain-text
// body). Nothing is observed for it. An admitted request runs the rest of the
// chain; the slot is released on every path, panics included, and the verdict
// ([WithVerdict], by default the shared [agilelimiter.DefaultServerVerdict])
// reads the status, headers, route pattern, error and duration of the exchange:
//
//	the client went away   Aborted      a truncated measurement (see below)
//	503                    Unreachable  the handler shed load (a pool ran dry): the limit comes down
//	429, other 4xx         Aborted      about the client (a per-client quota, a 404), not capacity
//	everything else        Reached      the duration is a sample; a panic counts as a 500
//
// A request's client went away when its context (the request's as it
// reached Limit, not one the chain derived from it) was cancelled by the time
// the chain returned, which is how net/http says the connection closed; a
// deadline that passed is a server-side timeout, and that answer is recorded
// as the real, slow one it is ([agilelimiter.ClientGone]).
//
// The duration leaves out the time the handler spent waiting for the client to
// send the request body: Limit puts an [agilelimiter.TimedBody] in place of
// c.Request.Body while the chain runs and puts the original back when it
// returns, so a slow upload does not read as a slow service.
//
// The verdict sees the status the client receives, which in gin depends on
// the middleware order. Recommended:
//
//	r := gin.New()
//	r.Use(gin.Logger(), gin.Recovery()) // outside: refusals are logged, panics become 500
//	r.Use(agilegin.Limit(lim))          // applied once: every route shares one budget
//	r.Use(renderErrors)                 // inside: turns c.Errors into a status
//
// where renderErrors stands for the application's own error rendering, for
// instance:
//
//	func renderErrors(c *gin.Context) {
//		c.Next()
//		if len(c.Errors) > 0 && !c.Writer.Written() {
//			c.String(http.StatusInternalServerError, "internal error")
//		}
//	}
//
// Middleware that renders c.Errors as a status must sit inside Limit (after it
// in Use): a handler that only calls c.Error(err) leaves the status at 200, and
// that 200 is what both the client and the verdict see. The error itself is
// passed to the verdict as Exchange.Err (the last of c.Errors), but the status
// the client receives is what the default verdict counts.
//
// Recovery may sit on either side. Outside Limit, a panic unwinds through it:
// the slot is released, the exchange is recorded as a 500 with Panicked set,
// and the panic continues with its value and stack untouched, so the recovery
// still answers 500. Inside Limit, the recovery has already written the 500 by
// the time Limit reads the status.
//
// engine.HandleContext re-runs the global middleware for the same request;
// Limit recognises a request it already admitted and lets it through, so a
// rewritten request holds one slot, not two, and is recorded once (under the
// route it first matched). Contexts are recognised by identity, not through
// c.Keys, which HandleContext clears.
package agilegin

import (
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/gin-gonic/gin"
)

// Limit returns gin middleware that admits a request only while lim has a
// free slot and reports every admitted request's outcome to lim. Apply it once,
// with Use on the engine or the group it protects: each Limit call keeps its
// own record of admitted requests, so two Limit middlewares on one limiter in
// the same chain take two slots. It panics if lim is nil. Start lim to let its
// controller move the limit; a limiter that is not started keeps its initial
// limit.
func Limit(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) gin.HandlerFunc {
	if lim == nil {
		panic("agilegin: Limit with a nil limiter")
	}
	cfg := newConfig(opts)
	ref := agilelimiter.NewRefusal(cfg.retryAfter)
	m := &middleware{
		lim:     lim,
		verdict: cfg.verdict,
		skip:    cfg.skip,
		reject:  refuse(ref),
	}
	if cfg.rejection != nil {
		m.reject = retryAfterThen(ref, cfg.rejection)
	}
	m.held.init()
	return m.serve
}

type middleware struct {
	lim     *agilelimiter.ConcurrencyLimiter
	verdict agilelimiter.ServerVerdict
	skip    func(*gin.Context) bool
	reject  gin.HandlerFunc
	held    admittedSet
}

func (m *middleware) serve(c *gin.Context) {
	if m.skip != nil && m.skip(c) {
		return
	}
	held := m.held.enter(c)
	if held == nil {
		return // re-entered through engine.HandleContext: the slot is already held
	}
	if !m.lim.TryTake() {
		held.leave(c)
		m.reject(c)
		c.Abort()
		return
	}
	defer m.release(held, c)

	// The request as it arrived: the chain may replace c.Request (with a
	// context it cancels on the way out, say), but the client's context and
	// the body to put back are this one's.
	req := c.Request
	route := c.FullPath()
	if route == "" {
		route = req.URL.Path
	}
	body := req.Body
	var timed *agilelimiter.TimedBody
	if body != nil && body != http.NoBody {
		timed = &agilelimiter.TimedBody{ReadCloser: body}
		req.Body = timed
	}
	finished := false
	start := time.Now()
	defer func() {
		if timed != nil {
			req.Body = body
		}
		if !finished {
			// The chain panicked (or called runtime.Goexit). Nothing is
			// recovered: the panic goes on with its own value and stack.
			m.record(c, req, route, 500, true, timed.Since(start))
		}
	}()
	c.Next()
	d := timed.Since(start)
	finished = true
	m.record(c, req, route, c.Writer.Status(), false, d)
}

// release ends an admitted request: it runs last, on every path.
func (m *middleware) release(held *admittedShard, c *gin.Context) {
	held.leave(c)
	m.lim.Release()
}

func (m *middleware) record(c *gin.Context, req *http.Request, route string, status int, panicked bool, d time.Duration) {
	e := agilelimiter.Exchange{
		Method:     req.Method,
		Route:      route,
		Status:     status,
		Header:     c.Writer.Header(),
		Panicked:   panicked,
		Duration:   d,
		ClientGone: agilelimiter.ClientGone(req.Context()),
	}
	if last := c.Errors.Last(); last != nil {
		e.Err = last // a *gin.Error: errors.Is and errors.As reach the handler's error
	}
	m.lim.Record(m.verdict(e), d)
}

// refuse returns the default refusal: r's headers (their values shared, never
// modified: gin and net/http only ever replace a header's slice), its status
// and its body, and nothing else. Refusing allocates nothing.
func refuse(r agilelimiter.Refusal) gin.HandlerFunc {
	return func(c *gin.Context) {
		h := c.Writer.Header()
		for k, v := range r.Header {
			h[k] = v
		}
		c.AbortWithStatus(r.Status)
		_, _ = c.Writer.WriteString(r.Body)
	}
}

// retryAfterThen returns custom preceded by setting r's Retry-After, so that
// a custom refusal keeps the retry hint unless it removes it.
func retryAfterThen(r agilelimiter.Refusal, custom gin.HandlerFunc) gin.HandlerFunc {
	retryAfter := r.Header["Retry-After"]
	return func(c *gin.Context) {
		c.Writer.Header()["Retry-After"] = retryAfter
		custom(c)
	}
}
