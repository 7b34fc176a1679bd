// Package load drives the examples: closed-loop clients that call as fast as
// they are answered ([Loop]), an open-loop stream of callers arriving at
// random at a mean rate ([Arrivals]), and an HTTP GET that reads its answer
// ([Get]). The run ends when its context does; every client finishes the
// call it has started, so the examples can account for every call.
//
// It belongs to the examples, not to the library.
package load

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"
)

// Loop runs n clients, each calling fn(i) (i from 0 to n-1) over and over
// until ctx ends, and returns a func that waits for every client to finish
// its last call. ctx only ends the loop: fn's calls must not use it, so that
// a call under way when the run ends still gets its real outcome.
func Loop(ctx context.Context, n int, fn func(i int)) (wait func()) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				fn(i)
			}
		})
	}
	return wg.Wait
}

// Arrivals starts fn in a goroutine of its own at random instants, rate a
// second on average (a Poisson process: each caller arrives independently of
// how the others fare), until ctx ends. It returns a func that waits for the
// last fn to return. As with Loop, fn's calls must not use ctx.
func Arrivals(ctx context.Context, rate float64, fn func()) (wait func()) {
	var wg sync.WaitGroup
	wg.Go(func() {
		next := time.Now()
		for {
			next = next.Add(time.Duration(rand.ExpFloat64() / rate * float64(time.Second)))
			t := time.NewTimer(time.Until(next))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			wg.Go(fn)
		}
	})
	return wg.Wait
}

// Client returns an http.Client for a swarm of clients on loopback: it keeps
// up to 512 idle connections to a host (the default, 2, would dial a new
// connection for nearly every request and run out of ports), and gives up on
// a request after timeout.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: Transport(), Timeout: timeout}
}

// Transport returns the http.Transport of [Client], for a client whose
// transport a limiter wraps.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 512
	return t
}

// Get sends a GET to url with c, reads the body and returns the status code
// and header; 0 and nil when no response came (a timeout, a refused
// connection).
func Get(c *http.Client, url string) (int, http.Header) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}
