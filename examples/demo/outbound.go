package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/sim"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// The outbound side: an open-loop stream of callers, each with a deadline,
// calls the dependency through an http.Client whose transport the Limiter
// wraps. Callers queue in the limiter; a caller whose slot would come less
// than a round trip (the limiter's p99 of its last round, and at least the
// SLO) before its deadline is refused at once, without waiting and without
// reaching the dependency.

// Settings of the outbound run. The ceiling is twice the dependency's normal
// capacity: a static limit you would promise it. The SLO is 7.5 times its
// idle latency.
const (
	maxRate       = 2 * normalCapacity // req/s, Config.MaxRate
	minRate       = 5                  // req/s, the probe rate during an outage
	slo           = 150 * time.Millisecond
	callerTimeout = time.Second            // each caller's deadline, wait included
	idleLatency   = 20 * time.Millisecond  // the dependency's latency without a queue
	maxQueue      = 500 * time.Millisecond // the dependency answers 503 past this wait
)

// outcome is how one caller's call ended; each call has exactly one.
type outcome uint8

const (
	answered outcome = iota // the dependency answered 200 (in time or late: see stretch)
	shed                    // the dependency answered 503: its queue full, or down
	timedOut                // the caller's deadline passed while the dependency had the call
	refused                 // never sent: ErrDeadline, or the deadline passed while waiting for a slot
	failed                  // any other error or status
	outcomes
)

// call is one finished caller.
type call struct {
	end     time.Duration // since the start of the run
	rtt     time.Duration // the round trip to the dependency; 0 if never sent
	outcome outcome
}

// sample is the dependency's capacity at one instant.
type sample struct {
	at       time.Duration
	capacity float64 // req/s
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
// returns what it measured. It prints a live row every second.
func runOutbound(sc scenario, length time.Duration, demand float64, w io.Writer) *outboundRun {
	dep := agiletest.NewQueue(sc.phases[0].capacity, idleLatency, maxQueue)
	url, closeDep := sim.Serve(dep)
	defer closeDep()

	lim := agilelimiter.New(agilelimiter.Config{MinRate: minRate, MaxRate: maxRate, SLOTarget: slo})
	lim.Start()
	defer lim.Stop()
	base := load.Transport() // keeps its connections: dialing is not what we measure
	defer base.CloseIdleConnections()
	client := &http.Client{Transport: httpclient.Wrap(timing{base}, lim)}

	r := &outboundRun{sc: sc, length: length, demand: demand}
	ctx, cancel := context.WithTimeout(context.Background(), length)
	defer cancel()
	begin := time.Now()
	callers := load.Arrivals(ctx, demand, func() { r.callOnce(client, url, begin) })

	var win stretch // the last second, for the live row
	perSec := func(o outcome) func() float64 {
		return func() float64 { return float64(win.n[o]) / win.seconds() }
	}
	live := table.New(w,
		table.Value("capacity", "req/s", dep.Capacity),
		table.Value("sent", "req/s", func() float64 { return win.sentPerSec() }),
		table.Value("refused", "req/s", perSec(refused)),
		table.Value("503", "req/s", perSec(shed)),
		table.Value("timed out", "req/s", perSec(timedOut)),
		table.Millis("p50", func() time.Duration { return win.p50 }),
		table.Millis("p99", func() time.Duration { return win.p99 }),
		table.Text("decision", func() string { return lim.Stats().Decision }),
	)
	drive(ctx, begin, func(at time.Duration) {
		c := sc.capacityAt(at, length)
		dep.SetCapacity(c)
		r.mu.Lock()
		r.samples = append(r.samples, sample{at: at, capacity: c})
		r.mu.Unlock()
	}, func(at time.Duration) {
		win = r.window(at-time.Second, at)
		live.Row()
	})
	r.final = lim.Stats() // as the run ends, before the last callers drain
	callers()
	return r
}

// drive calls sample every 100ms and line every second, with the time since
// begin, until ctx ends.
func drive(ctx context.Context, begin time.Time, sample, line func(at time.Duration)) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	nextLine := time.Second
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			at := now.Sub(begin)
			sample(at)
			if at >= nextLine {
				nextLine += time.Second
				line(at)
			}
		}
	}
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
		// Refused at once, or the deadline passed while it waited for a
		// slot: either way the dependency never saw it.
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
	n        [outcomes]int // calls by outcome
	inSLO    int           // of n[answered], those answered within the SLO
	p50, p99 time.Duration // round trips of the calls answered or timed out
	capacity float64       // mean capacity, req/s
}

func (s stretch) seconds() float64 { return (s.to - s.from).Seconds() }

// calls counts every call: refused + sent.
func (s stretch) calls() int { return s.n[refused] + s.sent() }

// sent counts the calls that reached the dependency: inSLO + late + shed +
// timedOut + failed.
func (s stretch) sent() int { return s.n[answered] + s.n[shed] + s.n[timedOut] + s.n[failed] }

