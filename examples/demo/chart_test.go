package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

// The chart is well-formed SVG with one polyline per series, and a latency
// gap (no calls in a bucket) breaks the p99 line instead of drawing zero.
func TestChartIsWellFormed(t *testing.T) {
	sc, _ := findScenario("drop-recover")
	r := &outboundRun{sc: sc, length: 4 * time.Second, demand: 150}
	for at := time.Duration(0); at < r.length; at += 100 * time.Millisecond {
		r.samples = append(r.samples, sample{at: at, capacity: sc.capacityAt(at, r.length)})
		if at < time.Second || at >= 2*time.Second { // nothing answered in [1s, 2s)
			r.calls = append(r.calls, call{end: at, rtt: 30 * time.Millisecond, outcome: answered})
		}
	}
	svg := chart(r)
	d := xml.NewDecoder(bytes.NewReader(svg))
	polylines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
	}
	// capacity and sent, then p50 and p99 each split in two by the gap.
	if polylines != 6 {
		t.Errorf("%d polylines; want 6 (capacity and sent, p50 and p99 in two pieces each)", polylines)
	}
	if !strings.Contains(string(svg), "drop-recover") {
		t.Error("the title does not name the scenario")
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct {
		span float64
		n    int
		want float64
	}{{100, 5, 20}, {30, 10, 5}, {8, 10, 1}, {450, 5, 100}, {0.7, 5, 0.2}} {
		if got := niceStep(c.span, c.n); got != c.want {
			t.Errorf("niceStep(%g, %d) = %g; want %g", c.span, c.n, got, c.want)
		}
	}
}
