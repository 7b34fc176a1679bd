package eval

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// Admitter is what an inbound arm puts in front of the service: it admits a
// request or refuses it at once.
type Admitter interface {
	// TryTake reports whether the request may run, and if so returns the
	// permit to end it with.
	TryTake() (Permit, bool)
	// Stop releases whatever the admitter runs.
	Stop()
}

// Permit is one admitted request.
type Permit interface {
	// Done reports how the request ended and how long it ran, and releases
	// its slot.
	Done(o agilelimiter.Outcome, d time.Duration)
}

// InboundArm is one inbound contender: a name and a way to build its
// admitter for a scenario. New runs inside the run's bubble, at its start.
type InboundArm struct {
	Name string                      // the arm's name in tables
	New  func(sc *Scenario) Admitter // builds the admitter for sc
}

// AgileInbound returns an arm for the project's ConcurrencyLimiter in its
// default configuration with an SLO: only MaxLimit and SLOTarget are set, so
// the arm needs no change when the other fields do.
func AgileInbound() InboundArm {
	return InboundArm{Name: "agile", New: func(sc *Scenario) Admitter { return newAgile(sc, 0) }}
}

// newAgile starts the ConcurrencyLimiter as AgileInbound configures it, at
// the initial limit given (0: the limiter's own start, half MaxLimit).
func newAgile(sc *Scenario, initial int) agileAdmitter {
	l := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: sc.MaxLimit, SLOTarget: sc.SLO, InitialLimit: initial})
	l.Start()
	return agileAdmitter{l}
}

type agileAdmitter struct {
	l *agilelimiter.ConcurrencyLimiter
}

func (a agileAdmitter) TryTake() (Permit, bool) { return a, a.l.TryTake() }
func (a agileAdmitter) Stop()                   { a.l.Stop() }

// Done records the outcome, then releases the slot.
func (a agileAdmitter) Done(o agilelimiter.Outcome, d time.Duration) {
	a.l.Record(o, d)
	a.l.Release()
}

// failsafeInitial is the initial limit given to failsafe-go, its default.
const failsafeInitial = 20

// Failsafe returns an arm for failsafe-go's adaptivelimiter, limits [1,
// MaxLimit], initial 20 (or MaxLimit if lower), as its README builds it.
// Every admitted request is ended with permit.Record(), refusals of the
// service's own backend included: failsafe-go has no verdict for them.
func Failsafe() InboundArm {
	return InboundArm{Name: failsafeArm, New: func(sc *Scenario) Admitter {
		return failsafeAdmitter{newFailsafe(sc)}
	}}
}

// newFailsafe builds failsafe-go's limiter for sc as its README does:
// limits [1, MaxLimit], initial failsafeInitial (or MaxLimit if lower).
func newFailsafe(sc *Scenario) adaptivelimiter.AdaptiveLimiter[any] {
	ceil := uint(sc.MaxLimit)
	return adaptivelimiter.NewBuilder[any]().WithLimits(1, ceil, min(failsafeInitial, ceil)).Build()
}

type failsafeAdmitter struct {
	l adaptivelimiter.AdaptiveLimiter[any]
}

func (a failsafeAdmitter) TryTake() (Permit, bool) {
	p, ok := a.l.TryAcquirePermit()
	if !ok {
		return nil, false
	}
	return failsafePermit{p}, true
}
func (a failsafeAdmitter) Stop() {}

type failsafePermit struct{ p adaptivelimiter.Permit }

func (p failsafePermit) Done(agilelimiter.Outcome, time.Duration) { p.p.Record() }

// Semaphore returns an arm that admits at most n requests at once: a fixed
// limit, the oracle's building block.
func Semaphore(n int) InboundArm {
	return InboundArm{Name: "semaphore-" + strconv.Itoa(n), New: func(*Scenario) Admitter {
		return &semaphore{n: int64(n)}
	}}
}

type semaphore struct {
	n    int64
	held atomic.Int64
}

