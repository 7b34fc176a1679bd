package eval

import "slices"

// Hindsight is what the best point of the oracle's sweep gets in each run of
// an evaluation when it is chosen on that run itself, under two rules. The
// oracle's: the most goodput among the points that keep the goal's bar of
// inside share (Row.Oracle). The user's: the most goodput among the points
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
	for i := range ev.Rows {
		r := &ev.Rows[i]
		if f >= 0 && atLeast(Cell{Result: r.Oracle}, r.Cells[f]) {
			h.OracleAtFailsafe++
		}
		p := r.keptPoint()
		if p < 0 {
			continue
		}
		h.Kept++
		c := Cell{Result: r.Sweep[p]}
		r.judgeCell(&c)
		if c.Meets {
			h.KeptMet++
		}
		if f >= 0 && atLeast(c, r.Cells[f]) {
			h.KeptAtFailsafe++
		}
		if a >= 0 && f >= 0 && atLeast(r.Cells[a], r.Cells[f]) {
			h.AgileKeptAtFailsafe++
		}
	}
	return h
}
