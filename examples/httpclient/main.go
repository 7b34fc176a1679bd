// Command httpclient shows httpclient.Wrap pacing calls to a dependency on
// loopback.
//
// The dependency serves 8 requests at a time at 10ms each (about 800 req/s)
// and queues the rest; past 32 queued it answers 503 with Retry-After. Between
// 1.5s and 2.5s it is down and answers every call with an instant 503.
// Twenty-four callers send as fast as the limiter lets them, each with a
// 300ms deadline; a caller whose slot would come after its deadline is
// refused at once (agilelimiter.ErrDeadline) without a network call. The rate
// falls to MinRate while the dependency is down (an instant 503 is not a fast,
// healthy answer) and climbs back after. It prints one line per half second
// and exits after six seconds.
//
//	go run ./examples/httpclient
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// dependency is a service with 8 workers and a bounded queue, down for one
// second in the middle of the run.
type dependency struct {
	start   time.Time
	workers chan struct{}
	queued  atomic.Int64
}

func (d *dependency) down() bool {
	el := time.Since(d.start)
	return el >= 1500*time.Millisecond && el < 2500*time.Millisecond
}

func (d *dependency) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d.down() {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if d.queued.Add(1) > 32 {
		d.queued.Add(-1)
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	d.workers <- struct{}{}
	d.queued.Add(-1)
	time.Sleep(10 * time.Millisecond)
	<-d.workers
	io.WriteString(w, "ok\n")
}

func main() {
	start := time.Now()
	dep := &dependency{start: start, workers: make(chan struct{}, 8)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: dep}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	lim := agilelimiter.New(agilelimiter.Config{
		MinRate:   20,                     // the outage probe rate
		MaxRate:   1000,                   // what we promise the dependency at most
		SLOTarget: 100 * time.Millisecond, // p99 guard; also anchors Unreachable before the first sample
	})
	lim.Start()
	defer lim.Stop()
	client := &http.Client{Transport: httpclient.Wrap(&http.Transport{MaxIdleConnsPerHost: 64}, lim)}

	var ok, unavailable, refused, timedOut atomic.Int64
	var retryAfter atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 24 {
		wg.Go(func() {
			for ctx.Err() == nil {
				rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
				req, _ := http.NewRequestWithContext(rctx, "GET", url, nil)
				resp, err := client.Do(req)
				rcancel()
				switch {
				case errors.Is(err, agilelimiter.ErrDeadline):
					refused.Add(1)
					time.Sleep(10 * time.Millisecond)
				case errors.Is(err, context.DeadlineExceeded):
					timedOut.Add(1)
				case err != nil:
				case resp.StatusCode == http.StatusOK:
					ok.Add(1)
				default:
					unavailable.Add(1)
					if d, ok := httpclient.RetryAfter(resp); ok {
						retryAfter.Store(int64(d))
					}
				}
				if resp != nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
	}

	fmt.Println("  time  dependency    rate      p50     200    503  refused  timed out  decision")
	wasDown := false
	for tick := time.NewTicker(500 * time.Millisecond); ctx.Err() == nil; {
		select {
		case <-tick.C:
		case <-ctx.Done():
			continue
		}
		state := "up"
		if wasDown || dep.down() {
			state = "down" // for some of the last half second
		}
		wasDown = dep.down()
		st := lim.Stats()
		fmt.Printf("%5.1fs  %10s  %6.0f  %7v  %6d %6d  %7d  %9d  %s\n", time.Since(start).Seconds(), state, lim.Rate(),
			st.P50.Round(100*time.Microsecond), ok.Swap(0), unavailable.Swap(0), refused.Swap(0), timedOut.Swap(0), st.Decision)
	}
	wg.Wait()
	fmt.Printf("the dependency's last Retry-After: %v; admitted %d, refused for deadline %d\n",
		time.Duration(retryAfter.Load()), lim.Stats().Admitted, lim.Stats().RejectedDeadline)
}
