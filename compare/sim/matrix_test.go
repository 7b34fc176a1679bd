package sim_test

import (
	"strings"
	"sync"
	"testing"
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
		matrix = sim.RunMatrix(sim.Matrix(), sim.Arms(), sim.Bubbles(t))
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
// 150 req/s, SLO 100 ms. Latency 20 → 70 ms at 5 s left the baseline anchor
// at MinRate for the rest of the run; capacity 150 → 40 req/s: the SLO anchor
// settled near 39 req/s with 83% inside the SLO, while a fixed 100 req/s had a
// 619 ms mean and 40% inside. The law beats the first (a floor probe learns
// the rise within a period, whatever the anchor) and keeps the second.
func TestSeedAgainstFixedRates(t *testing.T) {
	tab := theMatrix(t)

	bump := cell(t, tab, "benign-bump", "agile-baseline")
	late := meanGoodput(bump.Result, 10*time.Second, 20*time.Second)
	t.Logf("benign bump: AnchorBaseline %.0f answers/s inside over 10–20 s (seed: MinRate), goodput %.1f/s over the run; AnchorSLO %.1f/s; uber-140 %.1f/s",
		late, bump.Goodput, cell(t, tab, "benign-bump", "agile-slo").Goodput, cell(t, tab, "benign-bump", "uber-140").Goodput)
	if late < 0.5*150 {
		t.Errorf("benign bump: AnchorBaseline answered %.0f/s inside after the rise; the seed's collapse is what the law must not repeat", late)
	}

	drop := cell(t, tab, "capacity-drops", "agile-slo")
	fixed := cell(t, tab, "capacity-drops", "uber-100")
	settled := meanGoodput(drop.Result, 12*time.Second, 20*time.Second)
	t.Logf("capacity 150 → 40: AnchorSLO answers %.0f/s inside over 12–20 s (seed ≈ 39 req/s) with %.0f%% inside over the run (seed 83%%); uber-100: mean %v (seed 619 ms), %.0f%% inside (seed 40%%), %.0f%% of the work wasted",
		settled, 100*drop.Inside, fixed.Mean.Round(time.Millisecond), 100*fixed.Inside, 100*fixed.Wasted)
	if settled < 30 || settled > 45 {
		t.Errorf("capacity drop: AnchorSLO settled at %.0f answers/s inside, want near the new capacity of 40", settled)
	}
	if drop.Inside < 0.83 {
		t.Errorf("capacity drop: AnchorSLO %.0f%% inside, below the seed's 83%%", 100*drop.Inside)
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

// goal is a share of answers inside the SLO and of the oracle's goodput.
type goal struct{ inside, ofOracle float64 }

// The goal for the default configuration is ≥ 90% inside the SLO and ≥ 0.8
// of the oracle's goodput in every scenario. In slo-breaks the oracle itself
// keeps only 65% inside (no pace meets an SLO the dependency breaks): the
// share is won by sending less during the break and returning fast after it.
var sloGoal = goal{0.90, 0.80}

// shortOf is where the window law falls short of a goal today (issue 13 stays
// open until every line is gone), keyed by test and scenario: a bar below the
// goal, so a change that loses ground fails, and a change that meets the goal
// deletes its line. The matrix's scenarios run at windows of a few calls, and
// one draw of the jitter and of the run's Phase moves a figure by a few points
// either way: each bar is what the law reaches over seeds 1–30 (`go run
// ./compare/cmd/matrix -seeds 30`, the mean and one draw's standard deviation
// in the comment) less the noise of what the test reads — two standard
// deviations of one draw (seed 1), of a mean of six (six seeds), three of one
// draw for the worst of six (every draw) — so a change that loses more than
// chance fails, and one that does not passes. Each shortfall is what
// docs/controller-rewrite.md measures and explains: a level shift (benign-bump,
// flapping latency) is read as a queue until a narrower window leaves the wait
// where it was, and Vegas narrows the window until then (benign-bump's worst
// draw is 0.74 of the oracle).
var shortOf = map[string]goal{
	"seed 1/benign-bump":            {0.90, 0.76}, // 94.6% ± 2.2 a draw, 0.852 ± 0.044
	"seed 1/flapping-latency":       {0.86, 0.73}, // 92.2% ± 5.5, 0.812 ± 0.038
	"six seeds/flapping-latency":    {0.90, 0.78},
	"every draw/benign-bump":        {0.88, 0.73},
	"every draw/flapping-latency":   {0.81, 0.71},
	"AnchorBaseline/slo-breaks":     {0.94, 0.85}, // 95.1% ± 0.5: the same law
	"AnchorBaseline/capacity-drops": {0.90, 0.85}, // 94.0% ± 1.6, 0.945 ± 0.016
}

// want returns the goal for scenario under key, or the figure held instead
// where the law falls short of it.
func want(key, scenario string, g goal) goal {
	if s, ok := shortOf[key+"/"+scenario]; ok {
		return s
	}
	return g
}

// The default configuration (AnchorSLO here; AnchorBaseline runs the same
// law) against the goal on seed 1, the published matrix.
func TestGoalForAnchorSLO(t *testing.T) {
	tab := theMatrix(t)
	for _, sc := range tab.Scenarios {
		c := cell(t, tab, sc.Name, "agile-slo")
		w := want("seed 1", sc.Name, sloGoal)
		t.Logf("%-18s AnchorSLO: %5.1f%% inside (goal 90%%), %.2f of the oracle's goodput (goal 0.80)",
			sc.Name, 100*c.Inside, c.OfOracle)
		if c.Inside < w.inside || c.OfOracle < w.ofOracle {
			t.Errorf("%s: AnchorSLO %.1f%% inside, %.2f of oracle; want ≥ %.0f%% and ≥ %.2f",
				sc.Name, 100*c.Inside, c.OfOracle, 100*w.inside, w.ofOracle)
		}
	}
}

// One seed is one draw of the jitter, and a controller tuned on one draw can
// be lucky. Across seeds 1–6 the goal holds on average in every scenario, and
// no single draw falls below 88% inside or 0.8 of the oracle (where shortOf
// says otherwise, the figure the law reaches today). Seed 1 is the matrix
// the other tests read (Matrix's own seed), so it is not run twice.
func TestGoalAcrossSeeds(t *testing.T) {
	const seeds = 6
	arms := []sim.Arm{sim.Agile("agile-slo", sim.SLOConfig), sim.Oracle()}
	type stat struct{ inside, ofOracle, worstInside, worstOfOracle float64 }
	stats := map[string]*stat{}
	var names []string
	tabs := []sim.Table{theMatrix(t)}
	if sc := tabs[0].Scenarios[0]; sc.Seed != 1 || sc.Phase != sim.PhaseOf(1) {
		t.Fatalf("the matrix is drawn from seed %d at phase %v; want seed 1's draw", sc.Seed, sc.Phase)
	}
	for seed := uint64(2); seed <= seeds; seed++ {
		tabs = append(tabs, sim.RunMatrix(sim.MatrixOf(seed), arms, sim.Bubbles(t)))
	}
	for i, tab := range tabs {
		seed := i + 1
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
			if w := want("every draw", sc.Name, goal{0.88, sloGoal.ofOracle}); c.Inside < w.inside || c.OfOracle < w.ofOracle {
				t.Errorf("%s, seed %d: AnchorSLO %.1f%% inside, %.2f of oracle; want ≥ %.0f%% and ≥ %.2f in every draw",
					sc.Name, seed, 100*c.Inside, c.OfOracle, 100*w.inside, w.ofOracle)
			}
		}
	}
	for _, name := range names {
		st := stats[name]
		t.Logf("%-18s AnchorSLO over %d seeds: mean %5.1f%% inside, %.2f of oracle; worst %5.1f%%, %.2f",
			name, seeds, 100*st.inside, st.ofOracle, 100*st.worstInside, st.worstOfOracle)
		if w := want("six seeds", name, sloGoal); st.inside < w.inside || st.ofOracle < w.ofOracle {
			t.Errorf("%s: AnchorSLO averages %.1f%% inside, %.2f of oracle over %d seeds; want ≥ %.0f%% and ≥ %.2f",
				name, 100*st.inside, st.ofOracle, seeds, 100*w.inside, w.ofOracle)
		}
	}
}

// Under AnchorBaseline (the zero-value anchor, with the scenario's SLO as the
// p99 guard) the goal is stricter: ≥ 95% inside the SLO and ≥ 0.85 of the
// oracle's goodput wherever the latency floor does not move for good.
func TestAnchorBaselineMeetsGoal(t *testing.T) {
	tab := theMatrix(t)
	for _, name := range []string{"steady", "slo-breaks", "capacity-drops", "capacity-recovers", "diurnal", "outage"} {
		c := cell(t, tab, name, "agile-baseline")
		w := want("AnchorBaseline", name, goal{0.95, 0.85})
		t.Logf("%-18s AnchorBaseline: %5.1f%% inside, %.2f of the oracle's goodput", name, 100*c.Inside, c.OfOracle)
		if c.Inside < w.inside || c.OfOracle < w.ofOracle {
			t.Errorf("%s: AnchorBaseline %.1f%% inside, %.2f of oracle; want ≥ %.0f%% and ≥ %.2f", name, 100*c.Inside, c.OfOracle, 100*w.inside, w.ofOracle)
		}
	}
}
