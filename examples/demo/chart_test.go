package main

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
)

// gappy returns a 4 s drop-recover run with a call answered in 30 ms every
// 100 ms, except in [1s, 2s), where nothing ended.
func gappy() *outboundRun {
	sc, _ := findScenario("drop-recover")
	r := &outboundRun{sc: sc, length: 4 * time.Second, demand: 150}
	for at := time.Duration(0); at < r.length; at += 100 * time.Millisecond {
		r.samples = append(r.samples, sample{at: at, capacity: sc.capacityAt(at, r.length)})
		if at < time.Second || at >= 2*time.Second {
			r.calls = append(r.calls, call{end: at, rtt: 30 * time.Millisecond, outcome: answered})
		}
	}
	return r
}

// The chart's series is the run in chartStep buckets: the calls sent per
// second, the capacity of the schedule (its mean, in a bucket where it
// changes), and the p99, which is 0 (no point)
// where no call ended instead of a latency of zero.
func TestSeriesFollowsTheRun(t *testing.T) {
	r := gappy()
	ps := series(r)
	if want := int(r.length / chartStep); len(ps) != want {
		t.Fatalf("%d points; want %d, one per %s", len(ps), want, chartStep)
	}
	for _, p := range ps {
		gap := p.T >= time.Second && p.T < 2*time.Second
		wantSent, wantP99 := 10.0, 30*time.Millisecond // one call per 100 ms
		if gap {
			wantSent, wantP99 = 0, 0
		}
		if p.Sent != wantSent || p.P99 != wantP99 {
			t.Errorf("at %s: sent %g/s, p99 %s; want %g/s, %s", p.T, p.Sent, p.P99, wantSent, wantP99)
		}
		from, to := p.T-chartStep/2, p.T+chartStep/2-time.Millisecond
		if c := r.sc.capacityAt(from, r.length); c == r.sc.capacityAt(to, r.length) && p.Capacity != c {
			t.Errorf("at %s: capacity %g; want the schedule's %g", p.T, p.Capacity, c)
		}
	}
}

// The chart is well-formed SVG that names the scenario and the demand, and
// draws the series as lines.
func TestChartIsWellFormed(t *testing.T) {
	svg := chart(gappy())
	d := xml.NewDecoder(bytes.NewReader(svg))
	lines := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("chart is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "polyline" || se.Name.Local == "path") {
			lines++
		}
	}
	if lines == 0 {
		t.Error("the chart draws no line")
	}
	for _, want := range []string{"drop-recover", "150 req/s"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("the chart does not say %q", want)
		}
	}
}
