package eval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/eval"
)

var update = flag.Bool("update", false, "run the quick set's oracle sweeps afresh and write them to "+quickSweepsFile)

// quickSeeds are the validation scenarios the quick test runs: cheap ones
// (a few thousand calls each) that span the laws and traces. They are
// validation seeds on purpose: tune on training, check here.
var quickSeeds = struct{ outbound, inbound []uint64 }{
	// flap, outage, constant M/M/1, diurnal, step up, slow bursts, flap M/M/1
	outbound: []uint64{1002, 1004, 1006, 1017, 1020, 1023, 1036},
	// outage, level shift, diurnal, ramp up, slow bursts, ramp down, and
	// processor sharing under a flap
	inbound: []uint64{1010, 1016, 1020, 1021, 1023, 1029, 1018},
}

func quick() []eval.Scenario {
	var scs []eval.Scenario
	for _, s := range quickSeeds.outbound {
		scs = append(scs, eval.Generate(eval.Outbound, s))
	}
	for _, s := range quickSeeds.inbound {
		scs = append(scs, eval.Generate(eval.Inbound, s))
	}
	for _, sc := range eval.Named() {
		if sc.Name == "outbound-drop" { // the inbound knee costs seconds a run
			scs = append(scs, sc)
		}
	}
	return scs
}

// quickSweepsFile holds the quick set's oracle sweeps, stamped with the
// simulator's sources. The sweeps do not depend on the limiter and are three
// quarters of the quick set's work (nine tenths under -race), so the test
// reads them rather than running them on every change to the law.
const quickSweepsFile = "testdata/quick-sweeps.json"

// sweepAgain is what a stale or missing quickSweepsFile asks for.
const sweepAgain = "sweep again with go test ./compare/eval -run TestQuickValidation -update"

// simulator lists the directories whose Go sources make a sweep's runs:
// the scenarios, the dependency and its clock, the oracle's arms, and the
// FIFO they queue on.
var simulator = []string{".", "../sim", "../../core/agiletest"}

type stampedSweeps struct {
	// Stamp is the SHA-256 of the simulator's sources the sweeps ran on.
	Stamp  string
	Sweeps eval.Sweeps
}

