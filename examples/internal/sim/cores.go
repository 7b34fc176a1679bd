package sim

import (
	"context"
	"sync/atomic"
	"time"
)

// Cores is a service's processors, shared by every request in flight
// (processor sharing): a request needs Work of one of N cores, and past N
// requests at once each one slows down in proportion. Letting more requests
// in then buys no throughput, only latency: the service serves N/Work
// requests a second however many it holds. A Cores is safe for concurrent
// use; N and Work must not change once requests run.
type Cores struct {
	N    int           // the number of cores
	Work time.Duration // the work of one request, on one core

	busy atomic.Int64
}

// Do runs one request: it returns once the request's share of the cores has
// done its Work, or with ctx.Err() if ctx ends first (the client went away,
// and the work stops).
func (c *Cores) Do(ctx context.Context) error {
	n := c.busy.Add(1)
	defer c.busy.Add(-1)
	t := time.NewTimer(time.Duration(float64(c.Work) * max(1, float64(n)/float64(c.N))))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Capacity is what the cores serve at most, in requests per second.
func (c *Cores) Capacity() float64 { return float64(c.N) / c.Work.Seconds() }

// Pool is a pool of Size connections (to a database, say) that a handler
// takes without waiting: Get reports false when every one is in use, and the
// handler answers 503 at once. The zero Pool has no connection. A Pool is
// safe for concurrent use.
type Pool struct {
	Size int64

	used atomic.Int64
}

// Get reports whether a connection was free, and takes it if so; give it
// back with Put.
func (p *Pool) Get() bool {
	if p.used.Add(1) > p.Size {
		p.used.Add(-1)
		return false
	}
	return true
}

// Put gives back a connection Get took.
func (p *Pool) Put() { p.used.Add(-1) }
