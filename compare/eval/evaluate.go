package eval

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// The goal for an arm in one scenario.
const (
	// GoalInside is the share of sent calls (admitted requests) that must be
	// answered inside the SLO.
	GoalInside = 0.90
	// GoalOfOracle is the share of the oracle's goodput an arm must reach.
	GoalOfOracle = 0.8
	// insideSlack is how far below the best inside of the oracle's sweep the
	// bar sits when that best is under GoalInside.
	insideSlack = 0.02
)

// InsideBar returns the share of sent calls an arm must answer inside the SLO
// in a scenario where the best fixed share or limit of the oracle's sweep
// answered bestInside: GoalInside, or bestInside less two points when even
// that is below it (an SLO the resource breaks on its own, a route dearer
// than the SLO): no arm is asked for more than a clairvoyant fixed limit
// achieves.
func InsideBar(bestInside float64) float64 {
	return min(GoalInside, bestInside-insideSlack)
}

// Runner runs each job in its own synctest bubble, as many at once as it
// likes, and returns when all have run: compare/sim's, which the matrix
// runs on too.
type Runner = sim.Runner

// Bubbles returns a Runner that runs every job as a parallel subtest of t in
// a fresh bubble (sim.Bubbles).
func Bubbles(t *testing.T) Runner { return sim.Bubbles(t) }

// Arms are the contenders of an evaluation, besides the oracle.
type Arms struct {
	Outbound []OutboundArm // run in the outbound scenarios
	Inbound  []InboundArm  // run in the inbound scenarios
}

// Only returns the arms of a whose names are in names (all of them when
// names is empty), and the names no arm had.
func (a Arms) Only(names ...string) (Arms, []string) {
	if len(names) == 0 {
		return a, nil
	}
	var kept Arms
	found := map[string]bool{}
	for _, o := range a.Outbound {
		if slices.Contains(names, o.Name) {
			kept.Outbound, found[o.Name] = append(kept.Outbound, o), true
		}
	}
	for _, i := range a.Inbound {
		if slices.Contains(names, i.Name) {
			kept.Inbound, found[i.Name] = append(kept.Inbound, i), true
		}
	}
	var unknown []string
	for _, n := range names {
		if !found[n] {
			unknown = append(unknown, n)
		}
	}
	return kept, unknown
}

// DefaultArms returns OutboundArms and InboundArms.
func DefaultArms() Arms {
	return Arms{Outbound: OutboundArms(), Inbound: InboundArms()}
}

// Cell is one arm's result in one scenario, judged against the oracle.
type Cell struct {
	Result
	// OfOracle is Goodput / the oracle's goodput (1 when the oracle had
	// none: nobody could do better).
	OfOracle float64
	// Meets reports whether the cell meets the goal: Inside ≥ the row's
	// InsideBar and OfOracle ≥ GoalOfOracle.
	Meets bool
	// SettledOfOracle and SettledMeets are OfOracle and Meets read from
	// the settled figures of the cell and of the sweep (Row.SettledOracle,
	// Row.SettledBar): the goal once the start is behind the run.
	SettledOfOracle float64
	SettledMeets    bool
}

// Row is one scenario's results.
type Row struct {
	Scenario Scenario // the scenario run
	// Sweep holds the oracle's runs, one per share (outbound, see
	// OracleShares) or fixed limit (inbound, see OracleLimits), in Params'
	// order; Oracle is the one with the best goodput, at Param.
	Sweep  []Result
	Params []float64 // the shares or limits swept
	Oracle Result    // the best of Sweep by goodput
	Param  float64   // Oracle's share or limit
	// BestInside is the best Inside of the sweep; InsideBar is
	// InsideBar(BestInside).
	BestInside, InsideBar float64
	// SettledOracle is the best settled goodput of the sweep (chosen on
	// the settled figures, as Oracle is on the whole run's), SettledBar
	// InsideBar of the sweep's best settled inside.
	SettledOracle, SettledBar float64
	// Cells are the arms' results, in the evaluation's arm order.
	Cells []Cell
}

