// Command resty shows agileresty.Limit pacing a resty client whose calls
// retry.
//
// The dependency (sim.Flaky) takes 20 ms per call and fails one call in three
// with a 500. The client retries 5xx up to twice, 50 ms apart. Every attempt
// takes its own slot and is measured on its own round trip, so the
// controller's p50 stays at one attempt's 20 ms while the callers, who wait
// through the retries, see much longer calls. Sixteen callers start calls for
// two seconds, each call with a one-second deadline; the program prints what
// became of every call and every attempt, and what the limiter measured.
//
//	go run ./examples/resty
package main

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/go-resty/resty/v2"
)

// quiet drops resty's log lines about retries.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}

func main() {
	dep := &sim.Flaky{Latency: 20 * time.Millisecond, FailEvery: 3}
	url, closeDep := sim.Serve(dep)
	defer closeDep()

	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 400, SLOTarget: 200 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	client := agileresty.Limit(resty.New().
		SetLogger(quiet{}).
		SetRetryCount(2).
		SetRetryWaitTime(50*time.Millisecond).SetRetryMaxWaitTime(50*time.Millisecond).
		AddRetryCondition(func(r *resty.Response, err error) bool {
			return err != nil || r.StatusCode() >= 500 // a refused attempt never gets here
		}), lim)

	var succeeded, failed, refused, errored table.Count
	var attempts atomic.Int64
	var mu sync.Mutex
	var took []time.Duration // how long each call that was sent took its caller
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	load.Loop(ctx, 16, func(int) {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		req := client.R().SetContext(cctx)
		resp, err := req.Get(url)
		attempts.Add(int64(req.Attempt))
		switch {
		case agileresty.Refused(err): // no slot before the deadline: not sent
			refused.Inc()
			time.Sleep(50 * time.Millisecond) // try again a little later
			return
		case err != nil:
			errored.Inc()
		case resp.StatusCode() == http.StatusOK:
			succeeded.Inc()
		default:
			failed.Inc() // a 5xx on every attempt
		}
		mu.Lock()
		took = append(took, time.Since(start))
		mu.Unlock()
	})()

	st := lim.Stats()
	calls := succeeded.Total() + failed.Total() + refused.Total() + errored.Total()
	fmt.Printf("attempts: %d = %d first attempts + %d retries; the limiter admitted %d (the dependency received %d) and refused %d\n",
		attempts.Load(), calls, attempts.Load()-calls, st.Admitted, dep.Received(), st.RejectedDeadline)
	fmt.Printf("controller: attempt p50 %s ms, baseline %s ms, rate %.0f req/s: one round trip, never the retry loop\n",
		table.Ms(st.P50), table.Ms(st.Baseline), lim.Rate())
	fmt.Printf("callers: a call took p50 %s ms, p99 %s ms (the refused left out; the limiter's wait, retries and back-off included)\n",
		table.Ms(table.Quantile(took, 0.5)), table.Ms(table.Quantile(took, 0.99)))
	fmt.Printf("%d calls: %d succeeded, %d failed (a 500 on all 3 attempts), %d refused (no slot before the call's 1 s deadline), %d other errors\n",
		calls, succeeded.Total(), failed.Total(), refused.Total(), errored.Total())
}
