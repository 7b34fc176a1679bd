package eval

import (
	"fmt"
	"slices"
	"strings"
)

// Hindsight is what the best point of the oracle's sweep gets in each run of
// an evaluation when it is chosen on that run itself, under two rules. The
// oracle's: the most goodput, answers inside the SLO, at any inside share
// (Row.Oracle). The user's: the most goodput among the points
// whose p99 is inside the SLO, the target the law keeps (SPEC §3: "p99 above
// SLOTarget is always congestion"; the goal's bar is 90% inside). No fixed
// point gets more than the first in its run, so a target it misses no fixed
// point meets; a law that keeps the user's p99 gets past the second only by
// moving where a fixed point cannot (after a capacity that changes). Read
// beside the arms, it says how much of a target a law that keeps the p99 can
// be asked for.
type Hindsight struct {
	Runs int
	// Kept counts the runs in which some point answered with its p99 inside
	// the SLO, and KeptMet those in which the best such point meets the goal.
	Kept, KeptMet int
	// OracleAtFailsafe and KeptAtFailsafe count the runs in which the
	// oracle's goodput, and the best p99-keeping point's, is at least
	// failsafe-go's (a run with no such point does not count); both −1
	// without that arm.
	OracleAtFailsafe, KeptAtFailsafe int
	// AgileKeptAtFailsafe counts, of the Kept runs, those in which the arm
	// "agile" got at least failsafe-go's goodput: the law beside the point
	// where a point that keeps the p99 exists (−1 without both arms).
	AgileKeptAtFailsafe int
	// Kinds splits the Kept runs by kind of resource (ResourceKind), in
	// resourceKinds' order, kinds without such runs left out: where the
	// law's own gap to the point that keeps the p99 lies.
	Kinds []HindKind
}

// HindKind is one kind of resource's runs in which a point keeps the p99.
type HindKind struct {
	Kind string
	// Kept counts the kind's runs in which some point keeps the p99;
	// AtFailsafe those where the best such point gets at least
	// failsafe-go's goodput, and Agile those where the arm "agile" does
	// (both −1 without those arms).
	Kept, AtFailsafe, Agile int
}

// keptPoint returns the index, in r's sweep, of the point with the most
// goodput among those that answered with their p99 inside the scenario's SLO
// (every point that answered, without an SLO); −1 if there is none.
func (r *Row) keptPoint() int {
	best := -1
	for i, s := range r.Sweep {
		if s.Answered == 0 || r.Scenario.SLO > 0 && s.P99 > r.Scenario.SLO {
			continue
		}
		if best < 0 || s.Goodput > r.Sweep[best].Goodput {
			best = i
		}
	}
	return best
}

// Hindsight reads ev's runs as Hindsight; failsafe-go is the arm of that
// name, if ev has it.
func (ev Evaluation) Hindsight() Hindsight {
	h := Hindsight{Runs: len(ev.Rows), OracleAtFailsafe: -1, KeptAtFailsafe: -1, AgileKeptAtFailsafe: -1}
	a, f := slices.Index(ev.Arms, "agile"), slices.Index(ev.Arms, failsafeArm)
	if f >= 0 {
		h.OracleAtFailsafe, h.KeptAtFailsafe = 0, 0
		if a >= 0 {
			h.AgileKeptAtFailsafe = 0
		}
	}
	kinds := make([]HindKind, len(resourceKinds))
	for j, kind := range resourceKinds {
		// The counts start where h's do: 0, or −1 without the arms.
		kinds[j] = HindKind{Kind: kind, AtFailsafe: h.KeptAtFailsafe, Agile: h.AgileKeptAtFailsafe}
	}
	for i := range ev.Rows {
		r := &ev.Rows[i]
		if f >= 0 && atLeast(Cell{Result: r.Oracle}, r.Cells[f]) {
			h.OracleAtFailsafe++
		}
		p := r.keptPoint()
		if p < 0 {
			continue
		}
		k := &kinds[slices.Index(resourceKinds, ResourceKind(&r.Scenario))]
		h.Kept++
		k.Kept++
		c := Cell{Result: r.Sweep[p]}
		r.judgeCell(&c)
		if c.Meets {
			h.KeptMet++
		}
		if f >= 0 && atLeast(c, r.Cells[f]) {
			h.KeptAtFailsafe++
			k.AtFailsafe++
		}
		if a >= 0 && f >= 0 && atLeast(r.Cells[a], r.Cells[f]) {
			h.AgileKeptAtFailsafe++
			k.Agile++
		}
	}
	for _, k := range kinds {
		if k.Kept > 0 {
			h.Kinds = append(h.Kinds, k)
		}
	}
	return h
}

// hindKinds pools hs' kinds over the draws, in resourceKinds' order; the
// counts against failsafe-go are −1 if the draws have no such arm.
func hindKinds(hs []Hindsight) []HindKind {
	var out []HindKind
	for _, kind := range resourceKinds {
		sum := HindKind{Kind: kind}
		for _, h := range hs {
			for _, k := range h.Kinds {
				if k.Kind == kind {
					sum.Kept, sum.AtFailsafe, sum.Agile = sum.Kept+k.Kept, sum.AtFailsafe+k.AtFailsafe, sum.Agile+k.Agile
				}
			}
		}
		if sum.Kept == 0 {
			continue
		}
		if hs[0].KeptAtFailsafe < 0 {
			sum.AtFailsafe = -1
		}
		if hs[0].AgileKeptAtFailsafe < 0 {
			sum.Agile = -1
		}
		out = append(out, sum)
	}
	return out
}

// hindKindsText says the pooled kinds as "kind n (the limit a, agile b)",
// joined; empty without failsafe-go.
func hindKindsText(hs []Hindsight) string {
	var parts []string
	for _, k := range hindKinds(hs) {
		if k.AtFailsafe < 0 {
			return ""
		}
		s := fmt.Sprintf("%s %d (the best that keeps it %d", k.Kind, k.Kept, k.AtFailsafe)
		if k.Agile >= 0 {
			s += fmt.Sprintf(", agile %d", k.Agile)
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, ", ")
}
