package sim

import (
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// Status is how one simulated call ended, as its client saw it.
type Status uint8

const (
	// Answered means the response arrived before the client's timeout.
	Answered Status = iota
	// TimedOut means the client gave up at Scenario.Timeout. The request stays
	// in the dependency's queue and is served anyway: its work is wasted.
	TimedOut
	// Refused means the dependency refused the call at once (a closed port, an
	// instant 503): it used no capacity.
	Refused
	// Hit means a cache in front of the dependency answered (Scenario.HitRatio)
	// in Scenario.HitLatency, without reaching it.
	Hit
)

// refuseRTT is how long a refusal takes to come back: a round trip to a host
// that answers with a reset.
const refuseRTT = 500 * time.Microsecond

// Dependency is the simulated downstream service: one FIFO server whose speed
// is Scenario.Capacity, behind a network whose round trip is Scenario.Base.
// It is fed only by the calls actually made (a request that was never sent
// costs it nothing), and a request whose client timed out is still served in
// its turn: the queue does not know the client left.
//
// The queue is the core's agiletest.FIFO: the instant a request leaves it is
// known when it arrives, so a call is one computation under a mutex and one
// sleep on the virtual clock. Capacity is read at the instant service starts.
//
// A Dependency is safe for concurrent use. Use it inside a synctest bubble:
// it reads time.Now and sleeps.
type Dependency struct {
	sc    *Scenario
	start time.Time

	mu     sync.Mutex
	rng    *rand.Rand
	fifo   *agiletest.FIFO
	busy   time.Duration // server time spent, all requests
	wasted time.Duration // server time spent on requests whose client had left
}

// NewDependency returns the dependency of sc, with its clock starting now.
func NewDependency(sc *Scenario) *Dependency {
	return &Dependency{sc: sc, start: time.Now(), rng: rand.New(rand.NewPCG(sc.Seed, 0x5eed)), fifo: agiletest.NewFIFO(1)}
}

// jitter returns v scaled by a uniform factor in [1−j, 1+j].
func (d *Dependency) jitter(v float64) float64 {
	j := d.sc.Jitter
	if j == 0 {
		return v
	}
	return v * (1 - j + 2*j*d.rng.Float64())
}

// Call sends one request and blocks, on the virtual clock, until its answer
// arrives, the client's timeout expires, or the refusal comes back. It returns
// how the call ended and how long the client waited.
func (d *Dependency) Call() (Status, time.Duration) {
	now := time.Now()
	el := now.Sub(d.start)
	sc := d.sc
	if sc.HitRatio > 0 {
		d.mu.Lock()
		hit := d.rng.Float64() < sc.HitRatio
		d.mu.Unlock()
		if hit {
			time.Sleep(sc.HitLatency)
			return Hit, sc.HitLatency
		}
	}
	if sc.Refuse != nil && sc.Refuse(el) {
		time.Sleep(refuseRTT)
		return Refused, refuseRTT
	}

	d.mu.Lock()
	base := time.Duration(d.jitter(float64(sc.Base(el))))
	if sc.TailProb > 0 && d.rng.Float64() < sc.TailProb {
		base = time.Duration(float64(base) * sc.TailFactor)
	}
	// The request reaches the server at once and queues in send order; the
	// whole round trip outside the server is paid on the way back, where it
	// uses no capacity. (Splitting it around the queue would let one slow path
	// hold up requests sent after it in a FIFO computed in send order.)
	var service time.Duration
	_, end := d.fifo.Admit(now, func(begin time.Time) time.Duration {
		capacity := sc.Capacity(begin.Sub(d.start))
		service = time.Duration(d.jitter(float64(time.Second) / math.Max(capacity, 1e-3)))
		return service
	})
	total := end.Add(base).Sub(now)
	d.busy += service
	late := sc.Timeout > 0 && total > sc.Timeout
	if late {
		d.wasted += service
	}
	d.mu.Unlock()

	if late {
		time.Sleep(sc.Timeout)
		return TimedOut, sc.Timeout
	}
	time.Sleep(total)
	return Answered, total
}

// Work returns the server time spent so far, and the part of it spent on
// requests whose client had already given up.
func (d *Dependency) Work() (busy, wasted time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy, d.wasted
}
