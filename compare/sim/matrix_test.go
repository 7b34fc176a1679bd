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
// SLO and ≥ 0.8 of the oracle's goodput in every scenario. The published
// matrix (seed 1) meets it everywhere. In slo-breaks the oracle itself keeps
// only 65% inside (no pace meets an SLO the dependency breaks): the share is
// won by sending less during the break and returning fast after it.
func TestGoalForAnchorSLO(t *testing.T) {
	tab := theMatrix(t)
	for _, sc := range tab.Scenarios {
		c := cell(t, tab, sc.Name, "agile-slo")
		t.Logf("%-18s AnchorSLO: %5.1f%% inside (goal 90%%), %.2f of the oracle's goodput (goal 0.80)",
			sc.Name, 100*c.Inside, c.OfOracle)
		if c.Inside < goalInside || c.OfOracle < goalOfOracle {
			t.Errorf("%s: AnchorSLO %.1f%% inside, %.2f of oracle; the goal is ≥ 90%% and ≥ 0.80",
				sc.Name, 100*c.Inside, c.OfOracle)
		}
	}
}

const goalInside, goalOfOracle = 0.90, 0.80

// One seed is one draw of the jitter, and a controller tuned on one draw can
// be lucky. Across seeds 1–6 the goal holds on average in every scenario, and
// no single draw falls far below it (the worst is logged: 89.4% inside in
// capacity-drops and 90.4% in slo-breaks today, so the floor for one draw is
// 88%).
func TestGoalAcrossSeeds(t *testing.T) {
	const seeds = 6
	arms := []sim.Arm{sim.Agile("agile-slo", sim.SLOConfig), sim.Oracle()}
	type stat struct{ inside, ofOracle, worstInside, worstOfOracle float64 }
	stats := map[string]*stat{}
	var names []string
	for seed := uint64(1); seed <= seeds; seed++ {
		scs := sim.Matrix()
		for i := range scs {
			scs[i].Seed = seed
		}
		tab := sim.RunMatrix(scs, arms, func(f func()) {
			synctest.Test(t, func(*testing.T) { f() })
		})
		for _, sc := range tab.Scenarios {
			c := cell(t, tab, sc.Name, "agile-slo")
			st, ok := stats[sc.Name]
			if !ok {
				st = &stat{worstInside: 1, worstOfOracle: 10}
				stats[sc.Name] = st
				names = append(names, sc.Name)
			}
			st.inside += c.Inside / seeds
			st.ofOracle += c.OfOracle / seeds
			st.worstInside = min(st.worstInside, c.Inside)
			st.worstOfOracle = min(st.worstOfOracle, c.OfOracle)
			if c.Inside < 0.88 || c.OfOracle < goalOfOracle {
				t.Errorf("%s, seed %d: AnchorSLO %.1f%% inside, %.2f of oracle; want ≥ 88%% and ≥ 0.80 in every draw",
					sc.Name, seed, 100*c.Inside, c.OfOracle)
			}
		}
	}
	for _, name := range names {
		st := stats[name]
		t.Logf("%-18s AnchorSLO over %d seeds: mean %5.1f%% inside, %.2f of oracle; worst %5.1f%%, %.2f",
			name, seeds, 100*st.inside, st.ofOracle, 100*st.worstInside, st.worstOfOracle)
		if st.inside < goalInside || st.ofOracle < goalOfOracle {
			t.Errorf("%s: AnchorSLO averages %.1f%% inside, %.2f of oracle over %d seeds; the goal is ≥ 90%% and ≥ 0.80",
				name, 100*st.inside, st.ofOracle, seeds)
		}
	}
}

// Under AnchorBaseline (the zero-value anchor, with the scenario's SLO as the
// p99 guard) the controller keeps ≥ 95% inside the SLO wherever the latency
// floor does not move for good, at 0.85 of the oracle's goodput or more; the
// benign rises it reads as congestion by design (AnchorSLO is the answer to
// those).
func TestAnchorBaselineMeetsGoal(t *testing.T) {
	tab := theMatrix(t)
	for _, name := range []string{"steady", "slo-breaks", "capacity-drops", "capacity-recovers", "diurnal", "outage"} {
		c := cell(t, tab, name, "agile-baseline")
		t.Logf("%-18s AnchorBaseline: %5.1f%% inside, %.2f of the oracle's goodput", name, 100*c.Inside, c.OfOracle)
		if c.Inside < 0.95 || c.OfOracle < 0.85 {
			t.Errorf("%s: AnchorBaseline %.1f%% inside, %.2f of oracle; want ≥ 95%% and ≥ 0.85", name, 100*c.Inside, c.OfOracle)
		}
	}
}
