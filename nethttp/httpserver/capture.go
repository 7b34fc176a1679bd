package httpserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
)

// captureWriter records the final status a handler sends. It lives in the
// one allocation Wrap makes per admitted request (see exchange).
//
// It implements http.Flusher, http.Hijacker and io.ReaderFrom whatever the
// underlying writer supports, delegating when it can (Flush is then a no-op
// and Hijack returns http.ErrNotSupported), and Unwrap, so that
// http.ResponseController reaches the underlying writer's deadlines and full
// duplex mode.
type captureWriter struct {
	http.ResponseWriter
	status int // the first final status written; 0 until then
}

// WriteHeader records the first final status. 1xx informational responses
// (103 Early Hints) may precede it and are not final; 101 Switching Protocols
// is.
func (w *captureWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols) {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *captureWriter) Write(p []byte) (int, error) {
	w.wrote()
	return w.ResponseWriter.Write(p)
}

// WriteString keeps io.WriteString free of a []byte conversion when the
// underlying writer has it, as net/http's does.
func (w *captureWriter) WriteString(s string) (int, error) {
	w.wrote()
	return io.WriteString(w.ResponseWriter, s)
}

// ReadFrom lets io.Copy use the underlying writer's ReadFrom (sendfile for an
// *os.File on net/http's writer) when it has one.
func (w *captureWriter) ReadFrom(src io.Reader) (int64, error) {
	w.wrote()
	return io.Copy(w.ResponseWriter, src)
}

// wrote marks the implicit 200 of a body written before any status.
func (w *captureWriter) wrote() {
	if w.status == 0 {
		w.status = http.StatusOK
	}
}

// Flush implements http.Flusher. Flushing sends the headers, so it implies
// 200 when no status was written.
func (w *captureWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls: it reports
// http.ErrNotSupported when the underlying writer cannot flush.
func (w *captureWriter) FlushError() error {
	w.wrote()
	switch u := w.ResponseWriter.(type) {
	case interface{ FlushError() error }:
		return u.FlushError()
	case http.Flusher:
		u.Flush()
		return nil
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack implements http.Hijacker. A hijacked connection with no status
// written is reported to the verdict as 101 Switching Protocols.
func (w *captureWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return c, rw, err
}

// Unwrap returns the underlying writer, for http.ResponseController.
func (w *captureWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
