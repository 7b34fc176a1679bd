package eval

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// point is one fixed limit of a sweep: its goodput, inside share and p99
// (the limit answered something unless good is negative).
type point struct {
	good, inside float64
	p99          time.Duration
}

// hindRow is an inbound row with an SLO of 100 ms, the sweep ps and
// failsafe-go's goodput fs (agile's cell gets 1 a second).
func hindRow(name string, fs float64, ps ...point) Row {
	r := Row{Scenario: Scenario{Name: name, SLO: 100 * time.Millisecond}, Cells: []Cell{
		{Result: Result{Goodput: 1, Inside: 1}},
		{Result: Result{Goodput: fs, Inside: 1}},
	}}
	for i, p := range ps {
		res := Result{Goodput: p.good, Inside: p.inside, P99: p.p99, Answered: 1}
		if p.good < 0 {
			res = Result{} // answered nothing: a p99 of zero keeps no SLO
		}
		r.Params = append(r.Params, float64(i+1))
		r.Sweep = append(r.Sweep, res)
	}
	r.judge()
	return r
}

func hindEvaluation(arms ...string) Evaluation {
	ms := time.Millisecond
	ev := Evaluation{Direction: Inbound, Arms: arms, Rows: []Row{
		// The oracle is limit 3 (100); limit 1 keeps the p99 at half of
		// it: not the goal, and under failsafe-go's 60.
		hindRow("in-1", 60, point{50, 1, 80 * ms}, point{90, 0.95, 150 * ms}, point{100, 0.85, 300 * ms}),
		// Limit 2 keeps the p99 at 80 of the oracle's 85, inside 99.5%:
		// the goal, and more than failsafe-go's 70.
		// A processor past a knee, the others FIFO servers.
		hindRow("in-2", 70, point{40, 1, 50 * ms}, point{80, 0.995, 90 * ms}, point{85, 0.9, 200 * ms}),
		// No limit keeps the p99, and one that answered nothing does not
		// count as keeping it.
		hindRow("in-3", 10, point{-1, 0, 0}, point{30, 0.9, 120 * ms}, point{40, 0.8, 400 * ms}),
		// failsafe-go, moving with the run, gets more than any fixed
		// limit.
		hindRow("in-4", 120, point{50, 1, 60 * ms}, point{100, 0.97, 99 * ms}),
	}}
	ev.Rows[1].Scenario.Law = PSKnee
	return ev
}

func TestHindsight(t *testing.T) {
	h := hindEvaluation("agile", "failsafe-go").Hindsight()
	// agile's cells get 1 a second: under failsafe-go everywhere.
	want := Hindsight{Runs: 4, Kept: 3, KeptMet: 2, OracleAtFailsafe: 3, KeptAtFailsafe: 1, AgileKeptAtFailsafe: 0,
		Kinds: []HindKind{{Kind: kindServers, Kept: 2}, {Kind: kindKnee, Kept: 1, AtFailsafe: 1}}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hindsight = %+v; want %+v", h, want)
	}
	// Without failsafe-go, nothing is compared with it; the cells keep
	// their order, the second read as another arm.
	h = hindEvaluation("agile", "other").Hindsight()
	want = Hindsight{Runs: 4, Kept: 3, KeptMet: 2, OracleAtFailsafe: -1, KeptAtFailsafe: -1, AgileKeptAtFailsafe: -1,
		Kinds: []HindKind{{Kind: kindServers, Kept: 2, AtFailsafe: -1, Agile: -1}, {Kind: kindKnee, Kept: 1, AtFailsafe: -1, Agile: -1}}}
	if !reflect.DeepEqual(h, want) {
		t.Errorf("hindsight without failsafe-go = %+v; want %+v", h, want)
	}
}

func TestHindsightWithoutAnSLOKeepsEveryPointThatAnswered(t *testing.T) {
	ev := hindEvaluation("agile", "failsafe-go")
	ev.Rows = ev.Rows[2:3]
	ev.Rows[0].Scenario.SLO = 0
	if p := ev.Rows[0].keptPoint(); p != 2 {
		t.Errorf("kept point without an SLO = %d; want 2, the most goodput of those that answered", p)
	}
}

func TestHindsightInTheLuckReport(t *testing.T) {
	var reps []Report
	for _, d := range []string{"", "/d1"} {
		ev := hindEvaluation("agile", "failsafe-go")
		for i := range ev.Rows {
			ev.Rows[i].Scenario.Name += d
		}
		reps = append(reps, Report{Inbound: ev})
	}
	reps[1].Inbound.Rows[1].Cells[1].Goodput = 90 // in-2/d1: failsafe-go past the oracle too
	reps[0].Inbound.Rows[0].Cells[0].Goodput = 60 // in-1: agile ties failsafe-go where a limit keeps the p99
	reps[0].Inbound.Rows[2].Cells[0].Goodput = 50 // in-3: agile past it where none does, not counted
	l, err := LuckOf(reps)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.HindInbound) != 2 || l.HindInbound[1].KeptAtFailsafe != 0 || l.HindInbound[0].KeptAtFailsafe != 1 {
		t.Errorf("hindsight per draw = %+v; want failsafe-go matched by the p99's limit in 1, then 0", l.HindInbound)
	}
	page := luckPage(l)
	mustSay(t, page,
		"inbound  each run's best fixed limit, chosen on the run: one keeps the p99 inside the SLO in 3, 3 of 4, and the best of those meets the goal in 2, 2; "+
			"at least failsafe-go's goodput: the oracle in 3, 2, the best that keeps the p99 in 1, 0 (agile, in the runs where one keeps it, 1, 0); "+
			"at least failsafe-go's, by kind, of the runs where one keeps it (draws pooled): "+
			"FIFO, 2 servers or more 4 (the best that keeps it 0, agile 1), processor shared past a knee 2 (the best that keeps it 1, agile 0)",
		"| inbound | each run's best fixed limit that keeps the p99, chosen on the run | 2, 2 of 4 |",
		"Inbound, a fixed limit keeps the p99 inside the SLO in 3, 3 of 4 runs draw by draw, and the best of them meets the goal in 2, 2; "+
			"it gets at least failsafe-go's goodput in 1, 0, and the oracle itself in 3, 2; in the runs where such a limit exists, `agile` gets at least failsafe-go's goodput in 1, 0 "+
			"(by kind of resource, over the draws: FIFO, 2 servers or more 4 (the best that keeps it 0, agile 1), processor shared past a knee 2 (the best that keeps it 1, agile 0)).")
	if strings.Contains(page, "outbound each run's") || strings.Contains(page, "Outbound, a fixed share") {
		t.Errorf("report has hindsight for a direction not run:\n%s", page)
	}
}
