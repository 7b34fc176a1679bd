package eval_test

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/eval"
)

// ByKind counts each run once under its resource, once under its trace and
// once under its mix, and the page prints what it counts.
func TestByKind(t *testing.T) {
	row := func(law eval.Law, servers int, kind eval.TraceKind, meets bool, of, agile, failsafe float64) eval.Row {
		return eval.Row{
			Scenario: eval.Scenario{Law: law, Servers: servers, Trace: eval.Trace{Kind: kind}},
			Cells: []eval.Cell{
				{Result: eval.Result{Goodput: agile}, OfOracle: of, Meets: meets},
				{Result: eval.Result{Goodput: failsafe}},
			},
		}
	}
	ev := eval.Evaluation{Direction: eval.Inbound, Arms: []string{"agile", "failsafe-go"}, Rows: []eval.Row{
		row(eval.PSKnee, 0, eval.Flap, true, 0.9, 10, 12),
		row(eval.FIFOExp, 1, eval.Constant, false, 0.5, 5, 4),
		row(eval.FIFOPareto, 4, eval.Flap, true, 1.0, 8, 8),
		row(eval.FIFOLogNormal, 2, eval.Flap, false, 0.7, 3, 9),
	}}
	got := map[string]eval.KindSummary{}
	var order []string
	for _, k := range ev.ByKind("agile") {
		got[k.Kind] = k
		order = append(order, k.Kind)
	}
	want := []eval.KindSummary{
		{Kind: "one FIFO server", N: 1, Meets: 0, OfOracle: 0.5, AtLeastFailsafe: 1},
		{Kind: "FIFO, 2 servers or more", N: 2, Meets: 1, OfOracle: 0.85, AtLeastFailsafe: 1},
		{Kind: "processor shared past a knee", N: 1, Meets: 1, OfOracle: 0.9, AtLeastFailsafe: 0},
		{Kind: "constant", N: 1, Meets: 0, OfOracle: 0.5, AtLeastFailsafe: 1},
		{Kind: "flap", N: 3, Meets: 2, OfOracle: 0.9, AtLeastFailsafe: 1},
		{Kind: "one route", N: 4, Meets: 2, OfOracle: 0.8, AtLeastFailsafe: 2},
	}
	if len(order) != len(want) {
		t.Fatalf("kinds %v; want %d kinds, those with a run", order, len(want))
	}
	for i, w := range want {
		g := got[w.Kind]
		// No row has a sweep: no fixed limit to read depth and motion from.
		if !math.IsNaN(g.Depth) || !math.IsNaN(g.Motion) {
			t.Errorf("kind %d without sweeps: depth %v motion %v; want NaN", i, g.Depth, g.Motion)
		}
		g.Depth, g.Motion = 0, 0
		if order[i] != w.Kind || g != w {
			t.Errorf("kind %d: %+v; want %+v", i, g, w)
		}
	}
	if ks := ev.ByKind("nobody"); ks != nil {
		t.Errorf("ByKind of an arm not run: %v; want nil", ks)
	}
	noFailsafe := eval.Evaluation{Direction: eval.Outbound, Arms: []string{"agile"}, Rows: []eval.Row{
		{Scenario: eval.Scenario{Law: eval.PSKnee}, Cells: []eval.Cell{{OfOracle: 1, Meets: true}}},
	}}
	if ks := noFailsafe.ByKind("agile"); len(ks) != 3 || ks[0].AtLeastFailsafe != -1 {
		t.Errorf("without failsafe-go: %+v; want three kinds, AtLeastFailsafe -1", ks)
	}
	mixed := ev
	mixed.Rows = slices.Clone(ev.Rows)
	mixed.Rows[1].Scenario.Routes = []eval.Route{{Name: "health", Share: 0.5, Cost: 0.01}, {Name: "normal", Share: 0.5, Cost: 1.99}}
	var mixKinds []eval.KindSummary
	for _, k := range mixed.ByKind("agile") {
		if k.Kind == "one route" || k.Kind == "a mix of routes" {
			mixKinds = append(mixKinds, k)
		}
	}
	if len(mixKinds) != 2 || mixKinds[0].N != 3 || mixKinds[1].N != 1 || mixKinds[1].Meets != 0 || mixKinds[1].AtLeastFailsafe != 1 {
		t.Errorf("one run of four with a mix: %+v; want one route 3 runs, a mix 1 run (not meeting, at failsafe-go's goodput)", mixKinds)
	}

	// With a sweep, a kind's depth and motion are its runs' medians: a
	// fixed 2 calls got 10/s, 4 calls 20/s; the arm held 3 on average
	// (15/s as deep) and got 12/s.
	held := func(calls, goodput float64) eval.Result {
		return eval.Result{Mean: 100 * time.Millisecond, Answered: int(calls * 100), Goodput: goodput}
	}
	swept := eval.Evaluation{Direction: eval.Inbound, Arms: []string{"agile"}, Rows: []eval.Row{{
		Scenario: eval.Scenario{Law: eval.PSKnee, Duration: 10 * time.Second},
		Sweep:    []eval.Result{held(2, 10), held(4, 20)},
		Oracle:   held(4, 20),
		Cells:    []eval.Cell{{Result: held(3, 12), OfOracle: 0.6}},
	}}}
	if ks := swept.ByKind("agile"); len(ks) == 0 || math.Abs(ks[0].Depth-0.75) > 1e-9 || math.Abs(ks[0].Motion-0.8) > 1e-9 {
		t.Errorf("with a sweep: %+v; want depth 0.75 and motion 0.8", ks)
	}

	var b strings.Builder
	eval.WriteKindsMarkdown(&b, eval.Pool([]eval.Report{{Inbound: ev}, {Inbound: ev}}), 2)
	page := b.String()
	for _, line := range []string{
		"| flap | 6 | 4 (67%) | 0.90 | — | — | 2 (33%) |",
		"| one FIFO server | 2 | 0 (0%) | 0.50 | — | — | 2 (100%) |",
		"one of the 2 draws",
	} {
		if !strings.Contains(page, line) {
			t.Errorf("the page has no %q:\n%s", line, page)
		}
	}
	if strings.Contains(page, "### Outbound") {
		t.Errorf("the page has an outbound table with no outbound runs:\n%s", page)
	}
}

