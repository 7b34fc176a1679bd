package sim_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// The figures of SPEC §7, reproduced on the simulator. Each test prints the
// measured numbers next to the seed's and asserts their direction and rough
// magnitude; the exact values belong to the simulator and the controller of
// the day.

// fast is a dependency that never binds: the limiter's own law is all that
// moves the rate.
func fast(name string, d time.Duration) sim.Scenario {
	return sim.Scenario{
		Name: name, Duration: d, SLO: 200 * time.Millisecond, Timeout: time.Second,
		Workers: 300, MaxRate: 500,
		Capacity: sim.Const(5000.0), Base: sim.Const(20 * time.Millisecond),
		Jitter: 0.1, Seed: 7,
	}
}

// ticksTo runs arm in sc and returns the controller tick at which the rate
// first reached at least target (0 if never), following it every 10ms.
func ticksTo(sc sim.Scenario, arm sim.Arm, target float64) uint64 {
	var at uint64
	sim.RunWatch(sc, arm, 10*time.Millisecond, func(_ time.Duration, g sim.Gate) {
		if l := sim.Limiter(g); at == 0 && l.Rate() >= target {
			at = l.Stats().Ticks
		}
	})
	return at
}

// Seed: cold start 10 → 500 req/s takes 80 ticks at +5%/tick, 6 with doubling.
func TestColdStart(t *testing.T) {
	sc := fast("cold-start", 12*time.Second)
	doubling := sim.Agile("doubling", func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MinRate: 1, MaxRate: sc.MaxRate, InitialRate: 10}
	})
	// The original probe: +5% a tick, no slow start. SlowStartGain 1.05 with a
	// negligible additive step is exactly that while nothing is congested.
	fivePercent := sim.Agile("+5%", func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MinRate: 1, MaxRate: sc.MaxRate, InitialRate: 10, SlowStartGain: 1.05, UpStep: 1e-9}
	})
	var dbl, pct uint64
	synctest.Test(t, func(t *testing.T) { dbl = ticksTo(sc, doubling, 500) })
	synctest.Test(t, func(t *testing.T) { pct = ticksTo(sc, fivePercent, 500) })
	t.Logf("cold start 10 → 500 req/s: doubling %d ticks (seed 6), +5%%/tick %d ticks (seed 80)", dbl, pct)
	if dbl == 0 || dbl > 7 {
		t.Errorf("doubling reached 500 req/s after %d ticks, want 1..7", dbl)
	}
	if pct < 70 || pct > 90 {
		t.Errorf("+5%%/tick reached 500 req/s after %d ticks, want about 80", pct)
	}
}

// Seed: AnchorBaseline, 20 ms service, 200 ms SLO, a benign rise to 50 ms:
// 500 → 10 req/s in 26 ticks and 88 ticks to return; AnchorSLO does not move.
func TestBenignRiseCollapse(t *testing.T) {
	const rise = 2 * time.Second
	sc := fast("benign-rise", 30*time.Second)
	sc.Base = sim.Step(rise, 20*time.Millisecond, 50*time.Millisecond)
	cfg := func(a agilelimiter.Anchor) func(*sim.Scenario) agilelimiter.Config {
		return func(sc *sim.Scenario) agilelimiter.Config {
			return agilelimiter.Config{MinRate: 10, MaxRate: sc.MaxRate, InitialRate: sc.MaxRate, SLOTarget: sc.SLO, Anchor: a}
		}
	}
	type trace struct {
		low       float64
		lowTick   uint64 // ticks after the rise to the lowest rate
		backTicks uint64 // ticks after the rise to be back at ≥ 95% of MaxRate
	}
	follow := func(arm sim.Arm) trace {
		tr := trace{low: 1e9}
		var riseTick uint64
		sim.RunWatch(sc, arm, 10*time.Millisecond, func(at time.Duration, g sim.Gate) {
			l := sim.Limiter(g)
			r, ticks := l.Rate(), l.Stats().Ticks
			switch {
			case at < rise:
				riseTick = ticks
			case r < tr.low:
				tr.low, tr.lowTick, tr.backTicks = r, ticks-riseTick, 0
			case tr.backTicks == 0 && tr.low < 475 && r >= 475:
				tr.backTicks = ticks - riseTick
			}
		})
		return tr
	}
	var base, slo trace
	synctest.Test(t, func(t *testing.T) { base = follow(sim.Agile("baseline", cfg(agilelimiter.AnchorBaseline))) })
	synctest.Test(t, func(t *testing.T) { slo = follow(sim.Agile("slo", cfg(agilelimiter.AnchorSLO))) })
	t.Logf("benign rise 20 → 50 ms, AnchorBaseline: 500 → %.0f req/s, %d ticks after the rise (seed: → 10 in 26); back to ≥475 %d ticks after the rise (seed: 26+88)",
		base.low, base.lowTick, base.backTicks)
	t.Logf("benign rise 20 → 50 ms, AnchorSLO: lowest rate %.0f req/s (seed: does not move)", slo.low)
	// AnchorBaseline's known price: a benign rise past twice the baseline
	// reads as congestion until the baseline catches up.
	if base.low > 400 {
		t.Errorf("AnchorBaseline held %.0f req/s through a rise past twice its baseline; it should back off", base.low)
	}
	if base.backTicks == 0 {
		t.Errorf("AnchorBaseline did not return to 475 req/s within the run after a benign rise")
	}
	if slo.low < 475 {
		t.Errorf("AnchorSLO moved to %.0f req/s on a benign rise inside the SLO", slo.low)
	}
}

// naive reads a refusal as a fast, healthy answer: what the original design
// did before Unreachable existed.
func naive(a sim.Arm) sim.Arm {
	return sim.Arm{Name: a.Name + "-naive", New: func(sc *sim.Scenario, dep *sim.Dependency) sim.Gate {
		return naiveGate{a.New(sc, dep)}
	}}
}

type naiveGate struct{ sim.Gate }

func (g naiveGate) Done(_ agilelimiter.Outcome, d time.Duration) {
	g.Gate.Done(agilelimiter.Reached, d)
}

// Seed: a limiter starting at 50 req/s against a port that refuses every call
// climbed to 335 req/s in ten seconds; with Unreachable it sits at MinRate.
func TestRefusedPort(t *testing.T) {
	sc := fast("refused-port", 10*time.Second)
	sc.SLO = 100 * time.Millisecond
	sc.Refuse = sim.Const(true)
	cfg := func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MaxRate: sc.MaxRate, InitialRate: 50, SLOTarget: sc.SLO}
	}
	var withOutcome, without float64
	synctest.Test(t, func(t *testing.T) {
		r := sim.Run(sc, sim.Agile("unreachable", cfg))
		withOutcome = r.Series[len(r.Series)-1].Rate
	})
	synctest.Test(t, func(t *testing.T) {
		r := sim.Run(sc, naive(sim.Agile("reached", cfg)))
		without = r.Series[len(r.Series)-1].Rate
	})
	t.Logf("refused port, 10 s from 50 req/s: refusals as Unreachable → %.1f req/s (MinRate 1); as fast answers → %.0f req/s (seed 335 and climbing)", withOutcome, without)
	if withOutcome > 1.5 {
		t.Errorf("with Unreachable the rate ended at %.1f req/s, want MinRate", withOutcome)
	}
	if without < 300 {
		t.Errorf("read as fast answers the rate ended at %.0f req/s; the seed's failure is a climb past 300", without)
	}
}
