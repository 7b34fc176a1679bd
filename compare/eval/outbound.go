package eval

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"golang.org/x/time/rate"
)

// Pacer is what an outbound arm puts between its callers and the dependency.
type Pacer interface {
	// Take blocks until the caller may send, and returns an error when the
	// caller must not send (its deadline leaves no slot, or ctx ended while
	// it waited).
	Take(ctx context.Context) error
	// Record reports how a call sent after Take ended: the outcome the
	// limiter should learn and how long the caller waited for it.
	Record(o agilelimiter.Outcome, d time.Duration)
	// Stop releases whatever the pacer runs.
	Stop()
}

// OutboundArm is one outbound contender: a name and a way to build its pacer
// for a scenario. New runs inside the run's bubble, at its start.
type OutboundArm struct {
	Name string                   // the arm's name in tables
	New  func(sc *Scenario) Pacer // builds the pacer for sc
}

// AgileOutbound returns an arm for the project's Limiter in its default
// configuration with an SLO: only MaxRate, SLOTarget and anchor are set, so
// the arm needs no change when the other Config fields do.
func AgileOutbound(name string, anchor agilelimiter.Anchor) OutboundArm {
	return OutboundArm{Name: name, New: func(sc *Scenario) Pacer {
		l := agilelimiter.New(agilelimiter.Config{MaxRate: sc.MaxRate, SLOTarget: sc.SLO, Anchor: anchor})
		l.Start()
		return agilePacer{l}
	}}
}

type agilePacer struct{ l *agilelimiter.Limiter }

func (p agilePacer) Take(ctx context.Context) error {
	_, err := p.l.TakeContext(ctx)
	return err
}
func (p agilePacer) Record(o agilelimiter.Outcome, d time.Duration) { p.l.Record(o, d) }
func (p agilePacer) Stop()                                          { p.l.Stop() }

// XRate returns an arm pacing with golang.org/x/time/rate, burst 1, at the
// scenario's initial capacity: the static limit a user would have measured
// and configured. Wait honours the caller's deadline (it refuses a wait that
// would end after it) but keeps no round trip in reserve.
func XRate() OutboundArm {
	return OutboundArm{Name: "xrate", New: func(sc *Scenario) Pacer {
		return xratePacer{rate.NewLimiter(rate.Limit(sc.Capacity0), 1)}
	}}
}

type xratePacer struct{ l *rate.Limiter }

func (p xratePacer) Take(ctx context.Context) error             { return p.l.Wait(ctx) }
func (p xratePacer) Record(agilelimiter.Outcome, time.Duration) {}
func (p xratePacer) Stop()                                      {}

// OracleShares are the shares of the true capacity the outbound oracle
// sweeps; the best goodput among them is the oracle's.
var OracleShares = []float64{0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95, 1.0}

// oracleProbe is the oracle's pace while the dependency refuses everything,
// in req/s: a limiter at its floor.
const oracleProbe = 1.0

// oracleReserve is the round trip the oracle keeps before a caller's
// deadline, in unloaded mean latencies: a caller whose slot would leave less
// is refused at once, as the project's TakeContext does with its p99.
const oracleReserve = 2.0

// errTooLate is the oracle's refusal of a caller whose slot would come too
// close to its deadline.
var errTooLate = errors.New("eval: the oracle's next slot leaves no round trip before the deadline")

// Oracle returns an arm that knows the capacity trace and paces at share ×
// Capacity(t) (oracleProbe while the dependency refuses). It books each
// caller the next slot in arrival order, integrating the true rate forward
// from the last slot, so a slot booked before a drop is spaced at the rate
// after it; a slot nobody took is not saved up. It reads no feedback.
func Oracle(share float64) OutboundArm {
	return OutboundArm{Name: fmt.Sprintf("oracle-%.2f", share), New: func(sc *Scenario) Pacer {
		return &oraclePacer{sc: sc, share: share, start: time.Now()}
	}}
}

type oraclePacer struct {
	sc    *Scenario
	share float64
	start time.Time

	mu   sync.Mutex
	next time.Time // the earliest the next slot may be
}

// rate is the oracle's pace at t, in req/s.
func (p *oraclePacer) rate(t time.Duration) float64 {
	if p.sc.Refuses(t) {
		return oracleProbe
	}
	return max(p.share*p.sc.Capacity(t), 1e-3)
}

