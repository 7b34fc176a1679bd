package main

import (
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/eval"
)

func TestVariantSplitsRulesFromThresholds(t *testing.T) {
	for _, c := range []struct{ entry, off, knobs, label string }{
		{"gate", "gate", "", "no gate"},
		{"alpha=2", "", "alpha=2", "alpha=2"},
		{"gate+floor-probe+alpha=2+gain=1.35", "gate,floor-probe", "alpha=2,gain=1.35", "no gate+no floor-probe+alpha=2+gain=1.35"},
	} {
		off, knobs, label := variant(c.entry)
		if off != c.off || knobs != c.knobs || label != c.label {
			t.Errorf("variant(%q) = %q, %q, %q; want %q, %q, %q", c.entry, off, knobs, label, c.off, c.knobs, c.label)
		}
	}
}

// Each direction that ran gets a line by resource, one by trace and one by
// mix, every kind with its ratio and its scenarios that fell and rose.
func TestPairsByKind(t *testing.T) {
	row := func(name string, law eval.Law, of float64) eval.Row {
		return eval.Row{
			Scenario: eval.Scenario{Name: name, Law: law, Servers: 2, Trace: eval.Trace{Kind: eval.Constant}},
			Cells:    []eval.Cell{{OfOracle: of, Meets: of >= 0.8}},
		}
	}
	ev := func(rows ...eval.Row) eval.Evaluation {
		return eval.Evaluation{Direction: eval.Outbound, Arms: []string{"agile"}, Rows: rows}
	}
	base := eval.Report{Outbound: ev(row("a", eval.PSKnee, 0.60), row("b", eval.FIFOExp, 1.00))}
	rep := eval.Report{Outbound: ev(row("a", eval.PSKnee, 0.90), row("b", eval.FIFOExp, 1.00))}
	want := "    outbound by resource: FIFO, 2 servers or more ×1.000 −0/+0 of 1 · processor shared past a knee ×1.500 −0/+1 of 1\n" +
		"    outbound by trace: constant ×1.225 −0/+1 of 2\n" +
		"    outbound by mix: one route ×1.225 −0/+1 of 2\n"
	if got := pairsByKind(base, rep); got != want {
		t.Errorf("pairsByKind:\n%s\nwant:\n%s", got, want)
	}
	if got := pairsByKind(eval.Report{}, eval.Report{}); got != "" {
		t.Errorf("no runs: %q; want nothing", got)
	}
}
