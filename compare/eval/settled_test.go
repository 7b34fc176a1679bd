package eval

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// The settled figures count the calls offered from a quarter into the run
// on: answered inside the SLO, answered past it, refused; not the calls the
// arm limited, nor those the run ended on.
func TestSettledCountsTheCallsOfferedAfterTheFirstQuarter(t *testing.T) {
	sc := &Scenario{Name: "in-0", Direction: Inbound, Duration: 20 * time.Second, SLO: 100 * time.Millisecond}
	if got := SettledFrom(sc); got != 5*time.Second {
		t.Fatalf("SettledFrom of a 20 s run = %v, want 5s", got)
	}
	ms := time.Millisecond
	recs := []*record{
		{at: time.Second, st: answered, d: 10 * ms},                // before: counts in the whole run only
		{at: 5*time.Second - time.Nanosecond, st: answered, d: ms}, // before, by a nanosecond
		{at: 5 * time.Second, st: answered, d: 10 * ms},            // the first settled call, inside
		{at: 6 * time.Second, st: answered, d: 200 * ms},           // past the SLO
		{at: 7 * time.Second, st: refused},                         // refused by the resource
		{at: 8 * time.Second, st: timedOut, d: time.Second},        // timed out
		{at: 9 * time.Second, st: limited},                         // the arm's refusal: not sent
		{at: 19 * time.Second, st: unfinished},                     // nowhere
	}
	r := summarize(sc, "arm", recs)
	if r.Good != 3 || r.Sent != 6 {
		t.Fatalf("whole run: good %d of %d sent, want 3 of 6", r.Good, r.Sent)
	}
	if r.SettledFrom != 5*time.Second || r.SettledGood != 1 || r.SettledSent != 4 {
		t.Errorf("settled from %v: good %d of %d sent, want from 5s, 1 of 4", r.SettledFrom, r.SettledGood, r.SettledSent)
	}
	if got, want := r.SettledGoodput(sc), 1.0/15; math.Abs(got-want) > 1e-12 {
		t.Errorf("settled goodput %v/s, want %v/s (one good answer over the 15 s after the first quarter)", got, want)
	}
	if got := r.SettledInside(); got != 0.25 {
		t.Errorf("settled inside %v, want 0.25", got)
	}
}

// A sweep cached before the settled figures were counted is run again: its
// settled goodput would read as nothing got through, and every arm would
// meet the settled goal against it.
func TestSweepsCachedBeforeTheSettledFiguresAreStale(t *testing.T) {
	sc := &Scenario{Name: "in-0", About: "a scenario", Duration: 20 * time.Second}
	sw := Sweeps{}
	sw[sw.key(sc)] = []Result{{Sent: 10}, {Sent: 20}}
	if got := sw.fresh(sc, 2); got != nil {
		t.Errorf("a sweep without settled figures was taken from the cache")
	}
	sw[sw.key(sc)] = []Result{{Sent: 10, SettledFrom: SettledFrom(sc)}, {Sent: 20, SettledFrom: SettledFrom(sc)}}
	if got := sw.fresh(sc, 2); len(got) != 2 {
		t.Errorf("a sweep with today's figures was not taken from the cache")
	}
	if got := sw.fresh(sc, 3); got != nil {
		t.Errorf("a sweep of 2 points was taken for a sweep of 3")
	}
}

// The settled figures leave the start out. Training in-29, a processor with
// a knee of 49 and a MaxLimit of 351 behind 176 closed-loop clients: the
// law's start (175 calls at once) costs it goodput that the same law started
// at the pipe keeps; once a quarter of the run has passed, the two get nearly
// the same. (Until the fifty-fourth session the example was in-11, a knee of
// 10 under a mix; since the probe keeps up to three quarters of the window,
// in-11 started at the pipe settles 18% higher than from the law's start: a
// start whose cost lasts, which the settled figures rightly keep.)
func TestSettledFiguresLeaveTheStartOut(t *testing.T) {
	sc := Generate(Inbound, 29)
	var law, known Result
	synctest.Test(t, func(*testing.T) { law = RunInbound(&sc, AgileInbound()) })
	synctest.Test(t, func(*testing.T) { known = RunInbound(&sc, KnownStart()) })
	whole := known.Goodput/law.Goodput - 1
	settled := known.SettledGoodput(&sc)/law.SettledGoodput(&sc) - 1
	t.Logf("%s: started at the pipe against the law's start, goodput ×%.3f over the whole run, ×%.3f settled", sc.Name, 1+whole, 1+settled)
	if whole <= 0 {
		t.Fatalf("%s: the pipe's start gets ×%.3f of the law's goodput: the scenario no longer shows what a start costs", sc.Name, 1+whole)
	}
	if math.Abs(settled) >= whole/2 {
		t.Errorf("%s: settled, the two starts differ by %.1f%%, over the whole run by %.1f%%: want the settled figures to leave most of the start out",
			sc.Name, 100*settled, 100*whole)
	}
}

// Settled counts each arm's runs by kind of resource and in all: meeting
// the goal and at failsafe-go's goodput, over the whole run and settled.
func TestSettledByKind(t *testing.T) {
	fifo := Scenario{Law: FIFOExp, Servers: 1, Duration: 20 * time.Second}
	ps := Scenario{Law: PSKnee, Servers: 1, Knee: 4, Duration: 20 * time.Second}
	cell := func(good, settledGood int, meets, settledMeets bool) Cell {
		return Cell{Result: Result{Goodput: float64(good), SettledGood: settledGood}, Meets: meets, SettledMeets: settledMeets}
	}
	ev := Evaluation{Direction: Inbound, Arms: []string{"agile", failsafeArm}, Rows: []Row{
		// agile misses the whole run, meets settled; at failsafe-go's goodput settled only.
		{Scenario: fifo, Cells: []Cell{cell(5, 30, false, true), cell(6, 30, true, true)}},
		// agile meets both; ahead of failsafe-go over the whole run, behind it settled.
		{Scenario: fifo, Cells: []Cell{cell(9, 10, true, true), cell(8, 11, false, false)}},
		// a processor: agile misses both, ahead both times.
		{Scenario: ps, Cells: []Cell{cell(7, 70, false, false), cell(3, 20, false, false)}},
	}}
	got := ev.Settled()
	want := []SettledArm{
		{"agile", []SettledKind{
			{kindOneServer, 2, 1, 2, 1, 1},
			{kindKnee, 1, 0, 0, 1, 1},
			{kindAll, 3, 1, 2, 2, 2},
		}},
		{failsafeArm, []SettledKind{
			{kindOneServer, 2, 1, 1, -1, -1},
			{kindKnee, 1, 0, 0, -1, -1},
			{kindAll, 3, 1, 1, -1, -1},
		}},
	}
	if len(got) != len(want) {
		t.Fatalf("Settled gave %d arms, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Arm != want[i].Arm || len(got[i].Kinds) != len(want[i].Kinds) {
			t.Fatalf("arm %d: %+v, want %+v", i, got[i], want[i])
		}
		for k := range want[i].Kinds {
			if got[i].Kinds[k] != want[i].Kinds[k] {
				t.Errorf("%s, %s: %+v, want %+v", want[i].Arm, want[i].Kinds[k].Kind, got[i].Kinds[k], want[i].Kinds[k])
			}
		}
	}
}