// after returns the instant one slot after from: where the integral of the
// rate from from reaches 1, the rate read every oracleStep at most.
func (p *oraclePacer) after(from time.Time) time.Time {
	const oracleStep = 5 * time.Millisecond
	t, need := from.Sub(p.start), 1.0
	for {
		r := p.rate(t)
		h := time.Duration(need / r * float64(time.Second))
		if h <= oracleStep {
			return p.start.Add(t + max(h, 1))
		}
		t += oracleStep
		need -= r * oracleStep.Seconds()
	}
}

func (p *oraclePacer) Take(ctx context.Context) error {
	p.mu.Lock()
	now := time.Now()
	slot := p.next
	if slot.Before(now) {
		slot = now
	}
	if dl, ok := ctx.Deadline(); ok && slot.After(now) {
		reserve := time.Duration(oracleReserve * float64(p.sc.UnloadedAt(slot.Sub(p.start))))
		if slot.After(dl.Add(-reserve)) {
			p.mu.Unlock()
			return errTooLate
		}
	}
	p.next = p.after(slot)
	p.mu.Unlock()
	if p, ok := ctx.Value(procKey{}).(*proc); ok {
		p.sleepUntil(slot)
	} else if wait := slot.Sub(now); wait > 0 {
		time.Sleep(wait)
	}
	// A slot booked ahead is kept to unless the caller is gone (the run
	// ended); the reservation was checked against its deadline.
	return context.Cause(ctx)
}
func (p *oraclePacer) Record(agilelimiter.Outcome, time.Duration) {}
func (p *oraclePacer) Stop()                                      {}

// OutboundArms returns the outbound arms evaluated against the oracle, in
// table order: the project's Limiter under both anchors and x/time/rate.
func OutboundArms() []OutboundArm {
	return []OutboundArm{
		AgileOutbound("agile", agilelimiter.AnchorBaseline),
		AgileOutbound("agile-slo", agilelimiter.AnchorSLO),
		XRate(),
	}
}

// record is one arrival's fate.
type record struct {
	at   time.Duration // when the call was offered, since the run began
	st   status
	d    time.Duration // the caller's wait for the answer (not for the slot)
	work time.Duration // server time the request cost
}

// RunOutbound drives arm through sc and returns what it achieved. Callers
// arrive open-loop (Poisson at sc.Rate) until sc.Duration, each with its
// deadline; the run ends when the last of them is done. It must be called
// inside a synctest bubble, and leaves no goroutine behind.
func RunOutbound(sc *Scenario, arm OutboundArm) Result {
	time.Sleep(sc.phase()) // before anything exists: see Scenario.phase
	clk := newClock()
	dep := newDependency(sc)
	pacer := arm.New(sc)
	// The run ends at sc.Duration for the callers still waiting for a slot,
	// as the other arms cannot serve them later: they are unfinished. The
	// calls already sent finish and count.
	run, end := context.WithCancel(context.Background())
	defer end()
	var recs []*record
	clk.spawn(0, func(p *proc) {
		rng := sc.runRand(streamArrivals)
		var at time.Duration
		for {
			at += time.Duration(rng.ExpFloat64() / sc.Rate * float64(time.Second))
			if at >= sc.Duration {
				p.sleepUntil(dep.start.Add(sc.Duration))
				p.external() // the waiting callers wake on end, outside the clock
				end()
				return
			}
			p.sleepUntil(dep.start.Add(at))
			rq := sc.draw(rng)
			timeout := sc.DeadlineMin + time.Duration(rng.Float64()*float64(sc.DeadlineMax-sc.DeadlineMin))
			rec := &record{at: at}
			recs = append(recs, rec)
			clk.spawn(uint64(len(recs)), func(p *proc) {
				ctx, cancel := context.WithTimeout(context.WithValue(run, procKey{}, p), timeout)
				defer cancel()
				p.external()
				if pacer.Take(ctx) != nil {
					if run.Err() != nil {
						rec.st = unfinished
					}
					return // otherwise rec.st is limited
				}
				dl, _ := ctx.Deadline()
				rec.st, rec.d, rec.work = dep.call(p, rq, dl)
				pacer.Record(outcome(rec.st), rec.d)
			})
		}
	})
	clk.run()
	pacer.Stop()
	return summarize(sc, arm.Name, recs)
}

// procKey is the context key under which a caller's proc travels, for a
// pacer of this package that sleeps on the run's clock.
type procKey struct{}

// outcome is what a limiter learns from a call: a refusal is Unreachable;
// an answer, and a timeout (it says the dependency took at least that long),
// are Reached.
func outcome(st status) agilelimiter.Outcome {
	if st == refused {
		return agilelimiter.Unreachable
	}
	return agilelimiter.Reached
}
