package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
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

// service emulates processor sharing: a request's work stretches by the
// number in flight over the number of cores.
type service struct{ busy atomic.Int64 }

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := s.busy.Add(1)
	defer s.busy.Add(-1)
	d := time.Duration(float64(inboundWork) * max(1, float64(n)/inboundCores))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		w.Write([]byte("ok\n"))
	case <-r.Context().Done():
	}
}

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

// runInbound runs the swarm for length and prints a live line every second.
func runInbound(length time.Duration, w io.Writer) (*inboundRun, error) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: inboundMaxLimit, SLOTarget: slo})
	lim.Start()
	defer lim.Stop()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: httpserver.Wrap(&service{}, lim)}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 1024
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	r := &inboundRun{length: length}
	begin := time.Now()
	var clients sync.WaitGroup
	arrived := arrivals(begin, length, inboundSwarm, &clients, func() { r.requestOnce(client, url, begin) })

	fmt.Fprintf(w, "%7s %6s %9s %8s %8s %7s %7s\n", "time", "limit", "in flight", "served", "429s", "p50", "p99")
	drive(arrived, begin, func(time.Duration) {
		r.mu.Lock()
		r.peak = max(r.peak, lim.Limit())
		r.mu.Unlock()
	}, func(at time.Duration) {
		s := r.window(at-time.Second, at)
		fmt.Fprintf(w, "%6.1fs %6d %9d %6.0f/s %6.0f/s %7s %7s\n",
			at.Seconds(), lim.Limit(), lim.InFlight(), float64(s.served), float64(s.refused), ms(s.p50), ms(s.p99))
	})
	clients.Wait()
	r.final = lim.Stats()
	return r, nil
}

func (r *inboundRun) requestOnce(client *http.Client, url string, begin time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), inboundTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	start := time.Now()
	var q request
	if resp, err := client.Do(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		q.status = resp.StatusCode
	}
	q.latency = time.Since(start)
	q.end = time.Since(begin)
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
	s.p50, s.p99 = quantile(ok, 0.5), quantile(ok, 0.99)
	s.p99Refused = quantile(no, 0.99)
	return s
}

func (r *inboundRun) summary(w io.Writer) {
	s := r.window(0, r.length)
	total := s.served + s.refused + s.other
	secs := r.length.Seconds()
	fmt.Fprintf(w, "\ninbound: %d requests in %.0fs (%.0f req/s offered to a service that serves %.0f)\n",
		total, secs, float64(total)/secs, inboundCapacity)
	fmt.Fprintf(w, "  served  %6d  %4.0f/s  p50 %s  p99 %s\n", s.served, float64(s.served)/secs, ms(s.p50), ms(s.p99))
	fmt.Fprintf(w, "  429     %6d  %4.0f/s  answered within %s (p99), with Retry-After\n", s.refused, float64(s.refused)/secs, ms(s.p99Refused))
	if s.other > 0 {
		fmt.Fprintf(w, "  other   %6d  (timeouts or errors)\n", s.other)
	}
	fmt.Fprintf(w, "  limit %0.f now, at most %d during the run (ceiling %d); %d in flight at the last tick's peak\n",
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
