package sim

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"time"
)

// ErrRefused is a [Queue]'s answer when it is down or its queue is full:
// given at once, without doing any work.
var ErrRefused = errors.New("sim: refused: the dependency is down or its queue is full")

// Queue is a dependency with one FIFO server that finishes capacity requests
// a second, plus a fixed delay outside the server (network, fixed work) that
// uses no capacity. A request that arrives while others are queued waits for
// them, so its latency rises as soon as requests come faster than the
// capacity, as a real overloaded service's does. A request that would wait
// longer than the queue's bound, or any request while the capacity is zero
// (an outage), is refused at once with [ErrRefused].
//
// A Queue is safe for concurrent use.
type Queue struct {
	base, maxWait time.Duration

	mu       sync.Mutex
	capacity float64   // requests per second; 0 is an outage
	nextFree time.Time // when the server finishes the work already queued
}

// NewQueue returns a Queue serving capacity requests a second, base on top
// of each request's time in the server, refusing a request that would wait
// longer than maxWait for the server (0: no bound).
func NewQueue(capacity float64, base, maxWait time.Duration) *Queue {
	return &Queue{base: base, maxWait: maxWait, capacity: capacity}
}

// SetCapacity changes the capacity, in requests per second, from now on: 0
// is an outage. Work already queued keeps its place.
func (q *Queue) SetCapacity(c float64) {
	q.mu.Lock()
	q.capacity = c
	q.mu.Unlock()
}

// Capacity is the capacity now, in requests per second; 0 while down.
func (q *Queue) Capacity() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.capacity
}

// Call sends one request and waits for its answer: nil once it is served,
// ErrRefused at once, or ctx.Err() if ctx ends first. A caller that gives up
// does not take its work back: the server spends it anyway, as a real server
// that does not notice a client leave does.
func (q *Queue) Call(ctx context.Context) error {
	now := time.Now()
	q.mu.Lock()
	start := now
	if q.nextFree.After(now) {
		start = q.nextFree
	}
	if q.capacity <= 0 || (q.maxWait > 0 && start.Sub(now) > q.maxWait) {
		q.mu.Unlock()
		return ErrRefused
	}
	q.nextFree = start.Add(time.Duration(float64(time.Second) / q.capacity))
	ready := q.nextFree.Add(q.base)
	q.mu.Unlock()

	t := time.NewTimer(time.Until(ready))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP answers 200 "ok" when the request is served and 503 with
// Retry-After: 1 when it is refused; it writes nothing to a client that
// went away.
func (q *Queue) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch err := q.Call(r.Context()); {
	case errors.Is(err, ErrRefused):
		w.Header().Set("Retry-After", "1")
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
	case err == nil:
		io.WriteString(w, "ok\n")
	}
}
