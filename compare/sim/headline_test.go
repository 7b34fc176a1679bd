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

// timeTo runs arm in sc and returns the virtual time at which the rate first
// reached at least target (0 if never), following it every 10ms.
func timeTo(sc sim.Scenario, arm sim.Arm, target float64) time.Duration {
	var at time.Duration
	sim.RunWatch(sc, arm, 10*time.Millisecond, func(t time.Duration, g sim.Gate) {
		if at == 0 && sim.Limiter(g).Rate() >= target {
			at = t
		}
	})
	return at
}

// Seed: cold start 10 → 500 req/s takes 80 ticks at +5%/tick, 6 with doubling
// (0.6 s at the seed's 100ms tick). The law doubles its window once a round
// trip of answers until a queue begins, so the time is what counts, not the
// ticks: from a rate that sends a call every 100ms, a round of answers takes
// most of the first half second.
func TestColdStart(t *testing.T) {
	sc := fast("cold-start", 12*time.Second)
	arm := sim.Agile("startup", func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MinRate: 1, MaxRate: sc.MaxRate, InitialRate: 10}
	})
	var at time.Duration
	synctest.Test(t, func(t *testing.T) { at = timeTo(sc, arm, 500) })
	t.Logf("cold start 10 → 500 req/s: %v (seed: 0.6 s doubling, 8 s at +5%%/tick)", at)
	if at == 0 || at > time.Second {
		t.Errorf("startup reached 500 req/s after %v, want within 1 s", at)
	}
}

// meanGoodput is the arm's answers inside the SLO per second over [from, to)
// of its run.
func meanGoodput(r sim.Result, from, to time.Duration) float64 {
	sum, n := 0.0, 0
	for _, p := range r.Series {
		if p.T >= from && p.T < to {
			sum += p.Goodput
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// Seed: AnchorBaseline, 20 ms service, 200 ms SLO, a benign rise to 50 ms:
// 500 → 10 req/s in 26 ticks and 88 ticks to return; AnchorSLO does not move.
// The law reads the rise as a queue until a floor probe re-measures the floor
// (every 5 s), holds once a narrower window left the wait where it was, and
// gives the cuts back when the probe finds the floor risen: issue 13 asks for
// ≥ 0.8 of the rate before within 10 s of the shift, under either anchor.
func TestBenignRiseCollapse(t *testing.T) {
	t.Parallel()
	const rise = 2 * time.Second
	sc := fast("benign-rise", 30*time.Second)
	sc.Base = sim.Step(rise, 20*time.Millisecond, 50*time.Millisecond)
	for _, a := range []agilelimiter.Anchor{agilelimiter.AnchorBaseline, agilelimiter.AnchorSLO} {
		arm := sim.Agile(a.String(), func(sc *sim.Scenario) agilelimiter.Config {
			return agilelimiter.Config{MinRate: 10, MaxRate: sc.MaxRate, InitialRate: sc.MaxRate, SLOTarget: sc.SLO, Anchor: a}
		})
		var r sim.Result
		synctest.Test(t, func(t *testing.T) { r = sim.Run(sc, arm) })
		before := meanGoodput(r, rise-time.Second, rise)
		// back is when a second of goodput is at 0.8 × before again, after the
		// last second below it.
		var back time.Duration
		low := before
		for at := rise; at+time.Second <= sc.Duration; at += 100 * time.Millisecond {
			g := meanGoodput(r, at, at+time.Second)
			low = min(low, g)
			if g < 0.8*before {
				back = -1
			} else if back < 0 {
				back = at + time.Second - rise
			}
		}
		t.Logf("benign rise 20 → 50 ms, %v: %.0f answers/s inside before, lowest second %.0f/s, back to ≥ 0.8 × before %v after the rise (seed: AnchorBaseline 500 → 10 req/s and 11.4 s back; AnchorSLO does not move)",
			a, before, low, back)
		if before < 400 {
			t.Errorf("%v: %.0f answers/s inside before the rise; the dependency never binds at 500", a, before)
		}
		if back < 0 || back > 10*time.Second {
			t.Errorf("%v: goodput back to 0.8 × before %v after a benign rise; want within 10 s", a, back)
		}
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
