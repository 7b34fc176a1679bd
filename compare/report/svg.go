package report

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

const (
	width, panelH = 760, 220
	left, right   = 60, 150
	top, gap      = 30, 50
	plotW         = width - left - right
)

// SVG writes one scenario's chart: above, what each arm sent per second (per
// 250 ms) against the dependency's capacity (dashed black); below, each arm's p99 per 250 ms of
// sending time against the SLO (dashed black), on a scale capped at the
// client timeout.
func SVG(w io.Writer, sc sim.Scenario, cells []sim.Cell) {
	height := top + 2*panelH + gap + 40
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="18" font-size="14">%s — %s</text>`+"\n", left, esc(sc.Name), esc(sc.About))

	dur := sc.Duration.Seconds()
	maxRate := 0.0
	for _, c := range cells {
		for _, p := range c.Series {
			maxRate = math.Max(maxRate, math.Max(p.Sent, p.Capacity))
		}
	}
	maxRate = niceCeil(maxRate)
	maxLat := sc.Timeout.Seconds() * 1000

	y0 := float64(top)
	y1 := float64(top + panelH + gap)
	axes(w, y0, "sent req/s", maxRate, dur)
	axes(w, y1, "p99 ms", maxLat, dur)

	x := func(t time.Duration) float64 { return left + t.Seconds()/dur*plotW }
	yr := func(v float64) float64 { return y0 + panelH - math.Min(v/maxRate, 1)*panelH }
	yl := func(d time.Duration) float64 {
		return y1 + panelH - math.Min(float64(d.Milliseconds())/maxLat, 1)*panelH
	}

	// Capacity and SLO references.
	if len(cells) > 0 {
		var pts []string
		for _, p := range cells[0].Series {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.T), yr(p.Capacity)))
		}
		polyline(w, pts, "black", "5,3", 2)
	}
	polyline(w, []string{fmt.Sprintf("%d,%.1f", left, yl(sc.SLO)), fmt.Sprintf("%d,%.1f", left+plotW, yl(sc.SLO))}, "black", "5,3", 1.5)

	for i, c := range cells {
		col := palette[i%len(palette)]
		var rate, lat []string
		for _, p := range c.Series {
			rate = append(rate, fmt.Sprintf("%.1f,%.1f", x(p.T), yr(p.Sent)))
			if p.P99 > 0 {
				lat = append(lat, fmt.Sprintf("%.1f,%.1f", x(p.T), yl(p.P99)))
			}
		}
		polyline(w, rate, col, "", 1.5)
		polyline(w, lat, col, "", 1.2)
		ly := top + 14 + 16*i
		fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/><text x="%d" y="%d">%s</text>`+"\n",
			width-right+10, ly, width-right+28, ly, col, width-right+32, ly+4, esc(c.Arm))
	}
	ly := top + 14 + 16*len(cells)
	fmt.Fprintf(w, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black" stroke-dasharray="5,3" stroke-width="2"/><text x="%d" y="%d">capacity / SLO</text>`+"\n",
		width-right+10, ly, width-right+28, ly, width-right+32, ly+4)
	fmt.Fprintf(w, `<text x="%d" y="%d">time (s)</text>`+"\n", left+plotW/2, height-8)
	fmt.Fprintln(w, "</svg>")
}

func axes(w io.Writer, y0 float64, label string, max, dur float64) {
	fmt.Fprintf(w, `<rect x="%d" y="%.0f" width="%d" height="%d" fill="none" stroke="#999"/>`+"\n", left, y0, plotW, panelH)
	for i := 0; i <= 4; i++ {
		v := max * float64(i) / 4
		y := y0 + panelH - float64(panelH)*float64(i)/4
		fmt.Fprintf(w, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="#eee"/><text x="%d" y="%.0f" text-anchor="end">%.0f</text>`+"\n",
			left, y, left+plotW, y, left-4, y+4, v)
	}
	for s := 0.0; s <= dur; s += 5 {
		xx := left + s/dur*plotW
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f" text-anchor="middle">%.0f</text>`+"\n", xx, y0+panelH+14, s)
	}
	fmt.Fprintf(w, `<text x="12" y="%.0f" transform="rotate(-90 12 %.0f)" text-anchor="middle">%s</text>`+"\n", y0+panelH/2, y0+panelH/2, label)
}

func polyline(w io.Writer, pts []string, color, dash string, width float64) {
	if len(pts) == 0 {
		return
	}
	d := ""
	if dash != "" {
		d = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="%.1f"%s points="`, color, width, d)
	for i, p := range pts {
		if i > 0 {
			fmt.Fprint(w, " ")
		}
		fmt.Fprint(w, p)
	}
	fmt.Fprintln(w, `"/>`)
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

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