// CompareByKind pairs the runs of each kind alone: a change that lifts one
// kind and costs another shows both, where the ratio over every scenario
// shows neither.
func TestCompareByKind(t *testing.T) {
	row := func(name string, law eval.Law, servers int, kind eval.TraceKind, of float64, meets bool) eval.Row {
		return eval.Row{
			Scenario: eval.Scenario{Name: name, Law: law, Servers: servers, Trace: eval.Trace{Kind: kind}},
			Cells:    []eval.Cell{{OfOracle: of, Meets: meets}},
		}
	}
	a := eval.Evaluation{Direction: eval.Outbound, Arms: []string{"agile"}, Rows: []eval.Row{
		row("k1", eval.PSKnee, 0, eval.Flap, 0.60, false),
		row("k2", eval.PSKnee, 0, eval.Constant, 0.70, false),
		row("f1", eval.FIFOExp, 1, eval.Flap, 1.00, true),
		row("f2", eval.FIFOPareto, 1, eval.Constant, 0.90, true),
	}}
	b := eval.Evaluation{Direction: eval.Outbound, Arms: []string{"agile"}, Rows: []eval.Row{
		row("k1", eval.PSKnee, 0, eval.Flap, 0.90, true),          // rises, and meets
		row("k2", eval.PSKnee, 0, eval.Constant, 0.84, true),      // rises, and meets
		row("f1", eval.FIFOExp, 1, eval.Flap, 0.50, false),        // falls, and fails
		row("f2", eval.FIFOPareto, 1, eval.Constant, 0.72, false), // falls, and fails
	}}
	if all := eval.Compare(a, b, "agile"); all.Better != 2 || all.Worse != 2 {
		t.Fatalf("over every scenario: %+v; want two better and two worse", all)
	}
	got := eval.CompareByKind(a, b, "agile")
	want := []struct {
		group, kind  string
		n, worse, up int
		ratio        float64
	}{
		{"resource", "one FIFO server", 2, 2, 0, math.Sqrt(0.5 * 0.8)},
		{"resource", "processor shared past a knee", 2, 0, 2, math.Sqrt(1.5 * 1.2)},
		{"trace", "constant", 2, 1, 1, math.Sqrt(1.2 * 0.8)},
		{"trace", "flap", 2, 1, 1, math.Sqrt(1.5 * 0.5)},
		{"mix", "one route", 4, 2, 2, math.Pow(1.5*1.2*0.5*0.8, 0.25)},
	}
	if len(got) != len(want) {
		t.Fatalf("CompareByKind: %+v; want %d kinds, those with a run", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Group != w.group || g.Kind != w.kind || g.N != w.n || g.Worse != w.worse || g.Better != w.up || math.Abs(g.Ratio-w.ratio) > 1e-9 {
			t.Errorf("kind %d: %+v; want %s %s, N %d, worse %d, better %d, ratio %.4f", i, g, w.group, w.kind, w.n, w.worse, w.up, w.ratio)
		}
	}
	if got := eval.CompareByKind(a, b, "nobody"); len(got) != 0 {
		t.Errorf("an arm neither ran: %+v; want no kinds", got)
	}
}

// A run counts under "some fixed limit keeps the p99" when any point of its
// sweep answered with a p99 inside the SLO, under "no fixed limit" when none
// did, and under neither when it has no sweep.
func TestSLOKind(t *testing.T) {
	const slo = 100 * time.Millisecond
	row := func(meets bool, p99s ...time.Duration) eval.Row {
		r := eval.Row{
			Scenario: eval.Scenario{Law: eval.FIFOExp, Servers: 1, SLO: slo},
			Cells:    []eval.Cell{{OfOracle: 1, Meets: meets}},
		}
		for _, p := range p99s {
			r.Sweep = append(r.Sweep, eval.Result{Answered: 10, P99: p})
		}
		return r
	}
	kept, lost, none := row(true, 300*time.Millisecond, slo), row(false, 101*time.Millisecond, time.Second), row(true)
	unanswered := row(false, 300*time.Millisecond)
	unanswered.Sweep = append(unanswered.Sweep, eval.Result{P99: 0}) // nothing reached the resource
	for _, c := range []struct {
		r    eval.Row
		want string
	}{
		{kept, "some fixed limit keeps the p99 inside the SLO"},
		{lost, "no fixed limit keeps the p99 inside the SLO"},
		{unanswered, "no fixed limit keeps the p99 inside the SLO"},
		{none, ""},
	} {
		if got := eval.SLOKind(&c.r); got != c.want {
			t.Errorf("SLOKind of a sweep %v: %q; want %q", c.r.Sweep, got, c.want)
		}
	}
	ev := eval.Evaluation{Direction: eval.Inbound, Arms: []string{"agile"}, Rows: []eval.Row{kept, lost, lost, none}}
	got := map[string]eval.KindSummary{}
	for _, k := range ev.ByKind("agile") {
		got[k.Kind] = k
	}
	if k := got["some fixed limit keeps the p99 inside the SLO"]; k.N != 1 || k.Meets != 1 {
		t.Errorf("kept: %+v; want 1 run, 1 meeting the goal", k)
	}
	if k := got["no fixed limit keeps the p99 inside the SLO"]; k.N != 2 || k.Meets != 0 {
		t.Errorf("lost: %+v; want 2 runs, none meeting the goal", k)
	}
	if k := got["one FIFO server"]; k.N != 4 {
		t.Errorf("by resource: %+v; want all 4 runs, the sweepless one too", k)
	}
}

// Without a sweep there is no fixed policy to read depth and motion from:
// the summary holds NaN and the page and the text print a dash, not 0.00.
func TestDepthWithoutSweepsIsADash(t *testing.T) {
	ev := eval.Evaluation{Direction: eval.Inbound, Arms: []string{"agile"}, Rows: []eval.Row{{
		Scenario: eval.Scenario{Name: "in-1", Law: eval.FIFOExp, Servers: 1},
		Cells:    []eval.Cell{{Result: eval.Result{Goodput: 5, Inside: 0.95}, OfOracle: 0.9, Meets: true}},
		Oracle:   eval.Result{Goodput: 5.5, Inside: 0.96},
	}}}
	s := ev.Summarize()
	if len(s) != 1 || !math.IsNaN(s[0].Depth.Median) || !math.IsNaN(s[0].Motion.Worst) {
		t.Fatalf("summary without sweeps: %+v; want depth and motion NaN", s)
	}
	var page, text strings.Builder
	eval.WriteMarkdown(&page, "test", eval.Report{Inbound: ev}, eval.Report{})
	eval.WriteText(&text, eval.Report{Inbound: ev}.Summarize())
	if !strings.Contains(page.String(), "| inbound | agile | — | — | — | — | — | — |") {
		t.Errorf("the page's depth and motion without sweeps:\n%s", page.String())
	}
	if !strings.Contains(text.String(), "depth     median — p10 — worst — | motion median — p10 — worst —") {
		t.Errorf("the text's depth and motion without sweeps:\n%s", text.String())
	}
}
