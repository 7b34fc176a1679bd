package agiletest_test

import (
	"net/http"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// reference is the smallest inbound adapter that keeps the contract: the
// suite's own check that it can be passed, with nothing but the core.
func reference(lim *agilelimiter.ConcurrencyLimiter, h http.Handler, retryAfter time.Duration) http.Handler {
	if lim == nil {
		panic("reference: nil limiter")
	}
	if retryAfter == 0 {
		retryAfter = agilelimiter.DefaultRetryAfter
	}
	refusal := agilelimiter.NewRefusal(retryAfter)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !lim.TryTake() {
			for k, v := range refusal.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(refusal.Status)
			_, _ = w.Write([]byte(refusal.Body))
			return
		}
		defer lim.Release()
		sw := &statusWriter{ResponseWriter: w}
		var body *agilelimiter.TimedBody
		if r.Body != nil && r.Body != http.NoBody {
			body = &agilelimiter.TimedBody{}
			body.Reset(r.Body)
			orig := r.Body
			r.Body = body
			defer func() { r.Body = orig }()
		}
		start := time.Now()
		done := false
		defer func() {
			d := time.Since(start)
			if body != nil {
				d -= body.Waited()
			}
			status := sw.status
			if !done {
				status = http.StatusInternalServerError
			} else if status == 0 {
				status = http.StatusOK
			}
			lim.Record(agilelimiter.DefaultServerVerdict(agilelimiter.Exchange{
				Method: r.Method, Route: r.URL.Path, Status: status, Header: w.Header(),
				Panicked: !done, Duration: d, ClientGone: agilelimiter.ClientGone(r.Context()),
			}), d)
		}()
		h.ServeHTTP(sw, r)
		done = true
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func TestInboundReference(t *testing.T) {
	agiletest.Inbound{Name: "reference", Wrap: reference}.Run(t)
}
