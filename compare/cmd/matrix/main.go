// Command matrix runs the comparison matrix of compare/sim on virtual time and
// writes docs/compare/matrix.md and one SVG chart per scenario. Run it from
// the repository root:
//
//	go run ./compare/cmd/matrix
//
// The simulator runs inside testing/synctest bubbles, which exist only under a
// *testing.T, so the matrix runs as the single test of a testing.Main; the
// whole matrix takes a few seconds of real time.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"

	"github.com/agilelimiter/agilelimiter/compare/report"
	"github.com/agilelimiter/agilelimiter/compare/sim"
)

func main() {
	testing.Init()
	out := flag.String("out", filepath.Join("docs", "compare"), "directory to write matrix.md and the charts to")
	flag.Parse()

	testing.Main(func(string, string) (bool, error) { return true, nil },
		[]testing.InternalTest{{Name: "Matrix", F: func(t *testing.T) {
			if err := write(t, *out); err != nil {
				t.Fatal(err)
			}
		}}}, nil, nil)
}

func write(t *testing.T, dir string) error {
	tab := sim.RunMatrix(sim.Matrix(), sim.Arms(), func(f func()) {
		synctest.Test(t, func(*testing.T) { f() })
	})
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
