package agiletest

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// FIFO is the arithmetic of a queue in front of one or more
// first-come-first-served servers: a request starts on the server that is
// free first, at its arrival or when that server finishes what it already
// holds, whichever is later. Because the queue is FIFO and
// work-conserving, the instant a request leaves is known the moment it
// arrives, so a simulated call is one computation and one sleep on the
// (virtual) clock, with no server goroutine.
//
// [Queue] is a ready-made dependency built on it; simulators that draw
// their own service times (heavy tails, a capacity that changes over time)
// use FIFO directly. A FIFO is not safe for concurrent use: its user holds
// its own lock around [FIFO.Admit].
type FIFO struct {
	free []time.Time // when each server finishes the work it holds
}

// NewFIFO returns a FIFO with servers servers (at least one), all free.
func NewFIFO(servers int) *FIFO {
	return &FIFO{free: make([]time.Time, max(servers, 1))}
}

// Wait returns how long a request arriving at now would queue before a
// server takes it.
func (f *FIFO) Wait(now time.Time) time.Duration {
	return max(f.free[f.first()].Sub(now), 0)
}

// Admit queues a request arriving at now on the server free first (the
// lowest-numbered on a tie) and returns when its service begins and ends.
// service is called once, with the instant service begins, and returns how
// long the server spends on it; that time is spent whether or not the
// request's client is still waiting.
func (f *FIFO) Admit(now time.Time, service func(begin time.Time) time.Duration) (begin, end time.Time) {
	i := f.first()
	begin = now
	if f.free[i].After(begin) {
		begin = f.free[i]
	}
	end = begin.Add(service(begin))
	f.free[i] = end
	return begin, end
}

func (f *FIFO) first() int {
	i := 0
	for j := range f.free {
		if f.free[j].Before(f.free[i]) {
			i = j
		}
	}
	return i
}

// ErrRefused is a [Queue]'s answer when it is down or its queue is full:
// given at once, without doing any work. It wraps [syscall.ECONNREFUSED],
// so the core's default verdicts read it as the dependency unreachable,
// which is what a refused connection is.
var ErrRefused = errors.Join(errors.New("agiletest: refused: the dependency is down or its queue is full"), syscall.ECONNREFUSED)

// Queue is a simulated dependency for tests and examples: one FIFO server
// that finishes capacity requests a second, plus a fixed delay outside the
// server (network, fixed work) that uses no capacity. A request that
// arrives while others are queued waits for them, so latency rises as soon
// as requests come faster than the capacity, as a real overloaded
// service's does. A request that would wait longer than the queue's bound,
// or any request while the capacity is zero (an outage), is refused at
// once with [ErrRefused].
//
// A Queue reads time.Now and sleeps on timers: inside a [synctest] bubble
// minutes of load take milliseconds. It is safe for concurrent use.
type Queue struct {
	mu       sync.Mutex
	capacity float64       // requests per second; 0 is an outage, +Inf no limit
	base     time.Duration // delay outside the server
	maxWait  time.Duration // longest queueing accepted; 0 is no bound
	fifo     FIFO
	served   int
}

// NewQueue returns a Queue serving capacity requests a second
// (math.Inf(1): no capacity limit, only base), base on top of each
// request's time in the server, refusing a request that would wait longer
// than maxWait for the server (0: no bound).
func NewQueue(capacity float64, base, maxWait time.Duration) *Queue {
	return &Queue{capacity: capacity, base: base, maxWait: maxWait, fifo: *NewFIFO(1)}
}

// SetCapacity changes the capacity, in requests per second, from now on: 0
// is an outage. Work already queued keeps its place.
func (q *Queue) SetCapacity(c float64) {
	q.mu.Lock()
	q.capacity = c
	q.mu.Unlock()
}

// SetBase changes the delay outside the server from now on, as a slower
// network path or a level shift in fixed work would.
func (q *Queue) SetBase(d time.Duration) {
	q.mu.Lock()
	q.base = d
	q.mu.Unlock()
}

// Capacity is the capacity now, in requests per second; 0 while down.
func (q *Queue) Capacity() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.capacity
}

// Served is how many requests the Queue has accepted (served, or being
// served), refusals not counted.
func (q *Queue) Served() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.served
}

// Call sends one request and waits for its answer: nil once it is served,
// ErrRefused at once, or ctx.Err() if ctx ends first. A caller that gives
// up does not take its work back: the server spends it anyway, as a real
// server that does not notice a client leave does.
func (q *Queue) Call(ctx context.Context) error {
	now := time.Now()
	q.mu.Lock()
	if q.capacity <= 0 || (q.maxWait > 0 && q.fifo.Wait(now) > q.maxWait) {
		q.mu.Unlock()
		return ErrRefused
	}
	service := time.Duration(0)
	if !math.IsInf(q.capacity, 1) {
		service = time.Duration(float64(time.Second) / q.capacity)
	}
	_, end := q.fifo.Admit(now, func(time.Time) time.Duration { return service })
	ready := end.Add(q.base)
	q.served++
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
		http.Error(w, "agiletest: refused: the dependency is down or its queue is full", http.StatusServiceUnavailable)
	case err == nil:
		io.WriteString(w, "ok\n")
	}
}
