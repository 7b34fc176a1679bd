package sim

import (
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// Flaky is an HTTP dependency that answers every request after Latency and
// fails every FailEvery-th one (the third, the sixth…) with a 500: a
// dependency whose failures a client retries. FailEvery 0 never fails. A
// Flaky is safe for concurrent use; its fields must not change once it
// serves.
type Flaky struct {
	Latency   time.Duration
	FailEvery int64

	received atomic.Int64
}

// ServeHTTP answers after Latency: 200 "ok", or 500 for every FailEvery-th
// request.
func (f *Flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(f.Latency)
	if n := f.received.Add(1); f.FailEvery > 0 && n%f.FailEvery == 0 {
		http.Error(w, "failed", http.StatusInternalServerError)
		return
	}
	io.WriteString(w, "ok\n")
}

// Received is the number of requests Flaky has answered.
func (f *Flaky) Received() int64 { return f.received.Load() }
