package agilefiber_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agilefiber "github.com/agilelimiter/agilelimiter/fiber"
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/valyala/fasthttp"
)

// tickWriter is a stream writer that writes a line every 50 ms, four times:
// a stream that lasts 200 ms. It returns at once when the client is gone, as
// fasthttp's StreamWriter contract asks.
func tickWriter(w *bufio.Writer) {
	for i := range 4 {
		fmt.Fprintf(w, "tick %d\n", i)
		if w.Flush() != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tickReader is the same stream as a reader for c.SendStream: a line every
// 50 ms, four times, and the end 50 ms after the last.
type tickReader struct{ n int }

func (r *tickReader) Read(p []byte) (int, error) {
	if r.n > 0 {
		time.Sleep(50 * time.Millisecond)
	}
	if r.n == 4 {
		return 0, io.EOF
	}
	s := fmt.Sprintf("tick %d\n", r.n)
	r.n++
	return copy(p, s), nil
}

// TestStreamHoldsItsSlot: a streamed response holds its slot until the
// stream ends, as a net/http handler that streams holds it until it returns,
// and is recorded once with the whole stream in its duration. fasthttp runs
// the stream after the handler (and this middleware) has returned.
func TestStreamHoldsItsSlot(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler fiber.Handler
	}{
		{"SetBodyStreamWriter", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/event-stream")
			c.Context().SetBodyStreamWriter(tickWriter)
			return nil
		}},
		{"SendStream", func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/event-stream")
			return c.SendStream(&tickReader{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				lim := fixed(1)
				var x exchanges
				var contentType string
				app := fiber.New()
				app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(func(e agilelimiter.Exchange) agilelimiter.Outcome {
					contentType = strings.Clone(e.Header.Get(fiber.HeaderContentType))
					return x.verdict(e)
				})))
				app.Get("/events", tc.handler)

				done := make(chan response)
				go func() { done <- get(t, app, "/events") }()
				time.Sleep(120 * time.Millisecond) // mid-stream
				synctest.Wait()
				if n := lim.InFlight(); n != 1 {
					t.Errorf("InFlight = %d while the stream runs, want 1", n)
				}
				if n := len(x.all()); n != 0 {
					t.Errorf("verdict ran %d times before the stream ended, want 0", n)
				}
				if got := get(t, app, "/events"); got.status != agilelimiter.RefusalStatus {
					t.Errorf("a second request while the stream holds the only slot got %d, want 429", got.status)
				}

				got := <-done
				if want := "tick 0\ntick 1\ntick 2\ntick 3\n"; got.status != http.StatusOK || got.body != want {
					t.Errorf("stream = %d %q, want 200 %q", got.status, got.body, want)
				}
				if n := lim.InFlight(); n != 0 {
					t.Errorf("InFlight = %d after the stream, want 0", n)
				}
				e := x.only(t)
				if e.Status != http.StatusOK || e.Route != "/events" || e.Method != http.MethodGet || e.Duration != 200*time.Millisecond {
					t.Errorf("verdict saw %+v, want 200 GET /events lasting the whole stream, 200ms", e)
				}
				if contentType != "text/event-stream" {
					t.Errorf("verdict saw Content-Type %q, want the stream's text/event-stream", contentType)
				}
			})
		})
	}
}

// TestStreamGatedWriter holds a stream writer on a channel: while it is
// blocked the slot is held, and it comes back once the writer returns.
func TestStreamGatedWriter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := fixed(1)
		gate := make(chan struct{})
		app := fiber.New()
		app.Use(agilefiber.Limit(lim))
		app.Get("/", func(c *fiber.Ctx) error {
			c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
				w.WriteString("first\n")
				w.Flush()
				<-gate
				w.WriteString("last\n")
			})
			return nil
		})
		done := make(chan response)
		go func() { done <- get(t, app, "/") }()
		synctest.Wait() // the writer is blocked on the gate
		if n := lim.InFlight(); n != 1 {
			t.Errorf("InFlight = %d while the writer is blocked, want 1", n)
		}
		close(gate)
		if got := <-done; got.body != "first\nlast\n" {
			t.Errorf("body = %q, want both lines", got.body)
		}
		if n := lim.InFlight(); n != 0 {
			t.Errorf("InFlight = %d after the writer returned, want 0", n)
		}
	})
}

// brokenConn is a client that sends one request and goes away after reading
// the first limit bytes of the answer: every write past them fails.
type brokenConn struct {
	net.Conn // nil: only what fasthttp calls is implemented
	r        *bytes.Reader
	mu       sync.Mutex
	written  int
	limit    int
}

