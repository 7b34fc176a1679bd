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
