package main

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/report"
	comparesim "github.com/agilelimiter/agilelimiter/compare/sim"
)

// chartStep is the width of the buckets the chart draws: long enough that
// each holds enough calls for a p99 to mean something.
const chartStep = 500 * time.Millisecond

// chart draws the outbound run as an SVG with the compare module's chart
// (report.SVG): what the limiter let out against the dependency's capacity
// above, the round-trip p99 against the SLO below. (The limiter's pace at one
// instant is not drawn: its gate refills a tick at a time with what came
// back, and swings from nothing to the ceiling within a round trip.)
func chart(r *outboundRun) []byte {
	sc := comparesim.Scenario{
		Name:     r.sc.name,
		About:    about(r),
		Duration: r.length,
		SLO:      slo,
		Timeout:  callerTimeout,
		MaxRate:  maxRate,
	}
	cell := comparesim.Cell{Result: comparesim.Result{Scenario: r.sc.name, Arm: "agilelimiter", Series: series(r)}}
	var b bytes.Buffer
	report.SVG(&b, sc, []comparesim.Cell{cell})
	return b.Bytes()
}

// about says in one line what the chart shows: the capacity schedule in the
// chart's seconds, and the demand.
func about(r *outboundRun) string {
	var b strings.Builder
	for i, p := range r.sc.phases {
		if from, _ := r.sc.bounds(i, r.length); i == 0 {
			fmt.Fprintf(&b, "capacity %.0f req/s", p.capacity)
		} else {
			fmt.Fprintf(&b, ", %.0f from %.1f s", p.capacity, from.Seconds())
		}
	}
	fmt.Fprintf(&b, "; callers send %.0f req/s", r.demand)
	return b.String()
}

// series is the run in chartStep buckets, each at its middle: the calls sent
// per second, the mean capacity, and the p99 of the round trips of the calls
// answered or timed out (0 when none ended in the bucket: no point drawn).
func series(r *outboundRun) []comparesim.Point {
	var ps []comparesim.Point
	for from := time.Duration(0); from+chartStep <= r.length; from += chartStep {
		s := r.window(from, from+chartStep)
		ps = append(ps, comparesim.Point{
			T:        from + chartStep/2,
			Capacity: s.capacity,
			Sent:     s.sentPerSec(),
			P99:      s.p99,
		})
	}
	return ps
}
