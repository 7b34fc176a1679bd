package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// palette colours the arms in order, cycling after nine. The references are
// drawn in black, grey and orange, which no arm uses.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// The references, each with its own colour and dash pattern, so that one
// legend entry names one kind of line.
const (
	capacityColor, capacityDash = "black", "6,4"
	sloColor, sloDash           = "#555", "2,3"
	timeoutColor, timeoutDash   = "#ff7f0e", "9,3,2,3"
)

// The layout: a row of two panels per arm, sent per second on the left and
// p99 on the right.
const (
	width          = 820
	colLeft        = 52                      // x of the left panels
	colW, colGap   = 340, 62                 // panel width; room for the right panels' ticks
	colRight       = colLeft + colW + colGap // x of the right panels
	headTop        = 74                      // y of the first row
	rowHead, rowH  = 18, 110                 // a row's title band; a row's height
	panelH         = 78                      // a panel's height
	bottomMargin   = 34
	yTicksPerPanel = 4
)

// SVG writes one scenario's chart as small multiples, one row per arm in the
// order of cells, so that no arm hides another; an arm whose series is the
// same as an earlier arm's at every point says so in its title. On the left,
// what the arm sent per second in each step of its series (250 ms in the
// matrix) against the dependency's capacity (dashed black). On the right,
// the p99 of the calls sent in each step against the SLO (dotted grey); a
// step in which no call was answered (an outage's refusals carry no
// latency) leaves a gap. Each column has one scale for every row, rounded
// up to a round number just above the data (280 ms gets an axis to 300),
// with one exception: a p99 never reads above the client timeout (a client
// that gave up waited exactly that long), so a row that reaches it is drawn
// to the timeout (dash-dotted orange) and says for how long it sat there,
// leaving the other rows on a scale that shows them against the SLO.
//
// SVG reads only the scenario's Name, About, Duration, SLO and Timeout, and
// each cell's Arm and Series (T, Sent, Capacity and P99).
func SVG(w io.Writer, sc sim.Scenario, cells []sim.Cell) {
	height := headTop + len(cells)*rowH + bottomMargin
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="20" font-size="14">%s — %s</text>`+"\n", colLeft, esc(sc.Name), esc(sc.About))

	dur := sc.Duration.Seconds()
	if dur <= 0 {
		dur = 1
	}
	sloMs := millis(sc.SLO)
	timeoutMs := millis(sc.Timeout)

	// The legend: one entry per kind of reference line.
	lx := float64(colLeft)
	legend := func(color, dash string, strokeW float64, label string) {
		fmt.Fprintf(w, `<line x1="%.0f" y1="36" x2="%.0f" y2="36" stroke="%s" stroke-width="%.1f" stroke-dasharray="%s"/><text x="%.0f" y="40">%s</text>`+"\n",
			lx, lx+26, color, strokeW, dash, lx+31, esc(label))
		lx += 31 + textWidth(label) + 22
	}
	legend(capacityColor, capacityDash, 1.5, "dependency capacity")
	legend(sloColor, sloDash, 1.5, "SLO "+durationLabel(sc.SLO))
	// Sent shares one scale; so does p99, but for the rows that reach the
	// timeout, which run up to it rather than flatten every other row.
	sentTop, latTop := 0.0, math.Max(sloMs*1.25, 1)
	pinned := make([]time.Duration, len(cells))
	for i, c := range cells {
		step := seriesStep(c.Series)
		top := 0.0
		for _, p := range c.Series {
			sentTop = math.Max(sentTop, math.Max(p.Sent, p.Capacity))
			top = math.Max(top, millis(p.P99))
			if sc.Timeout > 0 && p.P99 >= sc.Timeout {
				pinned[i] += step
			}
		}
		if pinned[i] == 0 {
			latTop = math.Max(latTop, top)
		}
	}
	sentTop, latTop = niceCeil(sentTop), niceCeil(latTop)
	if timeoutMs > 0 && latTop > timeoutMs {
		latTop = timeoutMs
	}
	if slices.ContainsFunc(pinned, func(d time.Duration) bool { return d > 0 }) {
		legend(timeoutColor, timeoutDash, 1.5, "client timeout "+durationLabel(sc.Timeout)+": p99 reads no higher")
	}
	if slices.ContainsFunc(cells, hasGap) {
		fmt.Fprintf(w, `<text x="%.0f" y="40">gap in p99: no call was answered</text>`+"\n", lx)
	}
	per := "per " + durationLabel(seriesStep(firstSeries(cells)))
	fmt.Fprintf(w, `<text x="%d" y="60" font-weight="bold">req/s sent, %s</text>`+"\n", colLeft, per)
	fmt.Fprintf(w, `<text x="%d" y="60" font-weight="bold">p99 ms of the calls sent, %s</text>`+"\n", colRight, per)

	x := func(left int, t time.Duration) float64 { return float64(left) + t.Seconds()/dur*colW }
	for i, c := range cells {
		col := palette[i%len(palette)]
		rowTop := float64(headTop + i*rowH)
		py := rowTop + rowHead // top of the row's panels

		fmt.Fprintf(w, `<rect x="%d" y="%.0f" width="10" height="10" fill="%s"/><text x="%d" y="%.0f" font-weight="bold" fill="%s">%s</text>`,
			colLeft, rowTop+3, col, colLeft+15, rowTop+12, col, esc(c.Arm))
		if j := sameAs(cells, i); j >= 0 {
			fmt.Fprintf(w, `<text x="%.0f" y="%.0f" fill="#333"> the same as %s at every point</text>`,
				colLeft+15+textWidth(c.Arm)+8, rowTop+12, esc(cells[j].Arm))
		}
		fmt.Fprintln(w)

		// Sent against capacity.
		ys := func(v float64) float64 { return py + panelH - v/sentTop*panelH }
		frame(w, colLeft, py, sentTop, dur, ys, i == len(cells)-1)
		var capacity, sent []string
		for _, p := range c.Series {
			capacity = append(capacity, pt(x(colLeft, p.T), ys(p.Capacity)))
			sent = append(sent, pt(x(colLeft, p.T), ys(p.Sent)))
		}
		polyline(w, capacity, capacityColor, capacityDash, 1.5)
		polyline(w, sent, col, "", 1.5)

		// p99 against the SLO.
		top := latTop
		if pinned[i] > 0 {
			top = timeoutMs
		}
		yl := func(v float64) float64 { return py + panelH - math.Min(v/top, 1)*panelH }
		frame(w, colRight, py, top, dur, yl, i == len(cells)-1)
		if sloMs <= top {
			polyline(w, []string{pt(colRight, yl(sloMs)), pt(colRight+colW, yl(sloMs))}, sloColor, sloDash, 1.5)
		}
		if pinned[i] > 0 {
			polyline(w, []string{pt(colRight, yl(timeoutMs)), pt(colRight+colW, yl(timeoutMs))}, timeoutColor, timeoutDash, 1.5)
			fmt.Fprintf(w, `<text x="%d" y="%.0f" text-anchor="end" fill="#b35900">scale to the timeout: p99 at %s for %s of %s</text>`+"\n",
				colRight+colW, rowTop+12, durationLabel(sc.Timeout), secondsLabel(pinned[i]), secondsLabel(sc.Duration))
		}
		var seg []string
		for _, p := range c.Series {
			if p.P99 <= 0 { // no call reached the dependency: a gap
				polyline(w, seg, col, "", 1.5)
				seg = seg[:0]
				continue
			}
			seg = append(seg, pt(x(colRight, p.T), yl(millis(p.P99))))
		}
		polyline(w, seg, col, "", 1.5)
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">time (s)</text>`+"\n", colLeft+colW/2, height-6)
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle">time (s)</text>`+"\n", colRight+colW/2, height-6)
	fmt.Fprintln(w, "</svg>")
}

