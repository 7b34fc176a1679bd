package eval

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// status is how one call ended.
type status uint8

const (
	// limited: the arm did not send it (refused, or the caller's deadline
	// left no slot).
	limited status = iota
	// answered: the answer came back (before the deadline, if any).
	answered
	// timedOut: the caller's deadline expired first; the request stays
	// queued and is served anyway, so its work is wasted.
	timedOut
	// refused: the resource refused it at once (an outage); no work.
	refused
	// unfinished: the caller was still waiting for a slot when the run
	// ended. It counts nowhere: neither sent nor refused.
	unfinished
)

// refuseRTT is how long a refusal takes to come back.
const refuseRTT = 500 * time.Microsecond

// maxSize caps one Pareto draw at this many mean service times: α = 1.5 has
// no variance, and one request worth hours of service would end the run.
const maxSize = 1000

// request is one call's random draws, made at its arrival so every arm sees
// the same requests in the same order.
type request struct {
	cost  float64 // the route's cost relative to the mix's mean
	size  float64 // the service law's draw, mean 1
	slowU float64 // uniform: slow during a burst if below the burst's share
	netJ  float64 // the round trip's jitter factor
}

// draw makes one request's draws from rng.
func (sc *Scenario) draw(rng *rand.Rand) request {
	rq := request{cost: sc.Routes[len(sc.Routes)-1].Cost, size: 1, netJ: 1}
	u := rng.Float64()
	for _, r := range sc.Routes {
		if u < r.Share {
			rq.cost = r.Cost
			break
		}
		u -= r.Share
	}
	switch sc.Law {
	case FIFOExp:
		rq.size = rng.ExpFloat64()
	case FIFOLogNormal:
		rq.size = math.Exp(sc.Sigma*rng.NormFloat64() - sc.Sigma*sc.Sigma/2)
	case FIFOPareto:
		xm := (sc.Alpha - 1) / sc.Alpha
		rq.size = xm / math.Pow(1-rng.Float64(), 1/sc.Alpha)
	}
	rq.size = min(rq.size, maxSize)
	rq.slowU = rng.Float64()
	if sc.NetJitter > 0 {
		rq.netJ = 1 + sc.NetJitter*(2*rng.Float64()-1)
	}
	return rq
}

// dependency is the simulated resource of a scenario, fed only by the calls
// actually sent. FIFO laws queue on the core's agiletest.FIFO: a request
// starts at max(send, earliest free server) in send order, so when it ends
// is known when it is sent, and a call is one computation under a mutex and
// one sleep on the virtual clock. PSKnee is a processor-sharing server (see
// sharing.go): when a request leaves depends on every arrival and departure
// until then, so its caller waits until the server wakes it. The round trip
// outside capacity is paid after service and uses none.
//
// Use it inside a synctest bubble: it reads time.Now, and its callers sleep
// on the run's clock.
type dependency struct {
	sc    *Scenario
	start time.Time

	mu   sync.Mutex
	fifo *agiletest.FIFO // FIFO laws
	ps   sharing         // PSKnee
}

func newDependency(sc *Scenario) *dependency {
	d := &dependency{sc: sc, start: time.Now(), fifo: agiletest.NewFIFO(sc.Servers)}
	d.ps.last = d.start
	return d
}

// call sends rq now and blocks p until its answer, the refusal, or deadline
// (when not zero), whichever comes first. It returns how the call ended, how
// long the caller waited, and the server time the request costs (spent even
// if the caller leaves).
func (d *dependency) call(p *proc, rq request, deadline time.Time) (status, time.Duration, time.Duration) {
	now := time.Now()
	t := now.Sub(d.start)
	sc := d.sc
	if sc.Refuses(t) {
		p.sleep(refuseRTT)
		return refused, refuseRTT, 0
	}
	work := rq.cost * rq.size
	if share, cost := sc.slowAt(t); rq.slowU < share {
		work *= cost
	}
	net := time.Duration(float64(sc.NetAt(t)) * rq.netJ)
	if sc.Law == PSKnee {
		// work in seconds of service alone at the initial capacity; what it
		// costs is counted at the capacity of its arrival, as FIFO's is.
		base := float64(sc.Knee) / sc.Capacity0
		spent := seconds(base * work / math.Max(sc.rawFactor(t), 1e-9))
		st, waited := d.share(p, base*work, net, deadline)
		return st, waited, spent
	}

	var spent time.Duration
	d.mu.Lock()
	_, done := d.fifo.Admit(now, func(begin time.Time) time.Duration {
		bt := begin.Sub(d.start)
		spent = seconds(work * float64(sc.Servers) / (sc.Capacity0 * math.Max(sc.rawFactor(bt), 1e-9)))
		return spent
	})
	d.mu.Unlock()

	total := done.Add(net).Sub(now)
	if !deadline.IsZero() && now.Add(total).After(deadline) {
		wait := max(deadline.Sub(now), 0)
		p.sleep(wait)
		return timedOut, wait, spent
	}
	p.sleep(total)
	return answered, total, spent
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