// Evaluation is every scenario of one direction, every arm.
type Evaluation struct {
	Direction Direction // of every scenario in Rows
	Arms      []string  // the arms' names, in the order of each row's Cells
	Rows      []Row     // one per scenario, in the order given to Evaluate
}

// Report is an evaluation of both directions.
type Report struct {
	Outbound, Inbound Evaluation // the scenarios of each direction
}

// Sweeps remembers the oracle's sweep of each scenario it has seen, so that
// an evaluation of the limiter alone does not run the sweep again: the sweep
// does not depend on the limiter, and it is most of an evaluation's work. A
// scenario is known by its name and its description, so a generator that
// draws it differently misses. The zero value is an empty cache; it encodes
// to and decodes from JSON.
type Sweeps map[string][]Result

func (sw Sweeps) key(sc *Scenario) string { return sc.Name + " | " + sc.About }

// Has reports whether sw holds a sweep of sc.
func (sw Sweeps) Has(sc *Scenario) bool { return len(sw[sw.key(sc)]) > 0 }

// fresh returns sw's sweep of sc if it holds one of n points counted as
// today's runs are (their settled figures included), nil otherwise: a sweep
// cached before a figure was counted would read as nothing got through.
func (sw Sweeps) fresh(sc *Scenario, n int) []Result {
	cached := sw[sw.key(sc)]
	if len(cached) != n {
		return nil
	}
	for _, r := range cached {
		if r.SettledFrom != SettledFrom(sc) {
			return nil
		}
	}
	return cached
}

// Evaluate runs every arm, and the oracle's sweep, through every scenario
// (outbound scenarios with arms.Outbound, inbound ones with arms.Inbound),
// each run one job of run, and judges each arm against the oracle.
func Evaluate(scs []Scenario, arms Arms, run Runner) Report {
	return EvaluateWith(scs, arms, run, nil)
}

// EvaluateWith is Evaluate taking the oracle's sweep of a scenario from sw
// where it is there, and adding to sw the sweeps it runs. A nil sw runs
// every sweep.
func EvaluateWith(scs []Scenario, arms Arms, run Runner, sw Sweeps) Report {
	rep := Report{Outbound: Evaluation{Direction: Outbound}, Inbound: Evaluation{Direction: Inbound}}
	for _, a := range arms.Outbound {
		rep.Outbound.Arms = append(rep.Outbound.Arms, a.Name)
	}
	for _, a := range arms.Inbound {
		rep.Inbound.Arms = append(rep.Inbound.Arms, a.Name)
	}
	for _, sc := range scs {
		ev := &rep.Outbound
		if sc.Direction == Inbound {
			ev = &rep.Inbound
		}
		ev.Rows = append(ev.Rows, Row{Scenario: sc})
	}
	// Every row exists now, so the jobs may hold pointers into the slices.
	var jobs []job
	add := func(sc *Scenario, f func()) { jobs = append(jobs, job{sc.cost(), f}) }
	for i := range rep.Outbound.Rows {
		r := &rep.Outbound.Rows[i]
		sc := &r.Scenario
		r.Cells = make([]Cell, len(arms.Outbound))
		for i, a := range arms.Outbound {
			add(sc, func() { r.Cells[i].Result = RunOutbound(sc, a) })
		}
		r.Params = OracleShares
		if r.Sweep = sw.fresh(sc, len(r.Params)); r.Sweep != nil {
			continue
		}
		r.Sweep = make([]Result, len(r.Params))
		for i, s := range r.Params {
			add(sc, func() { r.Sweep[i] = RunOutbound(sc, Oracle(s)) })
		}
	}
	for i := range rep.Inbound.Rows {
		r := &rep.Inbound.Rows[i]
		sc := &r.Scenario
		r.Cells = make([]Cell, len(arms.Inbound))
		for i, a := range arms.Inbound {
			add(sc, func() { r.Cells[i].Result = RunInbound(sc, a) })
		}
		for _, n := range OracleLimits(sc) {
			r.Params = append(r.Params, float64(n))
		}
		if r.Sweep = sw.fresh(sc, len(r.Params)); r.Sweep != nil {
			continue
		}
		r.Sweep = make([]Result, len(r.Params))
		for i, n := range r.Params {
			add(sc, func() { r.Sweep[i] = RunInbound(sc, Semaphore(int(n))) })
		}
	}
	// The costliest runs first, so the last to finish are short ones.
	slices.SortStableFunc(jobs, func(a, b job) int { return cmp.Compare(b.cost, a.cost) })
	fs := make([]func(), len(jobs))
	for i, j := range jobs {
		fs[i] = j.f
	}
	run(fs)
	for _, ev := range []*Evaluation{&rep.Outbound, &rep.Inbound} {
		for i := range ev.Rows {
			r := &ev.Rows[i]
			if sw != nil {
				sw[sw.key(&r.Scenario)] = r.Sweep
			}
			r.judge()
		}
	}
	return rep
}

