package sim_test

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

var (
	matrixOnce sync.Once
	matrix     sim.Table
)

// theMatrix runs the whole matrix once per test binary (about a second of
// real time for 8 scenarios × 7 arms × 20 s of virtual time) and logs it.
func theMatrix(t *testing.T) sim.Table {
	t.Helper()
	matrixOnce.Do(func() {
		matrix = sim.RunMatrix(sim.Matrix(), sim.Arms(), func(f func()) {
			synctest.Test(t, func(*testing.T) { f() })
		})
		var b strings.Builder
		matrix.WriteText(&b)
		t.Log("\n" + b.String())
	})
	return matrix
}

func cell(t *testing.T, tab sim.Table, scenario, arm string) sim.Cell {
	t.Helper()
	c, ok := tab.Cell(scenario, arm)
	if !ok {
		t.Fatalf("no cell %s/%s", scenario, arm)
	}
	return c
}

// meanRate is the arm's mean pace over [from, to) of its run.
func meanRate(r sim.Result, from, to time.Duration) float64 {
	sum, n := 0.0, 0
	for _, p := range r.Series {
		if p.T >= from && p.T < to {
			sum += p.Rate
			n++
		}
	}
	return sum / float64(max(n, 1))
}

// The simulator must not favour one fixed-rate implementation over another:
// uber's ratelimit and x/time/rate at the same rate see the same dependency.
func TestFixedRateArmsAgree(t *testing.T) {
	tab := theMatrix(t)
	for _, sc := range tab.Scenarios {
		u, x := cell(t, tab, sc.Name, "uber-140"), cell(t, tab, sc.Name, "xrate-140")
		if d := u.Goodput - x.Goodput; d > 2 || d < -2 {
			t.Errorf("%s: uber-140 %.1f/s vs xrate-140 %.1f/s inside the SLO; the same pace should give the same goodput", sc.Name, u.Goodput, x.Goodput)
		}
	}
}

// The oracle is what the table is measured against: it must hold the SLO
// wherever the SLO can be held at all.
func TestOracleHoldsTheSLO(t *testing.T) {
	tab := theMatrix(t)
	for _, sc := range tab.Scenarios {
		if sc.Name == "slo-breaks" {
			continue // 7 s of a round trip above the SLO: nobody can
		}
		if o := cell(t, tab, sc.Name, "oracle"); o.Inside < 0.95 {
			t.Errorf("%s: the oracle answered only %.1f%% inside the SLO", sc.Name, 100*o.Inside)
		}
	}
}

// Seed (SPEC §7): 20 s runs against uber's fixed-rate limiter, capacity
// 150 req/s, SLO 100 ms. Latency 20 → 70 ms at 5 s leaves the baseline
// anchor at MinRate for the rest of the run; capacity 150 → 40 req/s: the SLO
// anchor settles near 39 req/s with 83% inside the SLO, while a fixed
// 100 req/s has a 619 ms mean and 40% inside.
func TestSeedAgainstFixedRates(t *testing.T) {
	tab := theMatrix(t)

	bumpBase := cell(t, tab, "benign-bump", "agile-baseline")
	bumpSLO := cell(t, tab, "benign-bump", "agile-slo")
	late := meanRate(bumpBase.Result, 10*time.Second, 20*time.Second)
	t.Logf("benign bump: AnchorBaseline paces %.0f req/s over 10–20 s (seed: MinRate), goodput %.1f/s; AnchorSLO %.1f/s; uber-140 %.1f/s",
		late, bumpBase.Goodput, bumpSLO.Goodput, cell(t, tab, "benign-bump", "uber-140").Goodput)
	if late > 0.5*150 {
		t.Errorf("benign bump: AnchorBaseline held %.0f req/s after the rise; the seed's finding is a collapse", late)
	}
	if bumpSLO.Goodput < 2*bumpBase.Goodput {
		t.Errorf("benign bump: AnchorSLO %.1f/s should far outdo AnchorBaseline %.1f/s on a rise inside the SLO", bumpSLO.Goodput, bumpBase.Goodput)
	}

	drop := cell(t, tab, "capacity-drops", "agile-slo")
	fixed := cell(t, tab, "capacity-drops", "uber-100")
	settled := meanRate(drop.Result, 12*time.Second, 20*time.Second)
	t.Logf("capacity 150 → 40: AnchorSLO settles at %.0f req/s (seed ≈ 39) with %.0f%% inside (seed 83%%); uber-100: mean %v (seed 619 ms), %.0f%% inside (seed 40%%), %.0f%% of the work wasted",
		settled, 100*drop.Inside, fixed.Mean.Round(time.Millisecond), 100*fixed.Inside, 100*fixed.Wasted)
	if settled < 20 || settled > 60 {
		t.Errorf("capacity drop: AnchorSLO settled at %.0f req/s, want near the new capacity of 40", settled)
	}
	if fixed.Mean < 400*time.Millisecond || fixed.Inside > 0.5 {
		t.Errorf("capacity drop: uber-100 mean %v, %.0f%% inside; a fixed rate above capacity should drown (seed 619 ms, 40%%)", fixed.Mean, 100*fixed.Inside)
	}
	if drop.Inside < fixed.Inside+0.15 {
		t.Errorf("capacity drop: AnchorSLO %.0f%% inside is not clearly better than uber-100's %.0f%%", 100*drop.Inside, 100*fixed.Inside)
	}
}

