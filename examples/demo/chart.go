package main

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"
	"time"
)

// chart draws the outbound run as an SVG: what the limiter let out against
// the dependency's capacity on top, the round-trip p99 against the SLO below,
// with the phases marked. Hand-written, to keep the examples module free of
// plotting dependencies.
func chart(r *outboundRun) []byte {
	const (
		width, left, right = 960.0, 70.0, 30.0
		top1, h1           = 60.0, 240.0
		top2, h2           = 370.0, 200.0
		height             = 630.0
		bucket             = 500 * time.Millisecond
	)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="24" font-size="16">%s</text>`+"\n", left,
		html.EscapeString(fmt.Sprintf("agilelimiter demo: %s, callers sending %.0f req/s", r.sc.name, r.demand)))

	secs := r.length.Seconds()
	x := func(t float64) float64 { return left + (width-left-right)*t/secs }

	// The data: the capacity every sample; what was sent and the latencies
	// per bucket. (The limiter's pace at one instant is not drawn: its gate
	// refills a tick at a time with what came back, and swings from nothing
	// to the ceiling within a round trip.)
	type point struct{ t, v float64 }
	var capacity, sent, p99, p50 []point
	r.mu.Lock()
	for _, s := range r.samples {
		capacity = append(capacity, point{s.at.Seconds(), s.capacity})
	}
	r.mu.Unlock()
	for from := time.Duration(0); from+bucket <= r.length; from += bucket {
		s := r.window(from, from+bucket)
		mid := (from + bucket/2).Seconds()
		sent = append(sent, point{mid, s.sentPerSec()})
		if s.p99 > 0 {
			p99 = append(p99, point{mid, float64(s.p99) / 1e6})
			p50 = append(p50, point{mid, float64(s.p50) / 1e6})
		} else {
			p99 = append(p99, point{mid, math.NaN()})
			p50 = append(p50, point{mid, math.NaN()})
		}
	}

	maxOf := func(ps ...[]point) float64 {
		m := 0.0
		for _, p := range ps {
			for _, q := range p {
				if !math.IsNaN(q.v) {
					m = math.Max(m, q.v)
				}
			}
		}
		return m
	}
	sloMs := float64(slo) / 1e6
	yMax1 := niceCeil(1.1 * maxOf(capacity, sent))
	yMax2 := niceCeil(math.Min(math.Max(maxOf(p99), 1.5*sloMs), 4*sloMs))

	panel := func(top, h, yMax float64, unit, title string) func(float64) float64 {
		y := func(v float64) float64 { return top + h - h*math.Min(v, yMax)/yMax }
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", left, top-10, html.EscapeString(title))
		step := niceStep(yMax, 5)
		for v := 0.0; v <= yMax+1e-9; v += step {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#e5e5e5"/>`+"\n", left, y(v), width-right, y(v))
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="end">%g%s</text>`+"\n", left-6, y(v)+4, v, unit)
		}
		xs := niceStep(secs, 10)
		for t := 0.0; t <= secs+1e-9; t += xs {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%gs</text>`+"\n", x(t), top+h+16, t)
		}
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#999"/>`+"\n", left, top, width-left-right, h)
		return y
	}
	line := func(ps []point, y func(float64) float64, color string, width float64) {
		var seg bytes.Buffer
		flush := func() {
			if seg.Len() > 0 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="%g" points="%s"/>`+"\n", color, width, seg.String())
				seg.Reset()
			}
		}
		for _, p := range ps {
			if math.IsNaN(p.v) {
				flush()
				continue
			}
			fmt.Fprintf(&seg, "%.1f,%.1f ", x(p.t), y(p.v))
		}
		flush()
	}
	// legend takes name, colour pairs; a colour ending in " dashed" draws a
	// dashed sample.
	legend := func(top float64, items ...string) {
		for i := 0; i < len(items); i += 2 {
			lx := width - right - 170.0
			ly := top + 14 + 16*float64(i/2)
			color, dash := strings.CutSuffix(items[i+1], " dashed")
			style := ""
			if dash {
				style = ` stroke-dasharray="6 4"`
			}
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="3"%s/>`+"\n", lx, ly-4, lx+20, ly-4, color, style)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", lx+26, ly, items[i])
		}
	}

	y1 := panel(top1, h1, yMax1, "", "requests per second")
	line(capacity, y1, "#bbbbbb", 6)
	line(sent, y1, "#1f5fbf", 2)
	legend(top1, "dependency capacity", "#bbbbbb", "sent through the limiter (per 0.5s)", "#1f5fbf")

	y2 := panel(top2, h2, yMax2, "ms", "round-trip latency (per 0.5s), limiter wait excluded")
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#d62728" stroke-dasharray="6 4"/>`+"\n", left, y2(sloMs), width-right, y2(sloMs))
	line(p50, y2, "#ff9f3f", 1.5)
	line(p99, y2, "#d62728", 2)
	legend(top2, "p99", "#d62728", "p50", "#ff9f3f", fmt.Sprintf("SLO %s", slo), "#d62728 dashed")

	for i, p := range r.sc.phases {
		from, _ := r.sc.bounds(i, r.length)
		if i > 0 {
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-dasharray="3 3"/>`+"\n", x(from.Seconds()), top1, x(from.Seconds()), top2+h2)
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="#555">%s</text>`+"\n", x(from.Seconds())+4, top1+14, html.EscapeString(p.name))
	}
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// niceStep returns a 1, 2 or 5 times a power of ten that cuts span into at
// most about n steps.
func niceStep(span float64, n int) float64 {
	if span <= 0 {
		return 1
	}
	raw := span / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// niceCeil rounds v up to a multiple of its nice step.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	s := niceStep(v, 5)
	return math.Ceil(v/s) * s
}