type job struct {
	cost float64
	f    func()
}

// cost estimates the real time of one run of sc: its arrivals, or its
// closed-loop clients' attempts if every one were refused.
func (sc *Scenario) cost() float64 {
	if sc.Clients > 0 {
		return float64(sc.Clients) * sc.Duration.Seconds() / (sc.BackoffMin + sc.BackoffMax).Seconds() * 2
	}
	return sc.Rate * sc.Duration.Seconds()
}

// Pick splits rep into the rows of the named scenarios and the others.
func (rep Report) Pick(names ...string) (picked, rest Report) {
	split := func(ev Evaluation) (p, r Evaluation) {
		p, r = Evaluation{Direction: ev.Direction, Arms: ev.Arms}, Evaluation{Direction: ev.Direction, Arms: ev.Arms}
		for _, row := range ev.Rows {
			if slices.Contains(names, row.Scenario.Name) {
				p.Rows = append(p.Rows, row)
			} else {
				r.Rows = append(r.Rows, row)
			}
		}
		return p, r
	}
	picked.Outbound, rest.Outbound = split(rep.Outbound)
	picked.Inbound, rest.Inbound = split(rep.Inbound)
	return picked, rest
}

// judge picks the oracle from the sweep and judges every cell.
func (r *Row) judge() {
	best := 0
	r.BestInside = 0
	for i, s := range r.Sweep {
		if s.Goodput > r.Sweep[best].Goodput {
			best = i
		}
		r.BestInside = math.Max(r.BestInside, s.Inside)
	}
	r.Oracle, r.Param = r.Sweep[best], r.Params[best]
	r.InsideBar = InsideBar(r.BestInside)
	r.SettledOracle = 0
	bestIn := 0.0
	for _, s := range r.Sweep {
		r.SettledOracle = math.Max(r.SettledOracle, s.SettledGoodput(&r.Scenario))
		bestIn = math.Max(bestIn, s.SettledInside())
	}
	r.SettledBar = InsideBar(bestIn)
	for i := range r.Cells {
		r.judgeCell(&r.Cells[i])
	}
}

// judgeCell sets c's OfOracle and Meets against r's oracle and bar (judge
// must have picked them): the goal, in the one place it is applied.
func (r *Row) judgeCell(c *Cell) {
	c.OfOracle = 1
	if r.Oracle.Goodput > 0 {
		c.OfOracle = c.Goodput / r.Oracle.Goodput
	}
	c.Meets = c.Inside >= r.InsideBar && c.OfOracle >= GoalOfOracle
	c.SettledOfOracle = 1
	if r.SettledOracle > 0 {
		c.SettledOfOracle = c.SettledGoodput(&r.Scenario) / r.SettledOracle
	}
	c.SettledMeets = c.SettledInside() >= r.SettledBar && c.SettledOfOracle >= GoalOfOracle
}

// Dist is a distribution over scenarios, summed up.
type Dist struct {
	// Median, the 10th percentile (nearest rank) and the minimum.
	Median, P10, Worst float64
}

// undefined is the Dist of no values where 0 would read as a figure.
var undefined = Dist{math.NaN(), math.NaN(), math.NaN()}

