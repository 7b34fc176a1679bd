// Package agilegin caps how many requests a gin engine handles at once with an
// [agilelimiter.ConcurrencyLimiter], and feeds the limiter's controller what
// each request took:
//
//	router.Use(agilegin.Limit(lim))
//
// A request that finds the limiter full is refused at once, without running the
// route's handler: status 429, a Retry-After header (1s unless [WithRetryAfter]
// says otherwise) and a short text/plain body. Nothing is observed for it. An
// admitted request runs the rest of the chain; the slot is released on every
// path, panics included, and the verdict ([WithVerdict], by default the shared
// [agilelimiter.DefaultServerVerdict]) reads the status, headers, route
// pattern, error and duration of the exchange.
//
// The verdict sees the status the client receives, which in gin depends on
// the middleware order. Recommended:
//
//	r := gin.New()
//	r.Use(gin.Logger(), gin.Recovery()) // outside: refusals are logged, panics become 500
//	r.Use(agilegin.Limit(lim))          // applied once: every route shares one budget
//	r.Use(renderErrors)                 // inside: turns c.Errors into a status
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
	m := &middleware{
		lim:     lim,
		verdict: cfg.verdict,
		skip:    cfg.skip,
		reject:  cfg.rejection,
	}
	if m.reject == nil {
		m.reject = refuse(agilelimiter.NewRefusal(cfg.retryAfter))
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

	route := c.FullPath()
	if route == "" {
		route = c.Request.URL.Path
	}
	finished := false
	start := time.Now()
	defer func() {
		if !finished {
			// The chain panicked (or called runtime.Goexit). Nothing is
			// recovered: the panic goes on with its own value and stack.
			m.record(c, route, 500, true, time.Since(start))
		}
	}()
	c.Next()
	d := time.Since(start)
	finished = true
	m.record(c, route, c.Writer.Status(), false, d)
}

// release ends an admitted request: it runs last, on every path.
func (m *middleware) release(held *admittedShard, c *gin.Context) {
	held.leave(c)
	m.lim.Release()
}

func (m *middleware) record(c *gin.Context, route string, status int, panicked bool, d time.Duration) {
	e := agilelimiter.Exchange{
		Method:   c.Request.Method,
		Route:    route,
		Status:   status,
		Header:   c.Writer.Header(),
		Panicked: panicked,
		Duration: d,
	}
	if last := c.Errors.Last(); last != nil {
		e.Err = last // a *gin.Error: errors.Is and errors.As reach the handler's error
	}
	m.lim.Record(m.verdict(e), d)
}

// plainText is shared by every refusal, as gin shares its own header values:
// header slices are only ever replaced, and the capacity of 1 makes an append
// copy.
var plainText = []string{"text/plain; charset=utf-8"}

// refuse returns the default refusal for r. The header values and body are
// built once here, so refusing allocates nothing.
func refuse(r agilelimiter.Refusal) gin.HandlerFunc {
	retryAfter := []string{r.RetryAfter}
	body := r.Body
	return func(c *gin.Context) {
		h := c.Writer.Header()
		h["Retry-After"] = retryAfter
		h["Content-Type"] = plainText
		c.AbortWithStatus(agilelimiter.RefusalStatus)
		_, _ = c.Writer.WriteString(body)
	}
}
