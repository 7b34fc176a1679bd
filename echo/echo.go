// Package agileecho caps how many requests an echo server handles at once
// with an [agilelimiter.ConcurrencyLimiter] whose limit follows the measured
// latency:
//
//	e.Use(agileecho.Limit(lim))
//
// A request that finds the limiter full is refused at once, without running
// the handler and without being observed: the client gets status 429
// ([agilelimiter.RefusalStatus]), a Retry-After header (one second unless
// [WithRetryAfter] says otherwise) and a short text/plain body. [WithRejection]
// replaces that response.
//
// An admitted request runs the rest of the chain. Its duration, up to the
// moment the handler returns, and the status the client receives feed the
// controller through the shared inbound verdict
// ([agilelimiter.DefaultServerVerdict] unless [WithVerdict] says otherwise).
// Echo writes the status of a returned error later, in its HTTPErrorHandler,
// so the middleware hands the error to c.Error at once, as echo's
// RequestLogger does, reads the committed status, and returns nil: the error
// handler runs once, and middleware outside sees the committed response and a
// nil error (as after echo's Recover): a middleware that needs the error value
// itself belongs inside the limiter. A handler that panics has its slot
// released, is recorded as a 500 with Panicked set (and Err set when the panic
// value is an error), and the panic continues with the same value.
//
// Recommended order, outermost first:
//
//	e.Use(middleware.RequestLogger...) // logs refusals and the final status
//	e.Use(middleware.Recover())        // outside the limiter, so the verdict sees Panicked
//	e.Use(agileecho.Limit(lim))        // once, around every route that shares the budget
//
// Register it with e.Use (or a group's Use) rather than e.Pre, so that the
// router has run before the skipper is called.
package agileecho

import (
	"strconv"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/labstack/echo/v4"
)

// Limit returns echo middleware that admits a request only if lim has a free
// slot, and reports every admitted request's outcome to lim. lim's controller
// is the caller's to Start and Stop. The middleware is safe for concurrent
// use. Neither an admitted request nor a refusal allocates in it, beyond the
// one closure echo builds for every middleware on every request.
func Limit(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) echo.MiddlewareFunc {
	cfg := newConfig(opts)
	a := &adapter{lim: lim, verdict: cfg.verdict, reject: cfg.rejection, skip: cfg.skipper}
	if a.reject == nil {
		a.reject = newRefusal(cfg.retryAfter).write
	}
	// Echo builds the chain on every request, so this closure is allocated
	// per request whatever it holds; capturing one pointer keeps it small.
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return a.handle(c, next) }
	}
}

// adapter is one Limit middleware.
type adapter struct {
	lim     *agilelimiter.ConcurrencyLimiter
	verdict agilelimiter.ServerVerdict
	reject  echo.HandlerFunc
	skip    func(echo.Context) bool
}

// handle runs one request through the middleware.
func (a *adapter) handle(c echo.Context, next echo.HandlerFunc) error {
	if a.skip != nil && a.skip(c) {
		return next(c)
	}
	if !a.lim.TryTake() {
		return a.reject(c)
	}
	return a.serve(c, next)
}

// serve runs next holding a slot taken by TryTake and reports the outcome.
func (a *adapter) serve(c echo.Context, next echo.HandlerFunc) error {
	defer a.lim.Release()
	start := time.Now()
	returned := false
	defer func() {
		if returned {
			return
		}
		// recover is nil when the handler called runtime.Goexit: no response
		// was sent and there is nothing to learn.
		if v := recover(); v != nil {
			err, _ := v.(error)
			a.report(c, 500, err, true, time.Since(start))
			panic(v)
		}
	}()
	err := next(c)
	d := time.Since(start)
	returned = true
	if err != nil {
		// Until the error handler runs, Response().Status still reads 200.
		// Committing the error here is what the client will see; returning
		// nil keeps echo from handing it to the error handler a second time.
		c.Error(err)
	}
	a.report(c, c.Response().Status, err, false, d)
	return nil
}

// report hands one finished request to the verdict and the limiter.
func (a *adapter) report(c echo.Context, status int, err error, panicked bool, d time.Duration) {
	o := a.verdict(agilelimiter.Exchange{
		Method:   c.Request().Method,
		Route:    c.Path(),
		Status:   status,
		Header:   c.Response().Header(),
		Err:      err,
		Panicked: panicked,
		Duration: d,
	})
	a.lim.Record(o, d)
}

// refusal is the default rejection, built once per middleware so that
// refusing allocates nothing. The header values are shared by every refused
// response; their capacity equals their length, so a later Header().Add
// copies instead of writing into them.
type refusal struct {
	retryAfter, contentType, contentLength []string
	body                                   []byte
}

func newRefusal(d time.Duration) *refusal {
	r := agilelimiter.NewRefusal(d)
	return &refusal{
		retryAfter:    []string{r.RetryAfter},
		contentType:   []string{"text/plain; charset=utf-8"},
		contentLength: []string{strconv.Itoa(len(r.Body))},
		body:          []byte(r.Body),
	}
}

// write sends the refusal. Echo's c.String would allocate a copy of the body
// and a slice per header on every refused request, at the moment the server
// is busiest.
func (r *refusal) write(c echo.Context) error {
	res := c.Response()
	h := res.Header()
	h["Retry-After"] = r.retryAfter
	h["Content-Type"] = r.contentType
	h["Content-Length"] = r.contentLength
	res.WriteHeader(agilelimiter.RefusalStatus)
	_, err := res.Write(r.body)
	return err
}