// distOf returns the median, the 10th percentile (nearest rank, from below)
// and the minimum of vs.
func distOf(vs []float64) Dist {
	if len(vs) == 0 {
		return Dist{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	p10 := s[max(0, int(math.Ceil(0.1*float64(len(s))))-1)]
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Dist{Median: med, P10: p10, Worst: s[0]}
}

// ArmSummary is one arm over every scenario of an evaluation.
type ArmSummary struct {
	Arm string // the arm's name
	// N is the number of scenarios; Meets how many met the goal.
	N, Meets int
	// OfOracle and Inside are distributions of Cell.OfOracle and
	// Result.Inside over the scenarios.
	OfOracle, Inside Dist
	// Depth and Motion are distributions of Row.DepthAndMotion over the
	// scenarios where both are defined: how deep the arm kept the resource,
	// against the oracle, and what it kept of a fixed policy that deep.
	// NaN in every field where no scenario has them (no sweep).
	Depth, Motion Dist
	// AtLeastFailsafe counts the inbound scenarios in which the arm's
	// goodput was at least failsafe-go's: the parity target's count, for
	// any arm. -1 for failsafe-go itself, outbound arms, and reports
	// without failsafe-go.
	AtLeastFailsafe int
}

// Summary is an evaluation's figures.
type Summary struct {
	// Outbound and Inbound have one entry per arm, in the evaluation's order.
	Outbound, Inbound []ArmSummary
	// AgileAtLeastFailsafe is the share of inbound scenarios where the arm
	// "agile" had a goodput at least failsafe-go's (NaN without both arms).
	AgileAtLeastFailsafe float64
}

// Summarize returns ev's figures, one ArmSummary per arm.
func (ev Evaluation) Summarize() []ArmSummary {
	var out []ArmSummary
	for j, name := range ev.Arms {
		s := ArmSummary{Arm: name, N: len(ev.Rows), AtLeastFailsafe: -1}
		var of, in, depth, motion []float64
		for _, r := range ev.Rows {
			c := r.Cells[j]
			of = append(of, c.OfOracle)
			in = append(in, c.Inside)
			if c.Meets {
				s.Meets++
			}
			if d, m := r.DepthAndMotion(c); !math.IsNaN(d) {
				depth, motion = append(depth, d), append(motion, m)
			}
		}
		s.OfOracle, s.Inside = distOf(of), distOf(in)
		s.Depth, s.Motion = distOf(depth), distOf(motion)
		if len(depth) == 0 {
			s.Depth, s.Motion = undefined, undefined
		}
		out = append(out, s)
	}
	return out
}

// failsafeArm is the inbound arm the parity target compares agile with.
const failsafeArm = "failsafe-go"

// atLeast is the parity verdict of one run: arm a's goodput is at least
// arm b's. Every count of "agile at least failsafe-go" is made of it.
func atLeast(a, b Cell) bool { return a.Goodput >= b.Goodput }

// atLeastSettled is atLeast over the settled part of a run of sc (see
// SettledFrom): every settled count of "agile at least failsafe-go" is made
// of it.
func atLeastSettled(sc *Scenario, a, b Cell) bool {
	return a.SettledGoodput(sc) >= b.SettledGoodput(sc)
}

// Summarize returns the report's figures.
func (rep Report) Summarize() Summary {
	s := Summary{Outbound: rep.Outbound.Summarize(), Inbound: rep.Inbound.Summarize(), AgileAtLeastFailsafe: math.NaN()}
	f := slices.Index(rep.Inbound.Arms, failsafeArm)
	if f < 0 || len(rep.Inbound.Rows) == 0 {
		return s
	}
	for j := range s.Inbound {
		if j == f {
			continue
		}
		n := 0
		for _, r := range rep.Inbound.Rows {
			if atLeast(r.Cells[j], r.Cells[f]) {
				n++
			}
		}
		s.Inbound[j].AtLeastFailsafe = n
		if s.Inbound[j].Arm == "agile" {
			s.AgileAtLeastFailsafe = float64(n) / float64(len(rep.Inbound.Rows))
		}
	}
	return s
}

// Arm returns the summary of the named arm, or false.
func (s Summary) Arm(dir Direction, name string) (ArmSummary, bool) {
	list := s.Outbound
	if dir == Inbound {
		list = s.Inbound
	}
	for _, a := range list {
		if a.Arm == name {
			return a, true
		}
	}
	return ArmSummary{}, false
}