// frame draws a panel's box, its horizontal grid with the values on the left,
// a vertical grid line every few seconds, and under the last row the seconds.
func frame(w io.Writer, left int, top, ceil, dur float64, y func(float64) float64, last bool) {
	fmt.Fprintf(w, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, top, colW, panelH)
	step := niceStep(ceil, yTicksPerPanel)
	for v := 0.0; v <= ceil*(1+1e-9); v += step {
		yy := y(v)
		fmt.Fprintf(w, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end" font-size="10">%g</text>`+"\n",
			left, yy, left+colW, yy, left-4, yy+3.5, v)
	}
	ts := niceStep(dur, 4)
	for s := ts; s < dur*(1-1e-9); s += ts {
		xx := float64(left) + s/dur*colW
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/>`+"\n", xx, top, xx, top+panelH)
	}
	if last {
		for s := 0.0; s <= dur*(1+1e-9); s += ts {
			xx := float64(left) + s/dur*colW
			fmt.Fprintf(w, `<text x="%.1f" y="%.0f" text-anchor="middle" font-size="10">%g</text>`+"\n", xx, top+panelH+12, s)
		}
	}
}

// sameAs returns the index of the first arm before i whose series is the
// same as arm i's at every point drawn, or -1.
func sameAs(cells []sim.Cell, i int) int {
	for j := range i {
		a, b := cells[j].Series, cells[i].Series
		if len(a) != len(b) {
			continue
		}
		same := true
		for k := range a {
			if a[k].T != b[k].T || a[k].Sent != b[k].Sent || a[k].P99 != b[k].P99 {
				same = false
				break
			}
		}
		if same {
			return j
		}
	}
	return -1
}

// hasGap reports whether a step of c's series saw no call reach the
// dependency.
func hasGap(c sim.Cell) bool {
	for _, p := range c.Series {
		if p.P99 <= 0 {
			return true
		}
	}
	return false
}

// firstSeries returns the series of the first cell, if any.
func firstSeries(cells []sim.Cell) []sim.Point {
	if len(cells) == 0 {
		return nil
	}
	return cells[0].Series
}

// seriesStep returns the spacing of a series: that of its first two points,
// sim.SeriesStep for shorter ones.
func seriesStep(s []sim.Point) time.Duration {
	if len(s) >= 2 && s[1].T > s[0].T {
		return s[1].T - s[0].T
	}
	return sim.SeriesStep
}

func pt(x, y float64) string { return fmt.Sprintf("%.1f,%.1f", x, y) }

func polyline(w io.Writer, pts []string, color, dash string, width float64) {
	if len(pts) == 0 {
		return
	}
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="%.1f"%s points="%s"/>`+"\n", color, width, d, strings.Join(pts, " "))
}

