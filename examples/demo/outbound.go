package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// The outbound side: an open-loop stream of callers, each with a deadline,
// calls the dependency through an http.Client whose transport the Limiter
// wraps. Callers queue in the limiter; a caller whose slot would leave the
// call less than a typical round trip before its deadline is refused at once
// by the limiter, without waiting and without reaching the dependency.

// Settings of the outbound run. The ceiling is twice the dependency's normal
// capacity: a static limit you would promise it. The SLO is five times its
// idle latency.
const (
	maxRate       = 2 * normalCapacity // req/s, Config.MaxRate
	minRate       = 5                  // req/s, the probe rate during an outage
	slo           = 150 * time.Millisecond
	callerTimeout = time.Second           // each caller's deadline, wait included
	idleLatency   = 20 * time.Millisecond // the dependency's latency without a queue
)

type outcome uint8

const (
	answered outcome = iota // the dependency answered 200
	shed                    // the dependency answered 503: full or down
	timedOut                // the caller's deadline expired while the call was in flight
	refused                 // never sent: no slot early enough before the deadline
	failed                  // any other error
)

// call is one finished caller.
type call struct {
	end     time.Duration // since the start of the run
	rtt     time.Duration // the round trip to the dependency; 0 if never sent
	outcome outcome
}

// sample is the limiter's state at one instant.
type sample struct {
	at       time.Duration
	capacity float64 // what the dependency could serve then
}

// outboundRun is everything one run measured.
type outboundRun struct {
	sc     scenario
	length time.Duration
	demand float64

	mu      sync.Mutex
	calls   []call
	samples []sample
	final   agilelimiter.Stats
}

// rttKey carries a *atomic.Int64 through the request's context, so that the
// transport inside the limiter can report the bare round trip to the caller.
type rttKey struct{}

// timing is the innermost transport: it measures the round trip alone, the
// limiter's wait excluded, for the demo's own figures.
type timing struct{ next http.RoundTripper }

func (t timing) RoundTrip(r *http.Request) (*http.Response, error) {
	ctx := r.Context()
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	if p, ok := ctx.Value(rttKey{}).(*atomic.Int64); ok {
		p.Store(int64(max(time.Since(start), 1)))
	}
	return resp, err
}

// runOutbound drives the scenario for length against a fresh dependency and
// returns what it measured. It prints a live line every second.
func runOutbound(sc scenario, length time.Duration, demand float64, w io.Writer) (*outboundRun, error) {
	dep := &dependency{base: idleLatency, maxQueue: 500 * time.Millisecond, capacity: sc.phases[0].capacity}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: dep}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String() + "/"

	lim := agilelimiter.New(agilelimiter.Config{MinRate: minRate, MaxRate: maxRate, SLOTarget: slo})
	lim.Start()
	defer lim.Stop()

	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConnsPerHost = 512 // keep connections: dialing is not what we measure
	client := &http.Client{Transport: httpclient.Wrap(timing{base}, lim)}
	defer base.CloseIdleConnections()

	r := &outboundRun{sc: sc, length: length, demand: demand}
	begin := time.Now()
	var callers sync.WaitGroup

	// The callers: Poisson arrivals at the demand rate.
	arrived := arrivals(begin, length, demand, &callers, func() { r.callOnce(client, url, begin) })

	// The schedule, the samples and the live line.
	fmt.Fprintf(w, "%7s %8s %8s %7s %7s %7s %9s %7s %8s\n",
		"time", "capacity", "sent", "p50", "p99", "SLO", "refused", "503s", "decision")
	drive(arrived, begin, func(at time.Duration) {
		c := sc.capacityAt(at, length)
		dep.setCapacity(c)
		r.mu.Lock()
		r.samples = append(r.samples, sample{at: at, capacity: c})
		r.mu.Unlock()
	}, func(at time.Duration) {
		win := r.window(at-time.Second, at)
		fmt.Fprintf(w, "%6.1fs %6.0f/s %6.0f/s %7s %7s %7s %7.0f/s %5.0f/s %8s\n",
			at.Seconds(), sc.capacityAt(at, length), win.sentPerSec(), ms(win.p50), ms(win.p99), ms(slo),
			float64(win.n[refused])/win.seconds(), float64(win.n[shed])/win.seconds(), lim.Stats().Decision)
	})
	r.final = lim.Stats() // as the run ends, before the last callers drain
	callers.Wait()
	return r, nil
}

// callOnce is one caller: a GET with a deadline, through the limiter.
func (r *outboundRun) callOnce(client *http.Client, url string, begin time.Time) {
	var rtt atomic.Int64
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), rttKey{}, &rtt), callerTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := client.Do(req)
	c := call{outcome: failed}
	switch {
	case err == nil:
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK:
			c.outcome = answered
		case http.StatusServiceUnavailable:
			c.outcome = shed
		}
	case errors.Is(err, agilelimiter.ErrDeadline) || rtt.Load() == 0:
		// Refused at once, or the deadline passed while queued after the
		// rate came down: either way the dependency never saw it.
		c.outcome = refused
	case errors.Is(err, context.DeadlineExceeded):
		c.outcome = timedOut
	}
	c.rtt = time.Duration(rtt.Load())
	c.end = time.Since(begin)
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
}