// late counts the calls answered 200 after the SLO.
func (s stretch) late() int { return s.n[answered] - s.inSLO }

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
	s.p50, s.p99 = table.Quantile(rtts, 0.5), table.Quantile(rtts, 0.99)
	return s
}

// judged is the stretch of phase i the checks judge: from 2 s into it, once
// the controller has had time to react to its capacity.
func (r *outboundRun) judged(i int) stretch {
	from, to := r.sc.bounds(i, r.length)
	return r.window(from+2*time.Second, to)
}

// inSLO is the share of the calls sent over the whole run answered inside
// the SLO.
func (r *outboundRun) inSLO() float64 {
	s := r.window(0, r.length)
	return float64(s.inSLO) / float64(max(s.sent(), 1))
}

// share formats part/whole as a percentage, "-" for an empty whole.
func share(part, whole int) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*float64(part)/float64(whole))
}

// summary prints two tables, one row per phase and one for the whole run:
// the rates (what the checks judge) and every call by outcome; then the
// limiter's own counters.
func (r *outboundRun) summary(w io.Writer) {
	type row struct {
		name string
		s, j stretch // the phase, and the part of it the checks judge
	}
	var rows []row
	for i, p := range r.sc.phases {
		from, to := r.sc.bounds(i, r.length)
		rows = append(rows, row{p.name, r.window(from, to), r.judged(i)})
	}
	all := r.window(0, r.length)
	rows = append(rows, row{"all", all, all})

	fmt.Fprintf(w, "\n%-10s %9s %8s %8s %8s %7s %7s\n", "phase", "time", "capacity", "sent", "settled", "p50", "p99")
	fmt.Fprintf(w, "%-10s %9s %8s %8s %8s %7s %7s\n", "", "(s)", "(req/s)", "(req/s)", "(req/s)", "(ms)", "(ms)")
	for _, x := range rows {
		judged := "-"
		if x.name != "all" && x.j.seconds() > 0 {
			judged = fmt.Sprintf("%.0f", x.j.sentPerSec())
		}
		fmt.Fprintf(w, "%-10s %4.1f-%4.1f %8.0f %8.0f %8s %7s %7s\n", x.name, x.s.from.Seconds(), x.s.to.Seconds(),
			x.s.capacity, x.s.sentPerSec(), judged, table.Ms(x.s.p50), table.Ms(x.s.p99))
	}
	fmt.Fprintf(w, "  settled: sent from 2 s into the phase, which the checks hold to 0.8–1.2 of the capacity;\n")
	fmt.Fprintf(w, "  p50, p99: round trips of the calls answered or timed out, the limiter's wait excluded\n")

	fmt.Fprintf(w, "\ncalls by outcome: calls = refused + sent; sent = in SLO + late + 503 + timed out + error\n")
	fmt.Fprintf(w, "%-10s %6s %7s %6s %6s %5s %5s %9s %5s %9s %9s\n",
		"phase", "calls", "refused", "sent", "in SLO", "late", "503", "timed out", "error", "in SLO", "in SLO")
	fmt.Fprintf(w, "%-10s %6s %7s %6s %6s %5s %5s %9s %5s %9s %9s\n",
		"", "", "", "", "", "", "", "", "", "(% sent)", "(% calls)")
	for _, x := range rows {
		s := x.s
		fmt.Fprintf(w, "%-10s %6d %7d %6d %6d %5d %5d %9d %5d %9s %9s\n", x.name, s.calls(), s.n[refused], s.sent(),
			s.inSLO, s.late(), s.n[shed], s.n[timedOut], s.n[failed], share(s.inSLO, s.sent()), share(s.inSLO, s.calls()))
	}
	st := r.final
	fmt.Fprintf(w, "  in SLO: answered 200 within %s; late: answered 200 after it; refused: never sent, because\n", slo)
	fmt.Fprintf(w, "  the limiter refused it at once (ErrDeadline: its slot would come less than a round trip, the\n")
	fmt.Fprintf(w, "  limiter's p99 of its last round and at least the %s SLO, before the caller's %s deadline;\n",
		slo, callerTimeout)
	fmt.Fprintf(w, "  that p99 was %s ms as the run ended), or the deadline passed while it waited for a slot;\n", table.Ms(st.P99))
	fmt.Fprintf(w, "  timed out: the deadline passed while the dependency had the call (after its wait for a slot:\n")
	fmt.Fprintf(w, "  its round trip may be short)\n")
	fmt.Fprintf(w, "limiter, as the run ended: admitted %d, refused for deadline %d, deadline passed while waiting %d, waiting %d, wait p99 %s ms, last tick: %s\n",
		st.Admitted, st.RejectedDeadline, st.Canceled, st.Waiting, table.Ms(st.WaitP99), st.Decision)
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
