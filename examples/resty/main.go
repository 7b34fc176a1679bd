// Command resty shows agileresty.Limit pacing a resty client whose calls
// retry.
//
// The dependency takes 20ms per call and fails one call in three with a 500.
// The client retries 5xx up to twice, 50ms apart. Every attempt takes its own
// slot and is measured on its own round trip, so the controller's p50 stays
// at one attempt's 20ms while the callers, who wait through the retries, see
// much longer calls. Sixteen callers run for two seconds; the program prints
// what the callers saw and what the limiter measured.
//
//	go run ./examples/resty
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileresty "github.com/agilelimiter/agilelimiter/resty"
	"github.com/go-resty/resty/v2"
)

// quiet drops resty's log lines about retries.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}
func (quiet) Warnf(string, ...any)  {}
func (quiet) Debugf(string, ...any) {}

func main() {
	var served atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		if served.Add(1)%3 == 0 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()

	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 400, SLOTarget: 200 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	client := agileresty.Limit(resty.New().
		SetLogger(quiet{}).
		SetRetryCount(2).
		SetRetryWaitTime(50*time.Millisecond).SetRetryMaxWaitTime(50*time.Millisecond).
		AddRetryCondition(func(r *resty.Response, err error) bool {
			if agileresty.Refused(err) {
				return false // no slot before the deadline: not the dependency's failure
			}
			return err != nil || r.StatusCode() >= 500
		}), lim)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var (
		mu        sync.Mutex
		calls     []time.Duration
		succeeded int
	)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for ctx.Err() == nil {
				start := time.Now()
				resp, err := client.R().SetContext(ctx).Get(url)
				if ctx.Err() != nil || agileresty.Refused(err) {
					return // the run is over, or no slot comes before its end
				}
				mu.Lock()
				calls = append(calls, time.Since(start))
				if err == nil && resp.StatusCode() == http.StatusOK {
					succeeded++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	slices.Sort(calls)
	st := lim.Stats()
	fmt.Printf("callers: %d calls, %d succeeded; call p50 %v, p99 %v (retries and back-off included)\n",
		len(calls), succeeded, calls[len(calls)/2].Round(time.Millisecond), calls[len(calls)*99/100].Round(time.Millisecond))
	fmt.Printf("limiter: %d attempts admitted (%.2f per call), rate %.0f req/s\n",
		st.Admitted, float64(st.Admitted)/float64(len(calls)), lim.Rate())
	fmt.Printf("controller: attempt p50 %v, baseline %v: one round trip, never the retry loop\n",
		st.P50.Round(time.Millisecond), st.Baseline.Round(time.Millisecond))
}
