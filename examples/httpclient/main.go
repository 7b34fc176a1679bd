// Command httpclient shows httpclient.Wrap pacing calls to a dependency on
// loopback.
//
// The dependency (agiletest.Queue) serves 800 requests a second from a FIFO queue,
// 10 ms of network on top; a request that would queue more than 40 ms gets a
// 503 with Retry-After. From 1.25 s to 2.25 s it is down and answers every
// call with an instant 503. Twenty-four callers send as fast as the limiter
// lets them, each with a 300 ms deadline; a caller whose slot would come less
// than a round trip (the limiter's last p99, and at least the SLO) before its
// deadline is refused at once (agilelimiter.ErrDeadline) without a network
// call. The first 503
// asks for a second's pause (Retry-After: 1): httpclient.Wrap pauses the
// limiter, so the dependency that is down hears nothing more until then, and
// callers whose deadline falls inside the pause are refused at once; after
// it, sending restarts from a window of one call and doubles back. It prints
// one row per half second and exits after six seconds.
//
//	go run ./examples/httpclient
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

func main() {
	dep := agiletest.NewQueue(800, 10*time.Millisecond, 40*time.Millisecond)
	time.AfterFunc(1250*time.Millisecond, func() { dep.SetCapacity(0) })
	time.AfterFunc(2250*time.Millisecond, func() { dep.SetCapacity(800) })
	url, closeDep := sim.Serve(dep)
	defer closeDep()

	lim := agilelimiter.New(agilelimiter.Config{
		MinRate:   20,                     // the outage probe rate
		MaxRate:   1000,                   // what we promise the dependency at most
		SLOTarget: 100 * time.Millisecond, // p99 guard; also anchors Unreachable before the first sample
	})
	lim.Start()
	defer lim.Stop()
	client := &http.Client{Transport: httpclient.Wrap(load.Transport(), lim)}

	var ok, unavailable, refused, timedOut, failed table.Count
	var retryAfter atomic.Int64 // the last 503's Retry-After
	ctx, stop := context.WithCancel(context.Background())
	wait := load.Loop(ctx, 24, func(int) {
		rctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		switch {
		case errors.Is(err, agilelimiter.ErrDeadline): // never sent
			refused.Inc()
			time.Sleep(10 * time.Millisecond)
		case errors.Is(err, context.DeadlineExceeded): // waiting for a slot, or in flight
			timedOut.Inc()
		case err != nil:
			failed.Inc()
		case resp.StatusCode == http.StatusOK:
			ok.Inc()
		default:
			unavailable.Inc()
			d, _ := httpclient.RetryAfter(resp)
			retryAfter.Store(int64(d))
		}
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})

	table.New(os.Stdout,
		table.Value("capacity", "req/s", dep.Capacity),
		table.Value("rate", "req/s", lim.Rate),
		table.Millis("p50", func() time.Duration { return lim.Stats().P50 }),
		table.PerSecond("200", "req/s", &ok),
		table.PerSecond("503", "req/s", &unavailable),
		table.PerSecond("refused", "req/s", &refused),
		table.PerSecond("timed out", "req/s", &timedOut),
		table.Text("decision", func() string { return lim.Stats().Decision }),
	).Every(500*time.Millisecond, 12)
	stop()
	wait()
	st := lim.Stats()
	fmt.Printf("503s asked to retry after %v; admitted %d, refused for deadline %d, deadline passed while waiting %d\n",
		time.Duration(retryAfter.Load()), st.Admitted, st.RejectedDeadline, st.Canceled)
	fmt.Printf("%d calls: %d answered 200, %d answered 503, %d refused (never sent), %d timed out, %d other errors\n",
		ok.Total()+unavailable.Total()+refused.Total()+timedOut.Total()+failed.Total(),
		ok.Total(), unavailable.Total(), refused.Total(), timedOut.Total(), failed.Total())
}
