package report_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/report"
	"github.com/agilelimiter/agilelimiter/compare/sim"
)

func smallTable(t *testing.T) sim.Table {
	sc := sim.Matrix()[0]
	sc.Duration = 2 * time.Second
	return sim.RunMatrix([]sim.Scenario{sc}, []sim.Arm{sim.Uber(100), sim.Oracle()}, func(f func()) {
		synctest.Test(t, func(*testing.T) { f() })
	})
}

func TestMarkdownHasEveryArmAndScenario(t *testing.T) {
	tab := smallTable(t)
	var b bytes.Buffer
	report.Markdown(&b, tab, func(s string) string { return s + ".svg" })
	md := b.String()
	for _, want := range []string{"| uber-100 |", "| oracle |", "## steady", "![steady](steady.svg)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

func TestSVGIsWellFormed(t *testing.T) {
	tab := smallTable(t)
	var b bytes.Buffer
	report.SVG(&b, tab.Scenarios[0], tab.Cells[0])
	d := xml.NewDecoder(&b)
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	// capacity, SLO, and a pace and a p99 line per arm
	if want := 2 + 2*len(tab.Arms); polylines != want {
		t.Errorf("%d polylines, want %d", polylines, want)
	}
}
