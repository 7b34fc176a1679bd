package sim

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"
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

// Runner runs every job, each inside a fresh synctest bubble, and returns
// when all have ended. Jobs write only their own results, so a Runner may run
// them in any order and at once.
type Runner func(jobs []func())

// Bubbles returns a Runner that runs every job as a parallel subtest of t in
// a fresh bubble: as many at once as -test.parallel allows (GOMAXPROCS by
// default).
func Bubbles(t *testing.T) Runner {
	return func(jobs []func()) {
		t.Run("bubbles", func(t *testing.T) {
			for i, job := range jobs {
				t.Run(strconv.Itoa(i), func(t *testing.T) {
					t.Parallel()
					synctest.Test(t, func(*testing.T) { job() })
				})
			}
		})
	}
}

// RunSeeds runs the matrix (Matrix) once per seed from 1 to seeds, every
// scenario's jitter and Phase drawn from that seed, and returns one Table per seed. One
// seed is one draw: a figure that differs between two laws on one seed by
// less than its spread over seeds says nothing (see compare/cmd/matrix
// -seeds). Every cell of every seed is one job of a single call to run.
func RunSeeds(seeds int, arms []Arm, run Runner) []Table {
	tabs := make([]Table, seeds)
	var jobs []func()
	for i := range tabs {
		tabs[i] = newTable(MatrixOf(uint64(i+1)), arms, &jobs)
	}
	run(jobs)
	for i := range tabs {
		tabs[i].judge()
	}
	return tabs
}

// MatrixOf returns the matrix (Matrix) with every scenario's jitter and
// Phase drawn from seed: the scenarios RunSeeds runs for that seed.
func MatrixOf(seed uint64) []Scenario {
	scs := Matrix()
	for i := range scs {
		scs[i].Seed, scs[i].Phase = seed, PhaseOf(seed)
	}
	return scs
}

// RunMatrix runs every arm in every scenario, each cell one job of run. The
// oracle must be among the arms for OfOracle to be filled in.
func RunMatrix(scenarios []Scenario, arms []Arm, run Runner) Table {
	var jobs []func()
	t := newTable(scenarios, arms, &jobs)
	run(jobs)
	t.judge()
	return t
}

// newTable returns the table of scenarios × arms with its cells empty, and
// adds to jobs the runs that fill them.
func newTable(scenarios []Scenario, arms []Arm, jobs *[]func()) Table {
	t := Table{Scenarios: scenarios, Cells: make([][]Cell, len(scenarios))}
	for _, a := range arms {
		t.Arms = append(t.Arms, a.Name)
	}
	for i, sc := range scenarios {
		row := make([]Cell, len(arms))
		for j, a := range arms {
			*jobs = append(*jobs, func() { row[j].Result = Run(sc, a) })
		}
		t.Cells[i] = row
	}
	return t
}

// judge fills in every cell's OfOracle from its row's oracle cell.
func (t Table) judge() {
	o := slices.Index(t.Arms, "oracle")
	if o < 0 {
		return
	}
	for _, row := range t.Cells {
		if oracle := row[o].Goodput; oracle > 0 {
			for i := range row {
				row[i].OfOracle = row[i].Goodput / oracle
			}
		}
	}
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