func (c *brokenConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *brokenConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.written+len(p) > c.limit {
		return 0, net.ErrClosed
	}
	c.written += len(p)
	return len(p), nil
}
func (c *brokenConn) Close() error                     { return nil }
func (c *brokenConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *brokenConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *brokenConn) SetDeadline(time.Time) error      { return nil }
func (c *brokenConn) SetReadDeadline(time.Time) error  { return nil }
func (c *brokenConn) SetWriteDeadline(time.Time) error { return nil }

// serveBroken serves one GET of path over a connection whose client goes
// away after limit bytes of the answer, and returns ServeConn's error.
func serveBroken(app *fiber.App, path string, limit int) error {
	conn := &brokenConn{r: bytes.NewReader([]byte("GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n")), limit: limit}
	srv := &fasthttp.Server{Handler: app.Handler()}
	return srv.ServeConn(conn)
}

// TestStreamClientGoneReleasesOnce: the client goes away mid-stream; fasthttp
// abandons the stream and the slot comes back, once.
func TestStreamClientGoneReleasesOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := fixed(1)
		var x exchanges
		writerDone := make(chan struct{})
		app := fiber.New()
		app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
		app.Get("/events", func(c *fiber.Ctx) error {
			c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
				defer close(writerDone)
				for {
					w.WriteString("tick\n")
					if w.Flush() != nil {
						return // the client is gone
					}
					time.Sleep(50 * time.Millisecond)
				}
			})
			return nil
		})
		if err := serveBroken(app, "/events", 200); err == nil {
			t.Error("ServeConn to a client that went away returned no error")
		}
		if n := lim.InFlight(); n != 0 {
			t.Errorf("InFlight = %d after the client went away mid-stream, want 0", n)
		}
		<-writerDone // the writer sees its writes fail and returns
		if e := x.only(t); e.Status != http.StatusOK || e.ClientGone {
			t.Errorf("verdict saw %+v, want status 200 (fasthttp gives no client-gone signal)", e)
		}
		if st := lim.Stats(); st.InFlight != 0 || st.Admitted != 1 {
			t.Errorf("InFlight %d, Admitted %d at the end, want 0 and 1", st.InFlight, st.Admitted)
		}
	})
}

// panicReader is a SendStream body that fails hard mid-stream.
type panicReader struct{ n int }

func (r *panicReader) Read(p []byte) (int, error) {
	if r.n++; r.n > 2 {
		panic("stream source exploded")
	}
	return copy(p, "data\n"), nil
}

// TestStreamPanicReleases: a stream whose reader panics while fasthttp sends
// it (fasthttp recovers that panic and drops the connection) gives its slot
// back.
func TestStreamPanicReleases(t *testing.T) {
	lim := fixed(1)
	var x exchanges
	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendStream(&panicReader{}) })
	var panicErr *fasthttp.ErrBodyStreamWritePanic
	if err := serveBroken(app, "/", 1<<20); !errors.As(err, &panicErr) {
		t.Errorf("ServeConn = %v, want fasthttp's ErrBodyStreamWritePanic", err)
	}
	if n := lim.InFlight(); n != 0 {
		t.Errorf("InFlight = %d after the stream panicked, want 0", n)
	}
	x.only(t)
	if got := get(t, app, "/ok"); got.status == agilelimiter.RefusalStatus {
		t.Errorf("after the panic the only slot is still held: got %+v", got)
	}
}

// TestStreamOutsideAServer: a fiber app served through adaptor.FiberApp runs
// on a RequestCtx no fasthttp server ever resets, so nothing would say when
// the stream ends: the slot comes back when the handler returns, as for any
// other response, and none is left held.
func TestStreamOutsideAServer(t *testing.T) {
	lim := fixed(1)
	var x exchanges
	app := fiber.New()
	app.Use(agilefiber.Limit(lim, agilefiber.WithVerdict(x.verdict)))
	app.Get("/", func(c *fiber.Ctx) error {
		c.Context().SetBodyStreamWriter(func(w *bufio.Writer) { w.WriteString("streamed") })
		return nil
	})
	h := adaptor.FiberApp(app)
	for range 3 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
		if w.Code != http.StatusOK || w.Body.String() != "streamed" {
			t.Errorf("got %d %q, want 200 streamed", w.Code, w.Body)
		}
		if n := lim.InFlight(); n != 0 {
			t.Fatalf("InFlight = %d after a streamed response outside a server, want 0", n)
		}
	}
	if n := len(x.all()); n != 3 {
		t.Errorf("verdict ran %d times, want 3", n)
	}
}
