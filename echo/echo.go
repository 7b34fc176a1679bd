// Package agileecho caps how many requests an echo server handles at once
// with an [agilelimiter.ConcurrencyLimiter] whose limit follows the measured
// latency:
//
//	e.Use(agileecho.Limit(lim))
//
// A request that finds the limiter full is refused at once, without running
// the handler and without being observed. By default the middleware writes
// [agilelimiter.NewRefusal]'s response itself: status 429
// ([agilelimiter.RefusalStatus]), a Retry-After header (one second unless
// [WithRetryAfter] says otherwise) and a short text/plain body, the same bytes
// every adapter of this project sends. It is written directly, not through
// echo's HTTPErrorHandler, so that a refusal never depends on the
// application's error handler (which may log every error, render a template,
// or fail while the server is at its busiest) and is identical behind gin,
// fiber or net/http. [WithHTTPError] returns the refusal as an
// *echo.HTTPError instead, for an application whose error handler gives
// every error one JSON format; [WithRejection] replaces it outright.
//
// An admitted request runs the rest of the chain. Its duration, up to the
// moment the handler returns, and the status the client receives feed the
// controller through the shared inbound verdict
// ([agilelimiter.DefaultServerVerdict] unless [WithVerdict] says otherwise):
//
//	the client went away   Aborted      a truncated measurement (see below)
//	503                    Unreachable  the handler shed load (a pool ran dry): the limit comes down
//	429, other 4xx         Aborted      about the client (a per-client quota, a 404), not capacity
//	everything else        Reached      the duration is a sample; a panic counts as a 500
//
// A request's client went away when its context (the request's as it
// reached Limit, not one the chain derived from it) was cancelled by the time
// the handler returned, which is how net/http says the connection closed; a
// deadline that passed is a server-side timeout, and that answer is recorded
// as the real, slow one it is ([agilelimiter.ClientGone]).
//
// The duration leaves out the time the handler spent waiting for the client
// to send the request body: the middleware puts an [agilelimiter.TimedBody]
// in place of the request's body while the handler runs and puts the
// original back afterwards, so a slow upload does not read as a slow service.
//
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
	"net/http"
	"strings"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/labstack/echo/v4"
)

// Limit returns echo middleware that admits a request only if lim has a free
// slot, and reports every admitted request's outcome to lim. It panics if lim
// is nil. lim's controller is the caller's to Start and Stop. The middleware
// is safe for concurrent use. Beyond the one closure echo builds for every
// middleware on every request, an admitted request allocates in it only the
// [agilelimiter.TimedBody] around its body, if it has one, and the default
// refusal nothing.
func Limit(lim *agilelimiter.ConcurrencyLimiter, opts ...Option) echo.MiddlewareFunc {
	if lim == nil {
		panic("agileecho: Limit with a nil limiter")
	}
	cfg := newConfig(opts)
	ref := agilelimiter.NewRefusal(cfg.retryAfter)
	a := &adapter{lim: lim, verdict: cfg.verdict, skip: cfg.skipper}
	switch {
	case cfg.rejection != nil:
		a.reject = retryAfterThen(ref, cfg.rejection)
	case cfg.httpError:
		a.reject = httpErrorRefusal(ref)
	default:
		a.reject = plainRefusal(ref)
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
	// The request as it arrived: the chain may replace it (c.SetRequest with
	// a context it cancels on the way out, say), but the client's context and
	// the body to put back are this one's.
	req := c.Request()
	body := req.Body
	var timed *agilelimiter.TimedBody
	if body != nil && body != http.NoBody {
		timed = &agilelimiter.TimedBody{ReadCloser: body}
		req.Body = timed
	}
	start := time.Now()
	returned := false
	defer func() {
		if timed != nil {
			req.Body = body
		}
		if returned {
			return
		}
		// recover is nil when the handler called runtime.Goexit: no response
		// was sent and there is nothing to learn.
		if v := recover(); v != nil {
			err, _ := v.(error)
			a.report(c, req, 500, err, true, timed.Since(start))
			panic(v)
		}
	}()
	err := next(c)
	d := timed.Since(start)
	returned = true
	if err != nil {
		// Until the error handler runs, Response().Status still reads 200.
		// Committing the error here is what the client will see; returning
		// nil keeps echo from handing it to the error handler a second time.
		c.Error(err)
	}
	a.report(c, req, c.Response().Status, err, false, d)
	return nil
}

// report hands one finished request to the verdict and the limiter.
func (a *adapter) report(c echo.Context, req *http.Request, status int, err error, panicked bool, d time.Duration) {
	o := a.verdict(agilelimiter.Exchange{
		Method:     req.Method,
		Route:      c.Path(),
		Status:     status,
		Header:     c.Response().Header(),
		Err:        err,
		Panicked:   panicked,
		Duration:   d,
		ClientGone: agilelimiter.ClientGone(req.Context()),
	})
	a.lim.Record(o, d)
}

// plainRefusal returns the default rejection: r's headers (their values
// shared, never modified: net/http only ever replaces a header's slice), its
// status and its body, and nothing else. Echo's c.String would allocate a
// copy of the body and a slice per header on every refused request, at the
// moment the server is busiest; this allocates nothing.
func plainRefusal(r agilelimiter.Refusal) echo.HandlerFunc {
	body := []byte(r.Body)
	return func(c echo.Context) error {
		res := c.Response()
		h := res.Header()
		for k, v := range r.Header {
			h[k] = v
		}
		res.WriteHeader(r.Status)
		_, err := res.Write(body)
		return err
	}
}

// httpErrorRefusal returns the rejection of [WithHTTPError]: Retry-After set
// on the response, and r as an *echo.HTTPError for the application's error
// handler to render. Each refusal gets its own HTTPError, so an error handler
// that modifies the one it is given cannot change the next.
func httpErrorRefusal(r agilelimiter.Refusal) echo.HandlerFunc {
	retryAfter := r.Header["Retry-After"]
	var msg any = strings.TrimSuffix(r.Body, "\n") // boxed once, not per refusal
	return func(c echo.Context) error {
		c.Response().Header()["Retry-After"] = retryAfter
		return &echo.HTTPError{Code: r.Status, Message: msg}
	}
}

// retryAfterThen returns custom preceded by setting r's Retry-After, so that
// a custom refusal keeps the retry hint unless it removes it.
func retryAfterThen(r agilelimiter.Refusal, custom echo.HandlerFunc) echo.HandlerFunc {
	retryAfter := r.Header["Retry-After"]
	return func(c echo.Context) error {
		c.Response().Header()["Retry-After"] = retryAfter
		return custom(c)
	}
}
