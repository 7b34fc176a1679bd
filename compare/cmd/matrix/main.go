// Command matrix runs the comparison matrix of compare/sim on virtual time and
// writes docs/compare/matrix.md and one SVG chart per scenario. Run it from
// the repository root:
//
//	go run ./compare/cmd/matrix
//
// With -seeds N it writes nothing, and prints instead how the default
// configuration (AnchorSLO) does in each scenario over seeds 1 to N: the
// mean share inside the SLO and of the oracle's goodput, their standard
// errors, and the worst draw. One seed is one draw of the jitter, and the
// matrix's scenarios run at windows of a few calls: a change to the law
// moves one draw by a few points either way, and only the mean over many
// draws tells a change from that noise (30 seeds take about ten seconds).
//
// The simulator runs inside testing/synctest bubbles, which exist only under a
// *testing.T, so the matrix runs as the single test of a testing.Main (see
// cmdmain.Run); the whole matrix takes a few seconds of real time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/internal/cmdmain"
	"github.com/agilelimiter/agilelimiter/compare/report"
	"github.com/agilelimiter/agilelimiter/compare/sim"
)

func main() {
	out := flag.String("out", filepath.Join("docs", "compare"), "directory to write matrix.md and the charts to")
	seeds := flag.Int("seeds", 0, "if > 0, print the default configuration's figures over seeds 1 to seeds instead of writing anything")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./compare/cmd/matrix [-out dir] [-seeds n]\n\n"+
			"Runs the comparison matrix of compare/sim on virtual time and writes matrix.md\n"+
			"and one SVG chart per scenario, or with -seeds prints figures over seeds.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}

	cmdmain.Run("matrix", func(t *testing.T) error {
		if *seeds > 0 {
			overSeeds(t, *seeds)
			return nil
		}
		return write(t, *out)
	})
}

// overSeeds prints AnchorSLO's figures in each scenario over seeds 1 to n.
func overSeeds(t *testing.T, n int) {
	arms := []sim.Arm{sim.Agile("agile-slo", sim.SLOConfig), sim.Oracle()}
	var names []string
	in, of := map[string][]float64{}, map[string][]float64{}
	tabs := sim.RunSeeds(n, arms, sim.Bubbles(t))
	for _, tab := range tabs {
		for _, sc := range tab.Scenarios {
			c, _ := tab.Cell(sc.Name, "agile-slo")
			if _, ok := in[sc.Name]; !ok {
				names = append(names, sc.Name)
			}
			in[sc.Name] = append(in[sc.Name], c.Inside)
			of[sc.Name] = append(of[sc.Name], c.OfOracle)
		}
	}
	fmt.Printf("AnchorSLO over seeds 1–%d: mean ± standard error (worst draw)\n", n)
	for _, name := range names {
		mi, si, wi := spread(in[name])
		mo, so, wo := spread(of[name])
		fmt.Printf("%-18s inside %5.1f%% ± %.1f (%5.1f%%)   of the oracle %.3f ± %.3f (%.2f)\n",
			name, 100*mi, 100*si, 100*wi, mo, so, wo)
	}
}

// spread returns the mean of xs, its standard error and the least of xs.
func spread(xs []float64) (mean, se, least float64) {
	least = math.Inf(1)
	for _, x := range xs {
		mean += x / float64(len(xs))
		least = math.Min(least, x)
	}
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - mean) * (x - mean)
		}
		se = math.Sqrt(ss / float64(len(xs)-1) / float64(len(xs)))
	}
	return mean, se, least
}

func write(t *testing.T, dir string) error {
	tab := sim.RunMatrix(sim.Matrix(), sim.Arms(), sim.Bubbles(t))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	chart := func(name string) string { return name + ".svg" }
	var md bytes.Buffer
	report.Markdown(&md, tab, chart)
	if err := os.WriteFile(filepath.Join(dir, "matrix.md"), md.Bytes(), 0o644); err != nil {
		return err
	}
	for i, sc := range tab.Scenarios {
		var svg bytes.Buffer
		report.SVG(&svg, sc, tab.Cells[i])
		if err := os.WriteFile(filepath.Join(dir, chart(sc.Name)), svg.Bytes(), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "matrix: wrote %s and %d charts\n", filepath.Join(dir, "matrix.md"), len(tab.Scenarios))
	return nil
}
