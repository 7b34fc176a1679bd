package sim_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// A run starts its Phase into the probe clock's cycle, and the phases of
// seeds 1–30 cover the cycle: no fifth of it holds fewer than four of them.
// With every run aligned on the cycle, each event at 5 s met a floor probe
// at its first instant (docs/controller-rewrite.md, eleventh session).
func TestPhaseSpreadsRunsOverTheProbeCycle(t *testing.T) {
	var fifths [5]int
	for seed := uint64(1); seed <= 30; seed++ {
		p := sim.PhaseOf(seed)
		if p < 0 || p >= sim.ProbeCycle {
			t.Fatalf("seed %d: phase %v outside [0, %v)", seed, p, sim.ProbeCycle)
		}
		fifths[int(5*p/sim.ProbeCycle)]++
	}
	for i, n := range fifths {
		if n < 4 {
			t.Errorf("fifth %d of the cycle holds %d of 30 phases: %v", i, n, fifths)
		}
	}

	sc := sim.Matrix()[0]
	sc.Duration, sc.Phase = time.Second, 1300*time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now()
		var first time.Time
		sim.RunWatch(sc, sim.Oracle(), 100*time.Millisecond, func(time.Duration, sim.Gate) {
			if first.IsZero() {
				first = time.Now()
			}
		})
		if got, want := first.Sub(epoch), sc.Phase+100*time.Millisecond; got != want {
			t.Errorf("the run's first watch came %v into the clock, want its phase and one interval, %v", got, want)
		}
	})
}

// ProbeCycle restates the core's floor period, which compare/ cannot import:
// the limiter's floor probes must begin on whole multiples of it on the
// clock, or the Phase a run is drawn at means nothing.
func TestProbeCycleIsTheLimitersFloorPeriod(t *testing.T) {
	sc := sim.Matrix()[0] // steady: a window that fills, so every period probes
	sc.Duration, sc.Phase = 12*time.Second, 1300*time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		epoch := time.Now() // a bubble's clock starts on a multiple of any whole second
		var starts []time.Duration
		probing := false
		sim.RunWatch(sc, sim.Agile("agile", sim.SLOConfig), 20*time.Millisecond, func(_ time.Duration, g sim.Gate) {
			on := sim.Limiter(g).Stats().Decision == "floor-probe"
			if on && !probing {
				starts = append(starts, time.Since(epoch))
			}
			probing = on
		})
		// Past the first boundary (before it, the probe that ends startup),
		// the first probe of each cycle begins on its boundary; a probe's
		// settle shows as a pause within it.
		cycles := map[time.Duration]time.Duration{}
		for _, at := range starts {
			if c := at / sim.ProbeCycle; c > 0 {
				if _, ok := cycles[c]; !ok {
					cycles[c] = at % sim.ProbeCycle
				}
			}
		}
		if len(cycles) < 2 {
			t.Fatalf("floor probes began at %v; want one in each of the cycles after the first", starts)
		}
		for c, off := range cycles {
			if off > 200*time.Millisecond {
				t.Errorf("cycle %d: the first floor probe began %v past its boundary (ProbeCycle %v); probes at %v", c, off, sim.ProbeCycle, starts)
			}
		}
	})
}
