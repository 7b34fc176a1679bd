package main

import (
	"strings"
	"testing"
	"time"
)

// synthetic returns a 30 s drop-recover run in which the limiter let out
// rate(capacity) answers a second, each answered in rtt.
func synthetic(rate func(capacity float64) float64, rtt time.Duration) *outboundRun {
	sc, _ := findScenario("drop-recover")
	r := &outboundRun{sc: sc, length: 30 * time.Second, demand: 150}
	const step = 10 * time.Millisecond
	owed := 0.0
	for at := time.Duration(0); at < r.length; at += step {
		c := sc.capacityAt(at, r.length)
		r.samples = append(r.samples, sample{at: at, capacity: c})
		for owed += rate(c) * step.Seconds(); owed >= 1; owed-- {
			r.calls = append(r.calls, call{end: at, rtt: rtt, outcome: answered})
		}
	}
	return r
}

// The demo's checks judge what the limiter let out: a limiter that follows
// the capacity passes, one that undershoots the drop six times over fails
// (issue 13: the old check passed it), and so do one that overshoots and one
// whose answers miss the SLO.
func TestFollowedJudgesWhatWasSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate func(float64) float64
		rtt  time.Duration
		want string // "" means no complaint
	}{
		{"follows", func(c float64) float64 { return 0.95 * c }, 50 * time.Millisecond, ""},
		{"undershoots the drop", func(c float64) float64 {
			if c < normalCapacity {
				return c / 6
			}
			return c
		}, 50 * time.Millisecond, "drop: 5 req/s sent"},
		{"overshoots the drop", func(c float64) float64 { return normalCapacity }, 50 * time.Millisecond, "drop: 100 req/s sent"},
		{"misses the SLO", func(c float64) float64 { return c }, 2 * slo, "inside the SLO"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Join(followed(synthetic(tc.rate, tc.rtt)), "; ")
			if tc.want == "" && bad != "" {
				t.Errorf("a limiter that followed the capacity failed: %s", bad)
			}
			if tc.want != "" && !strings.Contains(bad, tc.want) {
				t.Errorf("complaints %q; want one saying %q", bad, tc.want)
			}
		})
	}
}
