package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	"github.com/agilelimiter/agilelimiter/nethttp/httpserver"
)

// The inbound side: a service of our own, protected by a ConcurrencyLimiter,
// under a swarm of clients sending twice what it can serve. The limiter
// admits what the service can hold and answers the rest at once with 429 and
// Retry-After, instead of letting every request slow down together.

// The service has inboundCores cores and each request needs inboundWork of
// one: it serves inboundCores/inboundWork = 200 req/s, and beyond 4 requests
// in flight each one slows down in proportion.
const (
	inboundCores    = 4
	inboundWork     = 20 * time.Millisecond
	inboundCapacity = float64(inboundCores) / 0.020 // req/s
	inboundSwarm    = 2 * inboundCapacity           // req/s offered
	inboundMaxLimit = 40                            // ConcurrencyConfig.MaxLimit
	inboundTimeout  = 2 * time.Second               // each client's deadline
)

// request is one finished client request.
type request struct {
	end     time.Duration
	latency time.Duration
	status  int // 0: no response (timeout, error)
}

type inboundRun struct {
	length time.Duration

	mu       sync.Mutex
	requests []request
	peak     int // highest limit seen
	final    agilelimiter.Stats
}

// runInbound runs the swarm for length and prints a live row every second.
func runInbound(length time.Duration, w io.Writer) *inboundRun {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: inboundMaxLimit, SLOTarget: slo})
	lim.Start()
	defer lim.Stop()

	cores := &sim.Cores{N: inboundCores, Work: inboundWork}
	service := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cores.Do(r.Context()) == nil {
			io.WriteString(w, "ok\n")
		}
	})
	url, closeServer := sim.Serve(httpserver.Wrap(service, lim))
	defer closeServer()
	client := load.Client(inboundTimeout)
	defer client.CloseIdleConnections()

	r := &inboundRun{length: length}
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	begin := time.Now()
	clients := load.Arrivals(ctx, inboundSwarm, func() { r.requestOnce(client, url, begin) })

	var win inboundStretch // the last second, for the live row
	live := table.New(w,
		table.Value("limit", "requests", func() float64 { return float64(lim.Limit()) }),
		table.Value("in flight", "requests", func() float64 { return float64(lim.InFlight()) }),
		table.Value("served", "req/s", func() float64 { return float64(win.served) }),
		table.Value("429", "req/s", func() float64 { return float64(win.refused) }),
		table.Millis("p50", func() time.Duration { return win.p50 }),
		table.Millis("p99", func() time.Duration { return win.p99 }),
	)
	drive(ctx, begin, func(time.Duration) {
		r.mu.Lock()
		r.peak = max(r.peak, lim.Limit())
		r.mu.Unlock()
	}, func(at time.Duration) {
		win = r.window(at-time.Second, at)
		live.Row()
	})
	clients()
	r.final = lim.Stats()
	return r
}

func (r *inboundRun) requestOnce(client *http.Client, url string, begin time.Time) {
	start := time.Now()
	status, _ := load.Get(client, url)
	q := request{status: status, latency: time.Since(start), end: time.Since(begin)}
	r.mu.Lock()
	r.requests = append(r.requests, q)
	r.mu.Unlock()
}

// inboundStretch summarizes the requests that ended in [from, to).
type inboundStretch struct {
	served, refused, other int
	p50, p99               time.Duration // latency of the served requests
	p99Refused             time.Duration // how fast a refusal came back
}

func (r *inboundRun) window(from, to time.Duration) inboundStretch {
	var s inboundStretch
	var ok, no []time.Duration
	r.mu.Lock()
	for _, q := range r.requests {
		if q.end < from || q.end >= to {
			continue
		}
		switch q.status {
		case http.StatusOK:
			s.served++
			ok = append(ok, q.latency)
		case agilelimiter.RefusalStatus:
			s.refused++
			no = append(no, q.latency)
		default:
			s.other++
		}
	}
	r.mu.Unlock()
	s.p50, s.p99 = table.Quantile(ok, 0.5), table.Quantile(ok, 0.99)
	s.p99Refused = table.Quantile(no, 0.99)
	return s
}

func (r *inboundRun) summary(w io.Writer) {
	s := r.window(0, r.length)
	total := s.served + s.refused + s.other
	secs := r.length.Seconds()
	fmt.Fprintf(w, "\ninbound: %d requests in %.0f s (%.0f req/s offered to a service that serves %.0f req/s) = served + 429 + other\n",
		total, secs, float64(total)/secs, inboundCapacity)
	fmt.Fprintf(w, "  served  %6d requests  %4.0f req/s  latency p50 %s ms, p99 %s ms\n",
		s.served, float64(s.served)/secs, table.Ms(s.p50), table.Ms(s.p99))
	fmt.Fprintf(w, "  429     %6d requests  %4.0f req/s  answered within %s ms (p99), with Retry-After\n",
		s.refused, float64(s.refused)/secs, table.Ms(s.p99Refused))
	fmt.Fprintf(w, "  other   %6d requests              timeouts or errors\n", s.other)
	fmt.Fprintf(w, "  limit %.0f requests now, at most %d during the run (ceiling %d); %d in flight at the last tick's peak\n",
		r.final.Limit, r.peak, inboundMaxLimit, r.final.PeakInFlight)
}

// check reports what would show the inbound side broken.
func (r *inboundRun) check() []string {
	s := r.window(0, r.length)
	var bad []string
	if s.refused == 0 {
		bad = append(bad, "inbound: the swarm was never refused with 429")
	}
	if float64(s.served) < 0.3*inboundCapacity*r.length.Seconds() {
		bad = append(bad, fmt.Sprintf("inbound: only %d requests served in %s", s.served, r.length))
	}
	if s.p99 >= inboundTimeout/2 {
		bad = append(bad, fmt.Sprintf("inbound: the served requests' p99 is %s: the limiter did not bound the queue", s.p99))
	}
	return bad
}