func (s *semaphore) TryTake() (Permit, bool) {
	if s.held.Add(1) > s.n {
		s.held.Add(-1)
		return nil, false
	}
	return s, true
}
func (s *semaphore) Done(agilelimiter.Outcome, time.Duration) { s.held.Add(-1) }
func (s *semaphore) Stop()                                    {}

// oracleKnees are the multiples of the knee the inbound oracle sweeps.
var oracleKnees = []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.1, 1.25, 1.4, 1.6, 2, 2.5, 3, 5}

// OracleLimits returns the fixed limits the inbound oracle sweeps for sc:
// multiples of the resource's knee (its servers or knee, or capacity ×
// unloaded latency if higher), closer together near it, clamped to
// [1, MaxLimit], with MaxLimit itself.
func OracleLimits(sc *Scenario) []int {
	knee := math.Max(float64(max(sc.Servers, sc.Knee)), sc.concurrency())
	var ns []int
	for _, f := range oracleKnees {
		ns = append(ns, max(1, min(sc.MaxLimit, int(math.Round(f*knee)))))
	}
	ns = append(ns, sc.MaxLimit)
	out := ns[:0]
	for i, n := range ns {
		if i == 0 || n > out[len(out)-1] {
			out = append(out, n)
		}
	}
	return out
}

// InboundArms returns the inbound arms evaluated against the oracle, in
// table order: the project's ConcurrencyLimiter and failsafe-go's.
func InboundArms() []InboundArm {
	return []InboundArm{AgileInbound(), Failsafe()}
}

// RunInbound drives arm through sc and returns what it achieved: open-loop
// Poisson arrivals at sc.Rate, or sc.Clients closed-loop clients, until
// sc.Duration; the run ends when the last admitted request is done. It must
// be called inside a synctest bubble, and leaves no goroutine behind.
func RunInbound(sc *Scenario, arm InboundArm) Result {
	time.Sleep(sc.phase()) // before anything exists: see Scenario.phase
	clk := newClock()
	dep := newDependency(sc)
	adm := arm.New(sc)
	defer adm.Stop()
	serve := func(p *proc, pm Permit, rq request, rec *record) {
		rec.st, rec.d, rec.work = dep.call(p, rq, time.Time{})
		pm.Done(outcome(rec.st), rec.d)
	}
	if sc.Clients > 0 {
		recs := make([][]*record, sc.Clients)
		for i := range sc.Clients {
			clk.spawn(uint64(i), func(p *proc) {
				rng := sc.runRand(streamClient + uint64(i))
				// Clients start spread over the first 100 ms.
				p.sleep(time.Duration(rng.Float64() * float64(100*time.Millisecond)))
				for time.Since(dep.start) < sc.Duration {
					rec := &record{at: time.Since(dep.start)}
					recs[i] = append(recs[i], rec)
					pm, ok := adm.TryTake()
					if !ok {
						p.sleep(sc.BackoffMin + time.Duration(rng.Float64()*float64(sc.BackoffMax-sc.BackoffMin)))
						continue
					}
					serve(p, pm, sc.draw(rng), rec)
					if sc.Think > 0 {
						p.sleep(time.Duration(rng.ExpFloat64() * float64(sc.Think)))
					}
				}
			})
		}
		clk.run()
		var all []*record
		for _, r := range recs {
			all = append(all, r...)
		}
		return summarize(sc, arm.Name, all)
	}

	var recs []*record
	clk.spawn(0, func(p *proc) {
		rng := sc.runRand(streamArrivals)
		var at time.Duration
		for {
			at += time.Duration(rng.ExpFloat64() / sc.Rate * float64(time.Second))
			if at >= sc.Duration {
				return
			}
			p.sleepUntil(dep.start.Add(at))
			rq := sc.draw(rng)
			rec := &record{at: at}
			recs = append(recs, rec)
			if pm, ok := adm.TryTake(); ok {
				clk.spawn(uint64(len(recs)), func(p *proc) { serve(p, pm, rq, rec) })
			}
		}
	})
	clk.run()
	return summarize(sc, arm.Name, recs)
}
