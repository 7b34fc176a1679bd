package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
)

// KindSummary is one arm's figures on the scenarios of one kind: a kind of
// resource (see ResourceKind) or a kind of trace.
type KindSummary struct {
	Kind string // the kind's name
	// N counts the runs of the kind; Meets those that met the goal.
	N, Meets int
	// OfOracle is the median of the runs' Cell.OfOracle; Depth and Motion
	// the medians of their Row.DepthAndMotion, over the runs where both are
	// defined (NaN if none).
	OfOracle, Depth, Motion float64
	// AtLeastFailsafe counts the runs in which the arm's goodput was at
	// least failsafe-go's; -1 where the evaluation has no failsafe-go arm.
	AtLeastFailsafe int
}

// The kinds of resource ResourceKind names.
const (
	kindOneServer = "one FIFO server"
	kindServers   = "FIFO, 2 servers or more"
	kindKnee      = "processor shared past a knee"
)

var resourceKinds = []string{kindOneServer, kindServers, kindKnee}

// The kinds of SLO SLOKind names.
const (
	kindSLOKept = "some fixed limit keeps the p99 inside the SLO"
	kindSLOLost = "no fixed limit keeps the p99 inside the SLO"
)

var sloKinds = []string{kindSLOKept, kindSLOLost}

// The kinds of request mix MixKind names.
const (
	kindOneRoute = "one route"
	kindMix      = "a mix of routes"
)

var mixKinds = []string{kindOneRoute, kindMix}

// kindGroups are the four ways the breakdowns by kind group scenarios: by
// kind of resource (ResourceKind), by kind of trace, by whether the
// oracle's sweep kept the SLO's p99 (SLOKind), and by whether the requests
// mix routes (MixKind).
var kindGroups = []struct {
	name  string
	kinds []string
	of    func(*Row) string
}{
	{"resource", resourceKinds, func(r *Row) string { return ResourceKind(&r.Scenario) }},
	{"trace", traceNames[:], func(r *Row) string { return r.Scenario.Trace.Kind.String() }},
	{"slo", sloKinds, SLOKind},
	{"mix", mixKinds, func(r *Row) string { return MixKind(&r.Scenario) }},
}

// MixKind says whether a scenario's requests mix routes of different costs
// (a health check beside a report) or are all of one route. A round's
// answers are the calls that finished in it, weighted toward the route that
// holds the slots, so one round of a mix is not the mix; inbound, the mix
// is the split that costs the law the most runs (docs/controller-rewrite.md,
// fifty-first session).
func MixKind(sc *Scenario) string {
	if len(sc.Routes) > 1 {
		return kindMix
	}
	return kindOneRoute
}

// SLOKind says whether some fixed limit (or pacing share, outbound) of r's
// sweep kept the p99 of what reached the resource inside the scenario's
// SLO, the limiters' own guard. Where none did, the resource's tail is past
// the SLO at any window (a route dearer than the SLO, or a tail the SLO is
// too close to), and a limiter that keeps the p99 answers it by narrowing
// while the goal's bar, 90% inside, lets the oracle run past it: the kind
// tells those runs apart. "" for a row with no sweep or no SLO.
func SLOKind(r *Row) string {
	if len(r.Sweep) == 0 || r.Scenario.SLO <= 0 {
		return ""
	}
	for _, s := range r.Sweep {
		if s.Answered > 0 && s.P99 <= r.Scenario.SLO {
			return kindSLOKept
		}
	}
	return kindSLOLost
}

// ResourceKind names the kind of resource a scenario protects, as the
// breakdown by kind groups them: a processor shared past a knee, one FIFO
// server, or several. A queue costs FIFO servers nothing and slows every
// call past a knee; one server's tail is the whole resource's.
func ResourceKind(sc *Scenario) string {
	switch {
	case sc.Law == PSKnee:
		return kindKnee
	case sc.Servers == 1:
		return kindOneServer
	}
	return kindServers
}

// ByKind returns arm's figures on ev's scenarios, by kind of resource
// (ResourceKind), then by kind of trace (the capacity trace's kind), then by
// whether some fixed limit kept the SLO's p99 (SLOKind; rows with no sweep
// have none), then by whether the requests mix routes (MixKind), each kind
// with at least one scenario, in that order. A scenario counts once in each
// list.
// It returns nil if ev has no such arm.
func (ev Evaluation) ByKind(arm string) []KindSummary {
	j := slices.Index(ev.Arms, arm)
	if j < 0 {
		return nil
	}
	f := slices.Index(ev.Arms, failsafeArm)
	var out []KindSummary
	for _, g := range kindGroups {
		for _, kind := range g.kinds {
			s := KindSummary{Kind: kind, AtLeastFailsafe: -1}
			if f >= 0 {
				s.AtLeastFailsafe = 0
			}
			var of, depth, motion []float64
			for _, r := range ev.only(g.of, kind).Rows {
				c := r.Cells[j]
				s.N++
				of = append(of, c.OfOracle)
				if d, m := r.DepthAndMotion(c); !math.IsNaN(d) {
					depth, motion = append(depth, d), append(motion, m)
				}
				if c.Meets {
					s.Meets++
				}
				if f >= 0 && atLeast(c, r.Cells[f]) {
					s.AtLeastFailsafe++
				}
			}
			if s.N > 0 {
				s.OfOracle, s.Depth, s.Motion = distOf(of).Median, math.NaN(), math.NaN()
				if len(depth) > 0 {
					s.Depth, s.Motion = distOf(depth).Median, distOf(motion).Median
				}
				out = append(out, s)
			}
		}
	}
	return out
}

