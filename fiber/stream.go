package agilefiber

import (
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

// A streamed response (c.Context().SetBodyStreamWriter, c.SendStream, a large
// c.SendFile) is sent by fasthttp after the handler, and this middleware, have
// returned: the stream writer runs on its own goroutine and fasthttp copies
// what it writes to the connection. Released when the handler returns, the
// slot would be free while the stream still works, and the limit would count
// none of the service's streams. So the slot goes with the stream: it is
// handed to the fasthttp.RequestCtx as a user value, which fasthttp closes
// once it has finished with the response (SetUserValue's contract: every
// io.Closer value is closed when the request ends), whether the stream ran to
// its end, the client went away mid-stream, or reading the stream panicked.
// That is when the slot is released and the exchange recorded, once.

// stream is the slot and the record of an admitted request whose response is
// a stream, waiting for fasthttp to finish sending it.
type stream struct {
	m      *middleware
	rctx   *fasthttp.RequestCtx
	method string
	route  string
	err    error
	start  time.Time
	closed atomic.Bool
}

// holdStream hands the slot of c, whose response is a stream, to that
// stream, and reports whether it did. It does not when no fasthttp server
// serves c (ConnRequestNum is 0: adaptor.FiberApp, or app.Handler called on
// a RequestCtx of one's own): nothing then closes the request's user values,
// so the caller releases the slot at once, as for any other response.
func holdStream(m *middleware, c *fiber.Ctx, err error, start time.Time) bool {
	rctx := c.Context()
	if rctx.ConnRequestNum() == 0 {
		return false
	}
	// method and route are views into the request's buffers and the route
	// table, not into the pooled *fiber.Ctx: they stay valid until fasthttp
	// resets the request, which it does after closing the user values.
	s := &stream{m: m, rctx: rctx, method: c.Method(), route: c.Route().Path, err: err, start: start}
	rctx.SetUserValue(s, s)
	return true
}

// Close is called by fasthttp when it has finished with the response. It
// records the exchange, with the stream's whole life as its duration (what a
// net/http handler that streams is measured for), and releases the slot. It
// runs once; later calls do nothing.
func (s *stream) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	defer s.m.lim.Release()
	resp := &s.rctx.Response
	s.m.record(s.method, s.route, resp.StatusCode(), &resp.Header, s.err, false, time.Since(s.start))
	return nil
}