// simulatorStamp hashes the simulator's non-test Go sources, named and in
// order: any change to them stamps a sweep file made before it as stale.
func simulatorStamp(t *testing.T) string {
	t.Helper()
	h := sha256.New()
	for _, dir := range simulator {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("the simulator's sources in %s: %v (%d files)", dir, err, len(files))
		}
		slices.Sort(files)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write([]byte(filepath.ToSlash(f) + "\x00"))
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// quickSweeps returns the quick set's oracle sweeps from quickSweepsFile,
// which must have been made from today's simulator; with -update it runs
// them afresh and writes the file.
func quickSweeps(t *testing.T) eval.Sweeps {
	t.Helper()
	stamp := simulatorStamp(t)
	if *update {
		sw := eval.Sweeps{}
		eval.EvaluateWith(quick(), eval.Arms{}, eval.Bubbles(t), sw) // no arm: the sweeps alone
		b, err := json.MarshalIndent(stampedSweeps{stamp, sw}, "", "\t")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(quickSweepsFile, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return sw
	}
	b, err := os.ReadFile(quickSweepsFile)
	if err != nil {
		t.Fatalf("%v: %s", err, sweepAgain)
	}
	var f stampedSweeps
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", quickSweepsFile, err)
	}
	if f.Stamp != stamp {
		t.Fatalf("%s was swept on other sources of the simulator (%s): %s", quickSweepsFile, strings.Join(simulator, ", "), sweepAgain)
	}
	for _, sc := range quick() {
		if !f.Sweeps.Has(&sc) {
			t.Fatalf("%s has no sweep of %s: %s", quickSweepsFile, sc.Name, sweepAgain)
		}
	}
	return f.Sweeps
}

// floor is what an arm must keep on the quick set: a regression guard.
type floor struct {
	dir            eval.Direction
	arm            string
	medianOfOracle float64
	worstInside    float64
	meets          int
}

func TestQuickValidation(t *testing.T) {
	rep := eval.EvaluateWith(quick(), eval.DefaultArms(), eval.Bubbles(t), quickSweeps(t))
	var b strings.Builder
	eval.WriteRows(&b, rep)
	eval.WriteText(&b, rep.Summarize())
	t.Log("\n" + b.String())

	s := rep.Summarize()
	for _, f := range floors {
		a, ok := s.Arm(f.dir, f.arm)
		if !ok {
			t.Fatalf("no %s arm %s", f.dir, f.arm)
		}
		if a.OfOracle.Median < f.medianOfOracle {
			t.Errorf("%s %s: median goodput %.2f of the oracle's, below the floor %.2f", f.dir, f.arm, a.OfOracle.Median, f.medianOfOracle)
		}
		if a.Inside.Worst < f.worstInside {
			t.Errorf("%s %s: worst inside %.1f%%, below the floor %.0f%%", f.dir, f.arm, 100*a.Inside.Worst, 100*f.worstInside)
		}
		if a.Meets < f.meets {
			t.Errorf("%s %s: meets the goal in %d of %d, below the floor %d", f.dir, f.arm, a.Meets, a.N, f.meets)
		}
	}
	// The comparison itself must discriminate: a static limit at the initial
	// capacity loses to the oracle when capacity moves.
	if x, _ := s.Arm(eval.Outbound, "xrate"); x.OfOracle.Median > 0.9 {
		t.Errorf("xrate at %.2f of the oracle: the oracle should beat a static limit", x.OfOracle.Median)
	}
}

// The summary of a report is what the page prints.
func TestReportWritesEveryRow(t *testing.T) {
	rep := eval.Evaluate([]eval.Scenario{eval.Generate(eval.Outbound, 1006), eval.Generate(eval.Inbound, 1021)}, eval.DefaultArms(), eval.Bubbles(t))
	var b strings.Builder
	eval.WriteMarkdown(&b, "validation", rep, eval.Report{})
	page := b.String()
	for _, want := range []string{"out-1006", "in-1021", "agile-slo", "failsafe-go", "| agile |", "meets the goal"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	s := rep.Summarize()
	if len(s.Outbound) != 3 || len(s.Inbound) != 2 || s.AgileAtLeastFailsafe != 0 && s.AgileAtLeastFailsafe != 1 {
		t.Errorf("summary of one scenario a direction: %+v", s)
	}
	// Every inbound arm but failsafe-go carries the parity count; agile's is
	// the one the summary's share is made of.
	for _, a := range s.Inbound {
		want := -1
		if a.Arm == "agile" {
			want = int(s.AgileAtLeastFailsafe)
		}
		if a.AtLeastFailsafe != want {
			t.Errorf("%s: at least failsafe-go's goodput in %d scenarios, want %d", a.Arm, a.AtLeastFailsafe, want)
		}
	}
	for _, a := range s.Outbound {
		if a.AtLeastFailsafe != -1 {
			t.Errorf("outbound %s: a parity count of %d, want -1", a.Arm, a.AtLeastFailsafe)
		}
	}
	// Depth and motion split each arm's share of the oracle, and the page
	// shows them.
	for _, a := range append(s.Outbound, s.Inbound...) {
		if got := a.Depth.Median * a.Motion.Median; math.Abs(got-a.OfOracle.Median) > 1e-9 {
			t.Errorf("%s: depth %v × motion %v = %v, of oracle %v", a.Arm, a.Depth.Median, a.Motion.Median, got, a.OfOracle.Median)
		}
	}
	if !strings.Contains(page, "## Depth and motion") {
		t.Errorf("the page has no depth and motion")
	}
}

// A sweep taken from the cache judges an arm exactly as the sweep run afresh
// does, and the cache holds every scenario's sweep after one evaluation.
func TestSweepsCache(t *testing.T) {
	scs := []eval.Scenario{eval.Generate(eval.Outbound, quickSeeds.outbound[0]), eval.Generate(eval.Inbound, quickSeeds.inbound[0])}
	arms, unknown := eval.DefaultArms().Only("agile", "nobody")
	if len(unknown) != 1 || unknown[0] != "nobody" || len(arms.Outbound) != 1 || len(arms.Inbound) != 1 {
		t.Fatalf("Only(agile, nobody): %d outbound, %d inbound arms, unknown %v", len(arms.Outbound), len(arms.Inbound), unknown)
	}
	sw := eval.Sweeps{}
	fresh := eval.EvaluateWith(scs, arms, eval.Bubbles(t), sw)
	if len(sw) != len(scs) {
		t.Fatalf("the cache holds %d sweeps after evaluating %d scenarios", len(sw), len(scs))
	}
	cached := eval.EvaluateWith(scs, arms, eval.Bubbles(t), sw)
	for _, pair := range [][2]eval.Evaluation{{fresh.Outbound, cached.Outbound}, {fresh.Inbound, cached.Inbound}} {
		a, b := pair[0].Rows[0], pair[1].Rows[0]
		if a.Oracle != b.Oracle || a.Param != b.Param || a.Cells[0] != b.Cells[0] {
			t.Errorf("%s: fresh sweep %v at %v, cell %+v; cached %v at %v, cell %+v",
				a.Scenario.Name, a.Oracle.Goodput, a.Param, a.Cells[0], b.Oracle.Goodput, b.Param, b.Cells[0])
		}
	}
}
