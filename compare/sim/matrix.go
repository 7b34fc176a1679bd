package sim

import (
	"fmt"
	"io"
	"time"
)

// Cell is one arm's result in one scenario, with its goodput as a share of
// the oracle's in the same scenario.
type Cell struct {
	Result
	// OfOracle is Goodput divided by the oracle's goodput (0 when the oracle
	// had none).
	OfOracle float64
}

// Table is a matrix of results: one row per scenario, one cell per arm, in
// the order of the arms given to RunMatrix.
type Table struct {
	Scenarios []Scenario
	Arms      []string
	Cells     [][]Cell // [scenario][arm]
}

// RunSeeds runs the matrix (Matrix) once per seed from 1 to seeds, every
// scenario's jitter and Phase drawn from that seed, and returns one Table per seed. One
// seed is one draw: a figure that differs between two laws on one seed by
// less than its spread over seeds says nothing (see compare/cmd/matrix
// -seeds).
func RunSeeds(seeds int, arms []Arm, run func(func())) []Table {
	var tabs []Table
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		scs := Matrix()
		for i := range scs {
			scs[i].Seed, scs[i].Phase = seed, PhaseOf(seed)
		}
		tabs = append(tabs, RunMatrix(scs, arms, run))
	}
	return tabs
}

// RunMatrix runs every arm in every scenario, calling run for each cell; run
// must execute its function inside a fresh synctest bubble (see Run). The
// oracle must be among the arms for OfOracle to be filled in.
func RunMatrix(scenarios []Scenario, arms []Arm, run func(func())) Table {
	t := Table{Scenarios: scenarios}
	for _, a := range arms {
		t.Arms = append(t.Arms, a.Name)
	}
	for _, sc := range scenarios {
		row := make([]Cell, len(arms))
		oracle := 0.0
		for i, a := range arms {
			run(func() { row[i].Result = Run(sc, a) })
			if a.Name == "oracle" {
				oracle = row[i].Goodput
			}
		}
		for i := range row {
			if oracle > 0 {
				row[i].OfOracle = row[i].Goodput / oracle
			}
		}
		t.Cells = append(t.Cells, row)
	}
	return t
}

// Cell returns the cell of the named scenario and arm, or false.
func (t Table) Cell(scenario, arm string) (Cell, bool) {
	for i, sc := range t.Scenarios {
		if sc.Name != scenario {
			continue
		}
		for j, a := range t.Arms {
			if a == arm {
				return t.Cells[i][j], true
			}
		}
	}
	return Cell{}, false
}

// WriteText writes the table as aligned text, one line per cell.
func (t Table) WriteText(w io.Writer) {
	for i, sc := range t.Scenarios {
		for _, c := range t.Cells[i] {
			fmt.Fprintf(w, "%-18s %-15s goodput %6.1f/s (%4.2f of oracle)  inside %5.1f%%  mean %6v  p99 %6v  wasted %5.1f%%\n",
				sc.Name, c.Arm, c.Goodput, c.OfOracle, 100*c.Inside,
				c.Mean.Round(time.Millisecond), c.P99.Round(time.Millisecond), 100*c.Wasted)
		}
	}
}