// Seed: no arm held everywhere. Fixed rates fell to 38–52% inside the SLO when
// capacity moved; adaptive arms stayed at 78–95%.
func TestFixedRatesFailWhenCapacityMoves(t *testing.T) {
	tab := theMatrix(t)
	for _, name := range []string{"capacity-drops", "capacity-recovers", "diurnal"} {
		for _, arm := range []string{"uber-100", "uber-140"} {
			c := cell(t, tab, name, arm)
			if c.Inside > 0.65 {
				t.Errorf("%s/%s: %.0f%% inside; a fixed rate above the capacity at some point should lose the SLO", name, arm, 100*c.Inside)
			}
		}
		best := max(cell(t, tab, name, "uber-100").Inside, cell(t, tab, name, "uber-140").Inside)
		if a := cell(t, tab, name, "agile-slo"); a.Inside < best {
			t.Errorf("%s: AnchorSLO %.0f%% inside, below the best fixed rate's %.0f%%", name, 100*a.Inside, 100*best)
		}
	}
}

// The goal for the default SLO-anchored configuration is ≥ 90% inside the
// SLO and ≥ 0.8 of the oracle's goodput in every scenario. In this matrix
// (seed 1) it is met in steady, benign-bump, capacity-recovers,
// flapping-latency and diurnal, not yet in slo-breaks, capacity-drops and
// outage (in slo-breaks the oracle itself keeps only 65% inside: no pace
// meets an SLO the dependency breaks; only sending less during the break
// raises the share). The floors below are what the controller achieves today
// (with a margin for scheduling noise under -race), so a regression fails
// here while the gap stays visible in the log. What is left, measured tick by
// tick: a sudden capacity drop builds a queue in the two or three ticks
// before any completed call can show it, and under AnchorSLO the controller
// holds the p50 anywhere below 80% of the SLO, where a 40 req/s dependency's
// tail already crosses it.
func TestGoalForAnchorSLO(t *testing.T) {
	const goalInside, goalOfOracle = 0.90, 0.80
	floors := map[string]struct{ inside, ofOracle float64 }{
		"steady":            {0.92, 0.92},
		"benign-bump":       {0.91, 0.78},
		"slo-breaks":        {0.81, 0.82},
		"capacity-drops":    {0.80, 0.77},
		"capacity-recovers": {0.90, 0.81},
		"flapping-latency":  {0.88, 0.81},
		"diurnal":           {0.89, 0.89},
		"outage":            {0.86, 0.79},
	}
	tab := theMatrix(t)
	for _, sc := range tab.Scenarios {
		c := cell(t, tab, sc.Name, "agile-slo")
		f, ok := floors[sc.Name]
		if !ok {
			t.Errorf("%s: no floor recorded", sc.Name)
			continue
		}
		status := "meets the goal"
		if c.Inside < goalInside || c.OfOracle < goalOfOracle {
			status = "GOAL MISSED"
		}
		t.Logf("%-18s AnchorSLO: %5.1f%% inside (goal 90%%), %.2f of the oracle's goodput (goal 0.80): %s",
			sc.Name, 100*c.Inside, c.OfOracle, status)
		if c.Inside < f.inside || c.OfOracle < f.ofOracle {
			t.Errorf("%s: AnchorSLO %.1f%% inside, %.2f of oracle; regressed below the recorded %.0f%%, %.2f",
				sc.Name, 100*c.Inside, c.OfOracle, 100*f.inside, f.ofOracle)
		}
	}
}

// Under AnchorBaseline (the zero-value anchor, with the scenario's SLO as the
// p99 guard) the controller keeps ≥ 93% inside the SLO wherever the latency
// floor does not move for good, at 0.84 of the oracle's goodput or more; the
// benign rises it reads as congestion by design (AnchorSLO is the answer to
// those).
func TestAnchorBaselineMeetsGoal(t *testing.T) {
	tab := theMatrix(t)
	for _, name := range []string{"steady", "slo-breaks", "capacity-drops", "capacity-recovers", "diurnal", "outage"} {
		c := cell(t, tab, name, "agile-baseline")
		t.Logf("%-18s AnchorBaseline: %5.1f%% inside, %.2f of the oracle's goodput", name, 100*c.Inside, c.OfOracle)
		if c.Inside < 0.93 || c.OfOracle < 0.84 {
			t.Errorf("%s: AnchorBaseline %.1f%% inside, %.2f of oracle; want ≥ 93%% and ≥ 0.84", name, 100*c.Inside, c.OfOracle)
		}
	}
}