// niceStep returns 1, 2 or 5 times a power of ten: the least such step that
// cuts span into at most n steps.
func niceStep(span float64, n int) float64 {
	if span <= 0 || n < 1 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// niceCeil rounds v up to a multiple of its tick step (niceStep of v in
// yTicksPerPanel steps): 280 becomes 300, 183 becomes 200, 1000 stays.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	s := niceStep(v, yTicksPerPanel)
	return math.Ceil(v/s*(1-1e-9)) * s
}

// millis returns d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// durationLabel writes d as a person reads it on a chart: 100 ms, 1 s.
func durationLabel(d time.Duration) string {
	if d >= time.Second && d%(100*time.Millisecond) == 0 {
		return secondsLabel(d)
	}
	return fmt.Sprintf("%g ms", millis(d.Round(time.Millisecond)))
}

// secondsLabel writes d in seconds, to a tenth.
func secondsLabel(d time.Duration) string {
	return fmt.Sprintf("%g s", math.Round(d.Seconds()*10)/10)
}

// textWidth estimates the width of s in the chart's 11 px sans-serif.
func textWidth(s string) float64 { return 6.2 * float64(len([]rune(s))) }

func esc(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		switch r {
		case '<':
			out = append(out, []rune("&lt;")...)
		case '>':
			out = append(out, []rune("&gt;")...)
		case '&':
			out = append(out, []rune("&amp;")...)
		default:
			out = append(out, r)
		}
	}
	return string(out)
}
