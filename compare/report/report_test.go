package report_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/report"
	"github.com/agilelimiter/agilelimiter/compare/sim"
)

func smallTable(t *testing.T) sim.Table {
	sc := sim.Matrix()[0]
	sc.Duration = 2 * time.Second
	return sim.RunMatrix([]sim.Scenario{sc}, []sim.Arm{sim.Uber(100), sim.Oracle()}, sim.Bubbles(t))
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

// chart is what a test reads of an SVG: the text of every text element and
// the stroke of every polyline, in order.
type chart struct {
	texts   []string
	strokes []string
}

func (c chart) hasText(s string) bool { return slices.Contains(c.texts, s) }

func parse(t *testing.T, svg []byte) chart {
	t.Helper()
	var c chart
	d := xml.NewDecoder(bytes.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return c
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
			if tok.Name.Local == "polyline" {
				for _, a := range tok.Attr {
					if a.Name.Local == "stroke" {
						c.strokes = append(c.strokes, a.Value)
					}
				}
			}
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				c.texts = append(c.texts, strings.TrimSpace(string(tok)))
			}
		}
	}
}

// scenario is a 2 s run with a 100 ms SLO and a 1 s timeout, sampled every
// 250 ms.
func scenario() sim.Scenario {
	return sim.Scenario{Name: "test", About: "a made-up run", Duration: 2 * time.Second, SLO: 100 * time.Millisecond, Timeout: time.Second}
}

// cell returns an arm's cell whose every step sent sent req/s (capacity 150)
// with the given p99s, one per 250 ms.
func cell(arm string, sent float64, p99 ...time.Duration) sim.Cell {
	var c sim.Cell
	c.Arm = arm
	for i, d := range p99 {
		c.Series = append(c.Series, sim.Point{T: time.Duration(i) * sim.SeriesStep, Sent: sent, Capacity: 150, P99: d})
	}
	return c
}

func render(t *testing.T, cells ...sim.Cell) chart {
	t.Helper()
	var b bytes.Buffer
	report.SVG(&b, scenario(), cells)
	return parse(t, b.Bytes())
}

const ms = time.Millisecond

func TestSVGOfARealRunIsWellFormed(t *testing.T) {
	tab := smallTable(t)
	var b bytes.Buffer
	report.SVG(&b, tab.Scenarios[0], tab.Cells[0])
	c := parse(t, b.Bytes())
	for _, arm := range tab.Arms {
		if !c.hasText(arm) {
			t.Errorf("no row titled %q", arm)
		}
	}
}

// Every arm has a colour of its own, none of them a reference line's, and one
// title naming it; each reference has one legend entry.
func TestSVGTellsArmsAndReferencesApart(t *testing.T) {
	c := render(t,
		cell("a", 100, 50*ms, 60*ms, 70*ms, 80*ms),
		cell("b", 120, 40*ms, 60*ms, 70*ms, 80*ms),
		cell("c", 140, 30*ms, 60*ms, 70*ms, 80*ms))
	refs := map[string]bool{"black": true, "#555": true, "#ff7f0e": true}
	var arms []string
	for _, s := range c.strokes {
		if !refs[s] && !slices.Contains(arms, s) {
			arms = append(arms, s)
		}
	}
	if len(arms) != 3 {
		t.Errorf("arm colours %v, want 3 distinct ones apart from the references'", arms)
	}
	for _, want := range []string{"a", "b", "c", "dependency capacity", "SLO 100 ms"} {
		if n := count(c.texts, want); n != 1 {
			t.Errorf("%q appears %d times, want once", want, n)
		}
	}
	if slices.ContainsFunc(c.texts, func(s string) bool { return strings.HasPrefix(s, "client timeout") }) {
		t.Error("legend names the client timeout, which no arm reached")
	}
}

// An arm drawn exactly under another says so.
func TestSVGNamesAnArmIdenticalToAnother(t *testing.T) {
	c := render(t,
		cell("uber-140", 140, 30*ms, 30*ms),
		cell("xrate-140", 140, 30*ms, 30*ms),
		cell("oracle", 142, 30*ms, 30*ms))
	var notes []string
	for _, s := range c.texts {
		if strings.Contains(s, "the same as") {
			notes = append(notes, s)
		}
	}
	if want := []string{"the same as uber-140 at every point"}; !slices.Equal(notes, want) {
		t.Errorf("notes %q, want %q", notes, want)
	}
}

// The p99 axis ends at a round number just above the data, not at the
// timeout: 280 ms gets an axis to 300 ms; sent, 183 req/s, one to 200.
func TestSVGScalesTheAxesToTheData(t *testing.T) {
	c := render(t, cell("a", 183, 50*ms, 280*ms, 70*ms, 80*ms))
	for _, want := range []string{"300", "200"} {
		if !c.hasText(want) {
			t.Errorf("no tick %s", want)
		}
	}
	for _, not := range []string{"250", "400", "500", "1000"} {
		if c.hasText(not) {
			t.Errorf("tick %s above the data", not)
		}
	}
}

// A row whose p99 reaches the timeout is drawn to it and says for how long;
// the others keep a scale that shows them against the SLO.
func TestSVGLabelsTheTimeout(t *testing.T) {
	c := render(t,
		cell("fine", 100, 50*ms, 60*ms, 70*ms, 80*ms, 90*ms, 90*ms, 90*ms, 90*ms),
		cell("stuck", 100, 50*ms, 600*ms, time.Second, time.Second, time.Second, time.Second, 0, 40*ms))
	for _, want := range []string{"scale to the timeout: p99 at 1 s for 1 s of 2 s", "client timeout 1 s: p99 reads no higher", "gap in p99: no call was answered"} {
		if !c.hasText(want) {
			t.Errorf("no label %q in %q", want, c.texts)
		}
	}
	if n := count(c.texts, "1000"); n != 1 {
		t.Errorf("%d ticks at 1000 ms, want the stuck row's alone (the fine row's axis ends above its data, not at the timeout)", n)
	}
}

func count(xs []string, x string) (n int) {
	for _, s := range xs {
		if s == x {
			n++
		}
	}
	return n
}
