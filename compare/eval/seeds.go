package eval

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Seeds is a set of scenario seeds: Outbound outbound and Inbound inbound
// scenarios, drawn from the seeds First, First+1, ….
type Seeds struct {
	Name              string // "training", "development", "validation" or "holdout"
	First             uint64 // the first seed of each direction
	Outbound, Inbound int    // how many scenarios of each direction
	// Draw, when not zero, runs every scenario of the set on that draw of
	// its randomness (Scenario.Draw): the same scenarios, other luck.
	Draw uint64
}

// The seed sets. They never overlap: the controller is tuned on
// TrainingSeeds and DevelopmentSeeds only, the figures reported are
// ValidationSeeds', and HoldoutSeeds are neither tuned on nor the report.
var (
	// TrainingSeeds are seeds 1..40 (outbound) and 1..30 (inbound).
	TrainingSeeds = Seeds{Name: "training", First: 1, Outbound: 40, Inbound: 30}
	// ValidationSeeds are seeds 1001..1040 (outbound) and 1001..1030
	// (inbound).
	ValidationSeeds = Seeds{Name: "validation", First: 1001, Outbound: 40, Inbound: 30}
	// DevelopmentSeeds are seeds 101..220 (outbound) and 101..190
	// (inbound): three times the training set, for telling a change that
	// helps from noise while tuning (a change moves a few of 40 scenarios
	// either way by luck). Tuned on like the training seeds; never reported
	// as the law's figures.
	DevelopmentSeeds = Seeds{Name: "development", First: 101, Outbound: 120, Inbound: 90}
	// HoldoutSeeds are seeds 5001..5120 (outbound) and 5001..5090
	// (inbound), as many as the development set's: never tuned on, and not
	// the report's figures. They measure how far the tuning sets' figures overstate the
	// law: a rule chosen over many candidates on a few scenarios of one kind
	// fits those scenarios (the thirty-second session found the development
	// set's inbound figures 13 points above them; docs/controller-rewrite.md).
	// Read them seldom, for that question only: a set a candidate is kept
	// or dropped on is a tuning set.
	HoldoutSeeds = Seeds{Name: "holdout", First: 5001, Outbound: 120, Inbound: 90}
)

// Scenarios returns the set's scenarios, outbound first; n > 0 keeps only the
// first n of each direction.
func (s Seeds) Scenarios(n int) []Scenario {
	var scs []Scenario
	for _, d := range []struct {
		dir   Direction
		count int
	}{{Outbound, s.Outbound}, {Inbound, s.Inbound}} {
		if n > 0 {
			d.count = min(d.count, n)
		}
		for i := range d.count {
			sc := Generate(d.dir, s.First+uint64(i))
			if s.Draw > 0 {
				sc.Draw = s.Draw
				sc.Name += drawSuffix(s.Draw)
			}
			scs = append(scs, sc)
		}
	}
	return scs
}

// Draws returns k copies of s on the draws s.Draw, s.Draw+1, …: the same
// scenarios on k draws of their randomness.
func (s Seeds) Draws(k int) []Seeds {
	out := make([]Seeds, k)
	for d := range out {
		out[d] = s
		out[d].Draw += uint64(d)
	}
	return out
}

// Names returns the names of s.Scenarios(n), without drawing them.
func (s Seeds) Names(n int) []string {
	var names []string
	for _, d := range []struct {
		prefix string
		count  int
	}{{"out", s.Outbound}, {"in", s.Inbound}} {
		if n > 0 {
			d.count = min(d.count, n)
		}
		for i := range d.count {
			names = append(names, fmt.Sprintf("%s-%d", d.prefix, s.First+uint64(i))+drawSuffix(s.Draw))
		}
	}
	return names
}

// SeedSet returns the seed set named "training", "development",
// "validation" or "holdout".
func SeedSet(name string) (Seeds, error) {
	switch name {
	case TrainingSeeds.Name:
		return TrainingSeeds, nil
	case DevelopmentSeeds.Name:
		return DevelopmentSeeds, nil
	case ValidationSeeds.Name:
		return ValidationSeeds, nil
	case HoldoutSeeds.Name:
		return HoldoutSeeds, nil
	}
	return Seeds{}, fmt.Errorf("eval: no seed set %q (training, development, validation or holdout)", name)
}

// Named returns the two fixed scenarios of the issue, which are reported
// apart from the seeds:
//
//   - "inbound-knee": a service at 10 ms a request up to 20 in flight, slower
//     past it as (n/20)², 300 closed-loop clients retrying after 5–20 ms,
//     SLO 100 ms, MaxLimit 200, 30 s.
//   - "outbound-drop": the demo's dependency, 100 req/s falling to 30 at 10 s
//     and back at 25 s, 20 ms of network, SLO 150 ms, MaxRate 200, offered
//     150 req/s by callers with a 1 s timeout, 40 s.
func Named() []Scenario {
	knee := Scenario{
		Name: "inbound-knee", Seed: 1, Direction: Inbound,
		Duration: 30 * time.Second, SLO: 100 * time.Millisecond,
		Law: PSKnee, Knee: 20, Capacity0: 20 / 0.010,
		Routes:   []Route{{Name: "call", Share: 1, Cost: 1}},
		MaxLimit: 200, Clients: 300,
		BackoffMin: 5 * time.Millisecond, BackoffMax: 20 * time.Millisecond,
	}
	knee.Load = float64(knee.Clients) / knee.UnloadedAt(0).Seconds() / knee.Capacity0
	knee.Rate = knee.Load * knee.Capacity0
	knee.describe()

	drop := Scenario{
		Name: "outbound-drop", Seed: 1, Direction: Outbound,
		Duration: 40 * time.Second, SLO: 150 * time.Millisecond,
		Law: FIFOLogNormal, Servers: 1, Sigma: 0.3, Capacity0: 100,
		Net:    20 * time.Millisecond,
		Trace:  Trace{Kind: Dip, At: 10 * time.Second, Until: 25 * time.Second, Factor: 0.3},
		Routes: []Route{{Name: "call", Share: 1, Cost: 1}},
		Rate:   150, Load: 1.5, MaxRate: 200,
		DeadlineMin: time.Second, DeadlineMax: time.Second,
	}
	drop.describe()
	return []Scenario{knee, drop}
}

// splitDraw reads a name drawSuffix made: the scenario's own name and the
// draw (0 without a suffix); ok is false for a suffix that is not a draw
// from 1 to 65535.
func splitDraw(name string) (base string, draw uint64, ok bool) {
	i := strings.LastIndex(name, "/d")
	if i < 0 {
		return name, 0, true
	}
	d, err := strconv.ParseUint(name[i+2:], 10, 16)
	if err != nil || d == 0 {
		return name, 0, false
	}
	return name[:i], d, true
}

// drawSuffix names a draw other than the scenario's own: out-1001/d2. The
// oracle's sweeps are kept by name, so each draw has its own.
func drawSuffix(draw uint64) string {
	if draw == 0 {
		return ""
	}
	return fmt.Sprintf("/d%d", draw)
}
