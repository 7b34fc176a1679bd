package main

import (
	"net/http"
	"sync"
	"time"
)

// dependency is the simulated service the outbound limiter protects: a
// single FIFO queue in front of a server that finishes capacity requests a
// second, plus a fixed network-and-processing delay. A request that arrives
// while others are queued waits for them, so latency rises as soon as the
// offered rate exceeds the capacity, exactly as a real overloaded service's does.
// A queue longer than maxQueue, or a capacity of zero (an outage), is answered
// at once with 503.
type dependency struct {
	base     time.Duration // latency of an idle server
	maxQueue time.Duration // longest wait admitted before answering 503

	mu       sync.Mutex
	capacity float64   // requests per second; 0 is an outage
	nextFree time.Time // when the server finishes the work already queued
}

// setCapacity changes the capacity from now on; work already queued keeps
// its place.
func (d *dependency) setCapacity(c float64) {
	d.mu.Lock()
	d.capacity = c
	d.mu.Unlock()
}

func (d *dependency) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	d.mu.Lock()
	c := d.capacity
	start := now
	if d.nextFree.After(now) {
		start = d.nextFree
	}
	if c <= 0 || start.Sub(now) > d.maxQueue {
		d.mu.Unlock()
		http.Error(w, "503 overloaded", http.StatusServiceUnavailable)
		return
	}
	d.nextFree = start.Add(time.Duration(float64(time.Second) / c))
	ready := d.nextFree.Add(d.base)
	d.mu.Unlock()

	// A real server does not notice a client that gave up: the work queued
	// above is spent either way. It only stops writing to a closed connection.
	t := time.NewTimer(time.Until(ready))
	defer t.Stop()
	select {
	case <-t.C:
		w.Write([]byte("ok\n"))
	case <-r.Context().Done():
	}
}