// stretch summarizes the calls that ended in [from, to).
type stretch struct {
	from, to time.Duration
	n        [failed + 1]int
	p50, p99 time.Duration // round trips of calls answered 200 or timed out
	inSLO    int           // calls answered 200 within the SLO
	capacity float64       // mean capacity
}

func (s stretch) seconds() float64 { return (s.to - s.from).Seconds() }

// sent counts the calls that reached the dependency.
func (s stretch) sent() int { return s.n[answered] + s.n[shed] + s.n[timedOut] + s.n[failed] }

func (s stretch) sentPerSec() float64 { return float64(s.sent()) / s.seconds() }

func (r *outboundRun) window(from, to time.Duration) stretch {
	s := stretch{from: from, to: to}
	var rtts []time.Duration
	r.mu.Lock()
	for _, c := range r.calls {
		if c.end < from || c.end >= to {
			continue
		}
		s.n[c.outcome]++
		if c.outcome == answered || c.outcome == timedOut {
			rtts = append(rtts, c.rtt)
		}
		if c.outcome == answered && c.rtt <= slo {
			s.inSLO++
		}
	}
	var k int
	for _, x := range r.samples {
		if x.at >= from && x.at < to {
			s.capacity += x.capacity
			k++
		}
	}
	r.mu.Unlock()
	if k > 0 {
		s.capacity /= float64(k)
	}
	s.p50, s.p99 = quantile(rtts, 0.5), quantile(rtts, 0.99)
	return s
}

// settledRate is what the limiter let out per second over phase i from 2 s
// into it, once the controller has had time to react to its capacity.
func (r *outboundRun) settledRate(i int) float64 {
	from, to := r.sc.bounds(i, r.length)
	return r.window(from+2*time.Second, to).sentPerSec()
}

// inSLO is the share of the calls sent over the whole run answered inside
// the SLO.
func (r *outboundRun) inSLO() float64 {
	s := r.window(0, r.length)
	return float64(s.inSLO) / float64(max(s.sent(), 1))
}

// quantile returns the q-quantile of d (which it sorts), or 0 if d is empty.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}

// ms formats a latency for the tables; 0 means no data.
func ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	}
	return fmt.Sprintf("%dms", d.Milliseconds())
}

// summary prints one row per phase and one for the whole run, then the
// limiter's own counters.
func (r *outboundRun) summary(w io.Writer) {
	fmt.Fprintf(w, "\n%-10s %-12s %8s %8s %7s %7s %7s %8s %6s\n",
		"phase", "time", "capacity", "sent", "p50", "p99", "in SLO", "refused", "503s")
	row := func(name string, s stretch) {
		inSLO := "-"
		if n := s.sent(); n > 0 {
			inSLO = fmt.Sprintf("%.0f%%", 100*float64(s.inSLO)/float64(n))
		}
		fmt.Fprintf(w, "%-10s %5.1f-%5.1fs %6.0f/s %6.0f/s %7s %7s %7s %8d %6d\n",
			name, s.from.Seconds(), s.to.Seconds(), s.capacity, s.sentPerSec(),
			ms(s.p50), ms(s.p99), inSLO, s.n[refused], s.n[shed])
	}
	for i, p := range r.sc.phases {
		from, to := r.sc.bounds(i, r.length)
		row(p.name, r.window(from, to))
	}
	row("all", r.window(0, r.length))
	st := r.final
	fmt.Fprintf(w, "limiter: admitted %d, refused for deadline %d, cancelled while waiting %d, waiting now %d, wait p99 %s, last tick: %s\n",
		st.Admitted, st.RejectedDeadline, st.Canceled, st.Waiting, ms(st.WaitP99), st.Decision)
	fmt.Fprintf(w, "  in SLO = answered 200 within %s, of the calls sent; refused = never sent: no slot left the call a round trip (%s now) before the caller's %s deadline\n",
		slo, ms(st.P99), callerTimeout)
}

// checkCeiling reports a failure if more than MaxRate calls reached the
// dependency in any one-second window.
func (r *outboundRun) checkCeiling() []string {
	for t := time.Second; t <= r.length; t += 500 * time.Millisecond {
		if s := r.window(t-time.Second, t); float64(s.sent()) > maxRate*1.05+2 {
			return []string{fmt.Sprintf("%d calls reached the dependency in the second before %.1fs, above the ceiling of %d req/s", s.sent(), t.Seconds(), maxRate)}
		}
	}
	return nil
}
