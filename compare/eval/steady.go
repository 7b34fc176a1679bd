package eval

import "math"

// A run's shortfall against the oracle has two parts: how deep the arm kept
// the resource on average (its depth), and what moving around that depth cost
// (its motion). The oracle's sweep holds fixed policies at every depth, so the
// goodput of a fixed policy as deep as the arm's run splits one from the other:
//
//	of oracle = depth × motion
//	depth     = Steady / the oracle's goodput: the best a fixed policy that
//	            deep gets, against the best of any depth
//	motion    = the arm's goodput / Steady: what the arm kept of it
//
// A law whose depth is short of 1 keeps the wrong number of calls in flight on
// average; one whose motion is short of 1 keeps the right number and loses
// goodput to how it gets there (probes, cuts, oscillation, or, on a processor
// shared by callers without think time, the bunching a sudden step leaves:
// docs/controller-rewrite.md, Thirty-seventh session). Depth is read by Little's
// law, so it needs no arm to report anything.

// InFlight is how many calls r held in flight on average over a run of d
// seconds: the time its answered and timed-out calls were out, over the run
// (Little's law). Refusals, which take the resource's round trip of half a
// millisecond, are left out.
func (r Result) InFlight(d float64) float64 {
	if d <= 0 {
		return 0
	}
	return r.Mean.Seconds() * float64(r.Answered+r.TimedOut) / d
}

// Steady is the goodput of a fixed policy of the row's sweep held as deep as
// c: linear between the two sweep points whose mean in flight brackets c's,
// taken in the sweep's order (deeper limits, or faster shares, hold more in
// flight), from no goodput at none in flight below the shallowest, and the
// deepest point's goodput beyond it. NaN without a sweep.
func (r *Row) Steady(c Cell) float64 {
	if len(r.Sweep) == 0 {
		return math.NaN()
	}
	d := r.Scenario.Duration.Seconds()
	m := c.InFlight(d)
	x0, g0 := 0.0, 0.0
	for _, s := range r.Sweep {
		x1, g1 := s.InFlight(d), s.Goodput
		if m <= x1 {
			if x1 <= x0 {
				return g1
			}
			return g0 + (g1-g0)*(m-x0)/(x1-x0)
		}
		x0, g0 = x1, g1
	}
	return g0
}

// DepthAndMotion splits c's goodput against the row's oracle into its
// depth and its motion (see Steady): their product is c.OfOracle. Both are
// NaN where the oracle or the fixed policy as deep got nothing through.
func (r *Row) DepthAndMotion(c Cell) (depth, motion float64) {
	st := r.Steady(c)
	if !(st > 0) || !(r.Oracle.Goodput > 0) {
		return math.NaN(), math.NaN()
	}
	return st / r.Oracle.Goodput, c.Goodput / st
}