// KindPaired is Compare on the scenarios of one kind.
type KindPaired struct {
	// Group is how the kind was read: "resource" (ResourceKind),
	// "trace" (the capacity trace's kind), "slo" (SLOKind) or "mix"
	// (MixKind).
	Group, Kind string
	Paired
}

// CompareByKind is Compare on each kind's scenarios, grouped as ByKind
// groups them (by resource, by trace, by SLO, by mix), for every kind that
// both a and b ran. A change to the law often lifts one kind and costs
// another (a smaller step after each reversal lifted processors shared past
// a knee and cost FIFO servers at a few calls a second), and the ratio over
// every scenario hides both.
func CompareByKind(a, b Evaluation, arm string) []KindPaired {
	var out []KindPaired
	for _, g := range kindGroups {
		for _, kind := range g.kinds {
			p := Compare(a.only(g.of, kind), b.only(g.of, kind), arm)
			if p.N > 0 {
				out = append(out, KindPaired{Group: g.name, Kind: kind, Paired: p})
			}
		}
	}
	return out
}

// only returns ev with only the rows of kind, as kindOf reads them.
func (ev Evaluation) only(kindOf func(*Row) string, kind string) Evaluation {
	k := ev
	k.Rows = nil
	for i := range ev.Rows {
		if kindOf(&ev.Rows[i]) == kind {
			k.Rows = append(k.Rows, ev.Rows[i])
		}
	}
	return k
}

// Pool returns one report of every run in reps: the same scenarios on
// several draws count as that many runs. The reports must have the same
// arms, as the draws of one evaluation do.
func Pool(reps []Report) Report {
	var p Report
	for i, r := range reps {
		if i == 0 {
			p.Outbound.Direction, p.Outbound.Arms = r.Outbound.Direction, r.Outbound.Arms
			p.Inbound.Direction, p.Inbound.Arms = r.Inbound.Direction, r.Inbound.Arms
		}
		p.Outbound.Rows = append(p.Outbound.Rows, r.Outbound.Rows...)
		p.Inbound.Rows = append(p.Inbound.Rows, r.Inbound.Rows...)
	}
	return p
}

// WriteKindsMarkdown writes the arm "agile"'s figures by kind of resource,
// of trace, of SLO and of request mix, over rep's runs (draws of them
// pooled: see Pool).
func WriteKindsMarkdown(w io.Writer, rep Report, draws int) {
	fmt.Fprintf(w, "## By kind\n\n")
	runs := "scenario"
	if draws > 1 {
		runs = fmt.Sprintf("run (a scenario on one of the %d draws)", draws)
	}
	fmt.Fprintf(w, "`agile`'s figures by the kind of resource and by what happens to it, one row a kind: "+
		"each %s counts once under its resource, once under its trace, once under whether some fixed limit "+
		"of the oracle's sweep kept the p99 inside the SLO (where none did, the resource's own tail is past the SLO "+
		"at any window, and only the goal's bar of 90%% inside (less where no fixed limit reaches it) can be met, not "+
		"the p99 the limiter guards), and once under whether its requests mix routes of different costs. *Depth* and *motion* are the medians of the split in \"Depth and motion\", above. "+
		"Groups are small: read the counts.\n\n", runs)
	for _, ev := range []Evaluation{rep.Outbound, rep.Inbound} {
		ks := ev.ByKind("agile")
		if len(ks) == 0 {
			continue
		}
		fs := ks[0].AtLeastFailsafe >= 0
		fmt.Fprintf(w, "### %s\n\n| kind | runs | meets the goal | of oracle: median | depth | motion |", title(ev.Direction.String()))
		if fs {
			fmt.Fprintf(w, " at least failsafe-go's goodput |")
		}
		fmt.Fprintf(w, "\n|---|---|---|---|---|---|")
		if fs {
			fmt.Fprintf(w, "---|")
		}
		fmt.Fprintln(w)
		for _, k := range ks {
			fmt.Fprintf(w, "| %s | %d | %d (%.0f%%) | %.2f | %s | %s |", k.Kind, k.N, k.Meets, 100*float64(k.Meets)/float64(k.N), k.OfOracle, ratio(k.Depth), ratio(k.Motion))
			if fs {
				fmt.Fprintf(w, " %d (%.0f%%) |", k.AtLeastFailsafe, 100*float64(k.AtLeastFailsafe)/float64(k.N))
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w)
	}
}

// ratio formats a ratio to two decimals, or a dash where it is undefined.
func ratio(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}
