package sim

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// Gate is what an arm puts between the workers and the dependency.
type Gate interface {
	// Wait blocks until the caller may send, and returns an error when the
	// run ends (ctx is cancelled) before that.
	Wait(ctx context.Context) error
	// Done reports how the call sent after Wait ended: the outcome the
	// limiter should learn and the client's wait.
	Done(o agilelimiter.Outcome, d time.Duration)
	// Rate is the pace the gate lets calls through at now, in req/s.
	Rate() float64
	// Stop releases whatever the gate runs.
	Stop()
}

// Arm is one contender in the comparison: a name and a way to build its gate
// for a scenario. New runs inside the scenario's bubble, at its start.
type Arm struct {
	Name string
	New  func(sc *Scenario, dep *Dependency) Gate
	// Verdict, if set, decides what each call teaches the gate, from the
	// call as an HTTP client sees it (see HTTPExchange). Nil means every
	// answer, cache hits included, and every timeout is Reached, and a
	// refusal is Unreachable.
	Verdict func(resp *http.Response, err error, d time.Duration) agilelimiter.Outcome
}

// Agile returns an arm for the project's Limiter with the config mk builds for
// a scenario.
func Agile(name string, mk func(sc *Scenario) agilelimiter.Config) Arm {
	return Arm{Name: name, New: func(sc *Scenario, _ *Dependency) Gate {
		l := agilelimiter.New(mk(sc))
		l.Start()
		return agileGate{l}
	}}
}

type agileGate struct{ l *agilelimiter.Limiter }

func (g agileGate) Wait(ctx context.Context) error {
	_, err := g.l.TakeContext(ctx)
	return err
}
func (g agileGate) Done(o agilelimiter.Outcome, d time.Duration) { g.l.Record(o, d) }
func (g agileGate) Rate() float64                                { return g.l.Rate() }
func (g agileGate) Stop()                                        { g.l.Stop() }

// Limiter returns the Limiter of a gate built by an Agile arm, or nil.
func Limiter(g Gate) *agilelimiter.Limiter {
	if a, ok := g.(agileGate); ok {
		return a.l
	}
	return nil
}

// BaselineConfig is the default configuration under AnchorBaseline, with the
// scenario's SLO as its p99 guard.
func BaselineConfig(sc *Scenario) agilelimiter.Config {
	return agilelimiter.Config{MaxRate: sc.MaxRate, SLOTarget: sc.SLO}
}

// SLOConfig is the default configuration under AnchorSLO: the one the goal
// (≥ 90% inside the SLO, ≥ 0.8 of the oracle's goodput) is set for.
func SLOConfig(sc *Scenario) agilelimiter.Config {
	return agilelimiter.Config{MaxRate: sc.MaxRate, SLOTarget: sc.SLO, Anchor: agilelimiter.AnchorSLO}
}

// Uber returns an arm pacing at a fixed rate with go.uber.org/ratelimit and
// its defaults (slack 10). Its clock is the time package's, through
// benbjohnson/clock's real clock, so it runs on the bubble's virtual time.
func Uber(perSecond int) Arm {
	return Arm{Name: "uber-" + strconv.Itoa(perSecond), New: func(*Scenario, *Dependency) Gate {
		return &uberGate{l: ratelimit.New(perSecond), r: float64(perSecond)}
	}}
}

type uberGate struct {
	l ratelimit.Limiter
	r float64
}

// Wait takes a slot (uber's Take cannot be cancelled) and then reports whether
// the run is still on.
func (g *uberGate) Wait(ctx context.Context) error {
	g.l.Take()
	return ctx.Err()
}
func (g *uberGate) Done(agilelimiter.Outcome, time.Duration) {}
func (g *uberGate) Rate() float64                            { return g.r }
func (g *uberGate) Stop()                                    {}

// XRate returns an arm pacing at a fixed rate with golang.org/x/time/rate,
// burst 1.
func XRate(perSecond float64) Arm {
	return Arm{Name: "xrate-" + strconv.FormatFloat(perSecond, 'g', -1, 64), New: func(*Scenario, *Dependency) Gate {
		return xrateGate{rate.NewLimiter(rate.Limit(perSecond), 1)}
	}}
}

type xrateGate struct{ l *rate.Limiter }

func (g xrateGate) Wait(ctx context.Context) error           { return g.l.Wait(ctx) }
func (g xrateGate) Done(agilelimiter.Outcome, time.Duration) {}
func (g xrateGate) Rate() float64                            { return float64(g.l.Limit()) }
func (g xrateGate) Stop()                                    {}

// OracleShare is the fraction of the true capacity the oracle paces at. A
// FIFO server fed at exactly its capacity with jittered service times has a
// queue that wanders without bound; 95% keeps the oracle honest about what is
// achievable.
const OracleShare = 0.95

// Oracle returns an arm that knows the dependency's capacity at every instant
// and paces at OracleShare of it; while the dependency refuses, it probes at
// 1 req/s like a limiter at its floor. It reads no feedback at all.
//
// One dispatcher goroutine hands out slots, re-reading the capacity at least
// every oracleLook, so a change of capacity applies at once to every waiter:
// nobody is booked ahead at a stale rate.
func Oracle() Arm {
	return Arm{Name: "oracle", New: func(sc *Scenario, dep *Dependency) Gate {
		g := &oracleGate{sc: sc, start: dep.start, slots: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
		go g.dispatch()
		return g
	}}
}

const oracleLook = 10 * time.Millisecond

type oracleGate struct {
	sc         *Scenario
	start      time.Time
	slots      chan struct{}
	stop, done chan struct{}
}

func (g *oracleGate) Rate() float64 {
	t := time.Since(g.start)
	if g.sc.Refuse != nil && g.sc.Refuse(t) {
		return 1
	}
	return OracleShare * g.sc.Capacity(t)
}

func (g *oracleGate) dispatch() {
	defer close(g.done)
	last := time.Now()
	for {
		iv := time.Duration(float64(time.Second) / math.Max(g.Rate(), 1e-3))
		if wait := time.Until(last.Add(iv)); wait > 0 {
			select {
			case <-time.After(min(wait, oracleLook)):
				continue
			case <-g.stop:
				return
			}
		}
		select {
		case g.slots <- struct{}{}:
		case <-g.stop:
			return
		}
		// A slot nobody wanted for a whole interval is not saved up: no burst.
		last = last.Add(iv)
		if now := time.Now(); now.Sub(last) > iv {
			last = now
		}
	}
}

func (g *oracleGate) Wait(ctx context.Context) error {
	select {
	case <-g.slots:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
func (g *oracleGate) Done(agilelimiter.Outcome, time.Duration) {}
func (g *oracleGate) Stop() {
	close(g.stop)
	<-g.done
}

// Arms returns the outbound arms of the matrix, in table order.
func Arms() []Arm {
	return []Arm{
		Agile("agile-baseline", BaselineConfig),
		Agile("agile-slo", SLOConfig),
		Uber(100),
		Uber(140),
		XRate(140),
		Oracle(),
	}
}
