package eval

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Luck is what a seed set's figures do over several draws of its randomness
// (Seeds.Draw): the same scenarios, other arrivals, costs and delays, and
// another start in the limiters' floor-probe cycle (Scenario.phase). A
// figure read from one draw is worth what it keeps on the others; in
// particular a single run's "agile at least failsafe-go" is a coin toss in a
// scenario where both are near the oracle.
type Luck struct {
	Draws             int       // how many draws the figures are over
	Outbound, Inbound []ArmLuck // one per arm, in the evaluations' order
	// Parity is "agile's goodput at least failsafe-go's", inbound, read
	// over the draws; nil without both arms.
	Parity *ParityLuck
	// KnownOutbound and KnownInbound are what a fixed share or limit that
	// knows its scenario but not its draw gets (KnownLuck).
	KnownOutbound, KnownInbound KnownLuck
	// HindOutbound and HindInbound are each draw's Hindsight: what the
	// best fixed point of each run gets, chosen on the run, by the
	// oracle's rule and by the user's p99.
	HindOutbound, HindInbound []Hindsight
}

// KnownLuck is what a fixed share (outbound) or limit (inbound) that knows
// its scenario, but not the draw, gets. For each scenario and draw it takes
// the point of the oracle's sweep with the best mean goodput over the other
// draws, among those whose mean inside there reaches their mean bar, and is
// judged on this draw as an arm is. It has learnt everything a scenario's
// statistics can teach and nothing of one run's luck: an adaptive law that
// beats it has used what happened in the run, and a target it misses asks
// for more than knowing the scenario (the oracle itself is chosen on the run
// it is scored on).
type KnownLuck struct {
	N   int   // scenarios
	Met []int // scenarios meeting the goal, one count per draw
	// AtFailsafe counts, per draw, the scenarios where its goodput is at
	// least failsafe-go's (inbound, nil without that arm).
	AtFailsafe []int
	// Kinds is the same by kind of resource (ResourceKind), runs of every
	// draw pooled, beside the arm "agile": where a target is within reach
	// of knowing the scenario and where the law falls short of it (a
	// processor past a knee is best at a fixed limit, its pipe, whatever its
	// speed does).
	Kinds []KnownKind
}

// KnownKind is KnownLuck's runs of one kind of resource, over every draw.
type KnownKind struct {
	Kind string
	// Runs counts the kind's runs (a scenario on one draw); Met those the
	// fixed point met the goal in, Agile those the arm "agile" met it in
	// (-1 without that arm).
	Runs, Met, Agile int
}

// ArmLuck is one arm of one direction over the draws.
type ArmLuck struct {
	Arm string
	N   int   // scenarios
	Met []int // scenarios meeting the goal, one count per draw
	// Always and Ever count the scenarios meeting the goal on every draw
	// and on at least one.
	Always, Ever int
	// SD is the standard deviation of one run's of-oracle about its
	// scenario's mean over the draws, pooled over the scenarios: how far a
	// single run's figure moves by luck alone.
	SD float64
}

// ParityLuck is the inbound comparison with failsafe-go over the draws.
type ParityLuck struct {
	N  int   // scenarios
	At []int // scenarios where agile's goodput was at least failsafe-go's, per draw
	// OnMeans counts the scenarios where agile's mean goodput over the
	// draws is at least failsafe-go's; Flips those whose single-draw
	// verdict differs between draws.
	OnMeans, Flips int
	// Near counts the scenarios where failsafe-go's mean is at least
	// NearOracle of the oracle, and NearAt those of them where agile's
	// mean is at least failsafe-go's: there, beating it by more than the
	// luck of a run means beating the oracle.
	Near, NearAt int
	// NearAgile and NearFailsafe are the two arms' mean of-oracle over
	// those scenarios and draws: how far behind agile is where it is behind.
	NearAgile, NearFailsafe float64
	// SD is the pooled standard deviation of one run's difference
	// (agile − failsafe-go, of the oracle) about its scenario's mean.
	SD float64
	// Behind counts the runs (a scenario on one draw) where failsafe-go's
	// goodput was more than agile's, and PastP99 those of them where
	// failsafe-go answered less than P99Inside of what it admitted inside
	// the SLO: it got more through by breaking the p99 target that agile
	// keeps to, where the goal's bar (90%) leaves it room.
	Behind, PastP99 int
	// Within counts, for each of ParityMargins, the runs where agile's
	// goodput was at least that share of failsafe-go's: how far from a tie
	// the runs it is behind in are, beside SD, the luck of one run.
	Within [len(ParityMargins)]int
}

// ParityMargins are the shares of failsafe-go's goodput ParityLuck.Within
// counts runs at: a run's difference moves by several percent of the
// oracle between draws (± 0.07–0.09 inbound on validation), so a run within
// 2% or 5% of failsafe-go is a tie its draw decides, and one 10% behind is
// past that luck.
var ParityMargins = [...]float64{0.98, 0.95, 0.90}

// P99Inside is the share of answers a p99 SLO keeps inside it.
const P99Inside = 0.99

// NearOracle is the share of the oracle's goodput above which an arm is
// "near the oracle" in ParityLuck.
const NearOracle = 0.95

// LuckOf reads reps, one report of the same seed set per draw (rows in the
// same order, names differing only by their draw suffix), as Luck.
func LuckOf(reps []Report) (Luck, error) {
	l := Luck{Draws: len(reps)}
	if len(reps) < 2 {
		return l, fmt.Errorf("eval: luck needs at least two draws, got %d", len(reps))
	}
	for _, d := range []struct {
		evs []Evaluation
		out *[]ArmLuck
	}{{mapEv(reps, func(r Report) Evaluation { return r.Outbound }), &l.Outbound},
		{mapEv(reps, func(r Report) Evaluation { return r.Inbound }), &l.Inbound}} {
		if err := sameRows(d.evs); err != nil {
			return l, err
		}
		for j, arm := range d.evs[0].Arms {
			*d.out = append(*d.out, armLuck(d.evs, j, arm))
		}
	}
	in := mapEv(reps, func(r Report) Evaluation { return r.Inbound })
	a, f := slices.Index(in[0].Arms, "agile"), slices.Index(in[0].Arms, failsafeArm)
	if a >= 0 && f >= 0 && len(in[0].Rows) > 0 {
		l.Parity = parityLuck(in, a, f)
	}
	out := mapEv(reps, func(r Report) Evaluation { return r.Outbound })
	l.KnownOutbound = knownLuck(out, slices.Index(out[0].Arms, "agile"), -1)
	l.KnownInbound = knownLuck(in, a, f)
	for d := range reps {
		l.HindOutbound = append(l.HindOutbound, out[d].Hindsight())
		l.HindInbound = append(l.HindInbound, in[d].Hindsight())
	}
	return l, nil
}

// hindByDirection is one direction's Hindsight per draw, with the
// direction's name and what its fixed point is.
type hindByDirection struct {
	name, point string
	h           []Hindsight
}

// hind returns both directions' Hindsight, outbound first; a direction
// not run has no runs.
func (l Luck) hind() []hindByDirection {
	return []hindByDirection{{"outbound", "share", l.HindOutbound}, {"inbound", "limit", l.HindInbound}}
}

// ran reports whether the direction's scenarios were run.
func (d hindByDirection) ran() bool { return len(d.h) > 0 && d.h[0].Runs > 0 }

// per says one count of each draw's Hindsight, as f reads it, joined.
func (d hindByDirection) per(f func(Hindsight) int) string {
	out := make([]int, len(d.h))
	for i, h := range d.h {
		out[i] = f(h)
	}
	return joinInts(out)
}

// knownByDirection is one direction's KnownLuck, with the direction's name
// and what its fixed point is (a share or a limit), as the reports say them.
type knownByDirection struct {
	name, point string
	k           KnownLuck
}

// known returns both directions' KnownLuck, outbound first.
func (l Luck) known() []knownByDirection {
	return []knownByDirection{{"outbound", "share", l.KnownOutbound}, {"inbound", "limit", l.KnownInbound}}
}

// knownLuck reads evs (one per draw, same rows) as KnownLuck, its kinds
// beside the arm at index a (when a ≥ 0), comparing with the arm at index f
// when f ≥ 0. A scenario whose sweeps differ in length between draws, or
// where no point keeps its bar on the other draws, counts as not meeting
// the goal.
func knownLuck(evs []Evaluation, a, f int) KnownLuck {
	k := KnownLuck{N: len(evs[0].Rows), Met: make([]int, len(evs))}
	if f >= 0 {
		k.AtFailsafe = make([]int, len(evs))
	}
	// The arm's meets by kind are ByKind's, over the draws pooled.
	pooled := Evaluation{Arms: evs[0].Arms}
	for _, ev := range evs {
		pooled.Rows = append(pooled.Rows, ev.Rows...)
	}
	var armKinds []KindSummary
	if a >= 0 {
		armKinds = pooled.ByKind(pooled.Arms[a])
	}
	kinds := make([]KnownKind, len(resourceKinds))
	for j, kind := range resourceKinds {
		kinds[j] = KnownKind{Kind: kind, Agile: -1}
		for _, s := range armKinds {
			if s.Kind == kind {
				kinds[j].Agile = s.Meets
			}
		}
	}
	for i := range evs[0].Rows {
		kk := &kinds[slices.Index(resourceKinds, ResourceKind(&evs[0].Rows[i].Scenario))]
		for d, ev := range evs {
			r := ev.Rows[i]
			kk.Runs++
			p := knownPoint(evs, i, d)
			if p < 0 {
				continue
			}
			c := Cell{Result: r.Sweep[p]}
			r.judgeCell(&c)
			if c.Meets {
				k.Met[d]++
				kk.Met++
			}
			if f >= 0 && atLeast(c, r.Cells[f]) {
				k.AtFailsafe[d]++
			}
		}
	}
	for _, kk := range kinds {
		if kk.Runs > 0 {
			k.Kinds = append(k.Kinds, kk)
		}
	}
	return k
}

// kindsText says k's kinds as "kind: met of runs (agile n)", joined.
func (k KnownLuck) kindsText() string {
	var parts []string
	for _, kk := range k.Kinds {
		s := fmt.Sprintf("%s %d of %d", kk.Kind, kk.Met, kk.Runs)
		if kk.Agile >= 0 {
			s += fmt.Sprintf(" (agile %d)", kk.Agile)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// knownPoint returns the index, in row i's sweep, of the point with the best
// mean goodput over every draw but d among those whose mean inside there
// reaches the mean of their bars; -1 if there is none.
func knownPoint(evs []Evaluation, i, d int) int {
	n := len(evs[d].Rows[i].Sweep)
	best, bestGood := -1, 0.0
	for p := range n {
		var good, inside, bar float64
		ok := true
		for o, ev := range evs {
			if o == d {
				continue
			}
			r := ev.Rows[i]
			if len(r.Sweep) != n {
				ok = false
				break
			}
			good += r.Sweep[p].Goodput
			inside += r.Sweep[p].Inside
			bar += r.InsideBar
		}
		if ok && inside >= bar && (best < 0 || good > bestGood) {
			best, bestGood = p, good
		}
	}
	return best
}

func mapEv(reps []Report, f func(Report) Evaluation) []Evaluation {
	evs := make([]Evaluation, len(reps))
	for i, r := range reps {
		evs[i] = f(r)
	}
	return evs
}

// sameRows checks that every draw holds the same scenarios and arms.
func sameRows(evs []Evaluation) error {
	for _, ev := range evs[1:] {
		if len(ev.Rows) != len(evs[0].Rows) || !slices.Equal(ev.Arms, evs[0].Arms) {
			return fmt.Errorf("eval: luck: the draws hold different scenarios or arms")
		}
		for i, r := range ev.Rows {
			if baseName(r.Scenario.Name) != baseName(evs[0].Rows[i].Scenario.Name) {
				return fmt.Errorf("eval: luck: row %d is %s in one draw and %s in another", i, evs[0].Rows[i].Scenario.Name, r.Scenario.Name)
			}
		}
	}
	return nil
}

// baseName is a scenario's name without its draw suffix.
func baseName(name string) string {
	base, _, _ := splitDraw(name)
	return base
}

func armLuck(evs []Evaluation, j int, arm string) ArmLuck {
	al := ArmLuck{Arm: arm, N: len(evs[0].Rows), Met: make([]int, len(evs))}
	var ss float64
	for i := range evs[0].Rows {
		met := 0
		xs := make([]float64, len(evs))
		for d, ev := range evs {
			c := ev.Rows[i].Cells[j]
			xs[d] = c.OfOracle
			if c.Meets {
				al.Met[d]++
				met++
			}
		}
		if met == len(evs) {
			al.Always++
		}
		if met > 0 {
			al.Ever++
		}
		ss += sumSquares(xs)
	}
	al.SD = pooledSD(ss, al.N, len(evs))
	return al
}

func parityLuck(evs []Evaluation, a, f int) *ParityLuck {
	p := &ParityLuck{N: len(evs[0].Rows), At: make([]int, len(evs))}
	var ss float64
	for i := range evs[0].Rows {
		var ga, gf, oa, of float64
		at := 0
		ds := make([]float64, len(evs))
		for d, ev := range evs {
			ca, cf := ev.Rows[i].Cells[a], ev.Rows[i].Cells[f]
			ga, gf = ga+ca.Goodput, gf+cf.Goodput
			oa, of = oa+ca.OfOracle, of+cf.OfOracle
			ds[d] = ca.OfOracle - cf.OfOracle
			for m, share := range ParityMargins {
				if ca.Goodput >= share*cf.Goodput {
					p.Within[m]++
				}
			}
			if atLeast(ca, cf) {
				p.At[d]++
				at++
			} else {
				p.Behind++
				if cf.Inside < P99Inside {
					p.PastP99++
				}
			}
		}
		if at > 0 && at < len(evs) {
			p.Flips++
		}
		if ga >= gf {
			p.OnMeans++
		}
		if of/float64(len(evs)) >= NearOracle {
			p.Near++
			if oa >= of {
				p.NearAt++
			}
			p.NearAgile += oa / float64(len(evs))
			p.NearFailsafe += of / float64(len(evs))
		}
		ss += sumSquares(ds)
	}
	if p.Near > 0 {
		p.NearAgile /= float64(p.Near)
		p.NearFailsafe /= float64(p.Near)
	}
	p.SD = pooledSD(ss, p.N, len(evs))
	return p
}

// sumSquares is the sum of squared deviations of xs from their mean.
func sumSquares(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	var s float64
	for _, x := range xs {
		s += (x - m) * (x - m)
	}
	return s
}

// pooledSD is the pooled sample standard deviation of n groups of k values
// whose squared deviations from their group means sum to ss.
func pooledSD(ss float64, n, k int) float64 {
	if n == 0 || k < 2 {
		return 0
	}
	return math.Sqrt(ss / float64(n*(k-1)))
}

// WriteLuckText writes l compactly, one line per direction and arm, then
// the parity line.
func WriteLuckText(w io.Writer, l Luck) {
	for _, d := range []struct {
		name string
		arms []ArmLuck
	}{{"outbound", l.Outbound}, {"inbound", l.Inbound}} {
		for _, a := range d.arms {
			if a.N == 0 {
				continue // a direction not run (the command's -direction)
			}
			fmt.Fprintf(w, "%-8s %-12s meets %s of %d (on every draw %d, on any %d) | one run's of-oracle ± %.3f\n",
				d.name, a.Arm, joinInts(a.Met), a.N, a.Always, a.Ever, a.SD)
		}
	}
	for _, d := range l.known() {
		if d.k.N == 0 {
			continue
		}
		fmt.Fprintf(w, "%-8s a fixed %s that knows its scenario (chosen on the other draws) meets %s of %d", d.name, d.point, joinInts(d.k.Met), d.k.N)
		if d.k.AtFailsafe != nil {
			fmt.Fprintf(w, ", at least failsafe-go's goodput in %s", joinInts(d.k.AtFailsafe))
		}
		fmt.Fprintf(w, "; runs by kind: %s\n", d.k.kindsText())
	}
	for _, d := range l.hind() {
		if !d.ran() {
			continue
		}
		fmt.Fprintf(w, "%-8s each run's best fixed %s, chosen on the run: one keeps the p99 inside the SLO in %s of %d, and the best of those meets the goal in %s",
			d.name, d.point, d.per(func(h Hindsight) int { return h.Kept }), d.h[0].Runs,
			d.per(func(h Hindsight) int { return h.KeptMet }))
		if d.h[0].OracleAtFailsafe >= 0 {
			fmt.Fprintf(w, "; at least failsafe-go's goodput: the oracle in %s, the best that keeps the p99 in %s",
				d.per(func(h Hindsight) int { return h.OracleAtFailsafe }),
				d.per(func(h Hindsight) int { return h.KeptAtFailsafe }))
			if d.h[0].AgileKeptAtFailsafe >= 0 {
				fmt.Fprintf(w, " (agile, in the runs where one keeps it, %s)",
					d.per(func(h Hindsight) int { return h.AgileKeptAtFailsafe }))
			}
			if k := hindKindsText(d.h); k != "" {
				fmt.Fprintf(w, "; at least failsafe-go's, by kind, of the runs where one keeps it (draws pooled): %s", k)
			}
		}
		fmt.Fprintln(w)
	}
	if p := l.Parity; p != nil {
		fmt.Fprintf(w, "inbound  agile ≥ failsafe-go in %s of %d draw by draw, %d on the means, %d flip between draws; "+
			"failsafe-go ≥ %.2f of the oracle in %d, agile ≥ it there in %d (means there %.3f and %.3f); one run's difference ± %.3f; "+
			"failsafe-go ahead in %d runs, under %.0f%% inside in %d of them; agile within %s of failsafe-go's goodput or above in %s of %d runs\n",
			joinInts(p.At), p.N, p.OnMeans, p.Flips, NearOracle, p.Near, p.NearAt, p.NearAgile, p.NearFailsafe, p.SD,
			p.Behind, 100*P99Inside, p.PastP99, marginsText(), joinInts(p.Within[:]), p.N*len(p.At))
	}
}

// WriteLuckMarkdown writes l as a section of the evaluation's page.
func WriteLuckMarkdown(w io.Writer, l Luck, first uint64) {
	fmt.Fprintf(w, "## How much of it is luck\n\n")
	fmt.Fprintf(w, "The same scenarios on %d draws of their randomness (arrivals, each request's cost and delay, "+
		"clients' think times, and, after draw 0, where the run starts in the limiters' 5 s floor-probe cycle; "+
		"draws %d–%d, the figures above are draw %d). *Meets* per draw, then the scenarios that "+
		"meet the goal on every draw and on any; *± one run* is the standard deviation of a single run's of-oracle "+
		"about its scenario's mean over the draws, pooled over the scenarios.\n\n", l.Draws, first, first+uint64(l.Draws)-1, first)
	fmt.Fprintf(w, "| direction | arm | meets, per draw | on every draw | on any | ± one run |\n|---|---|---|---|---|---|\n")
	for _, d := range []struct {
		name string
		arms []ArmLuck
	}{{"outbound", l.Outbound}, {"inbound", l.Inbound}} {
		for _, a := range d.arms {
			fmt.Fprintf(w, "| %s | %s | %s of %d | %d | %d | %.3f |\n", d.name, a.Arm, joinInts(a.Met), a.N, a.Always, a.Ever, a.SD)
		}
	}
	for _, d := range l.known() {
		if d.k.N > 0 {
			fmt.Fprintf(w, "| %s | a fixed %s that knows its scenario | %s of %d | | | |\n", d.name, d.point, joinInts(d.k.Met), d.k.N)
		}
	}
	for _, d := range l.hind() {
		if d.ran() {
			fmt.Fprintf(w, "| %s | each run's best fixed %s that keeps the p99, chosen on the run | %s of %d | | | |\n", d.name, d.point,
				d.per(func(h Hindsight) int { return h.KeptMet }), d.h[0].Runs)
		}
	}
	fmt.Fprintf(w, "\n*A fixed share or limit that knows its scenario* is not an arm: for each scenario and draw it is the point "+
		"of the oracle's sweep with the best mean goodput over the other draws, among those whose mean inside there reaches "+
		"their bar, judged on this draw. It knows all a scenario's statistics can teach and none of the run's luck; a target "+
		"it misses asks for more than knowing the scenario.")
	for _, d := range l.known() {
		if len(d.k.Kinds) > 0 {
			fmt.Fprintf(w, " %s, the runs it meets the goal in by kind of resource: %s.", firstUpper(d.name), d.k.kindsText())
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	if p := l.Parity; p != nil {
		fmt.Fprintf(w, "Inbound, `agile`'s goodput is at least failsafe-go's in %s of %d scenarios draw by draw, and in %d on "+
			"the means of the draws; the verdict changes between draws in %d. A single run's difference (agile − failsafe-go, "+
			"of the oracle) moves by ± %.3f, and `agile`'s goodput is within %s of failsafe-go's or above it in %s of the %d runs (a scenario on one draw). failsafe-go is at %.2f of the oracle or more in %d scenarios, and `agile` at least "+
			"matches it there in %d (there `agile` averages %.3f of the oracle, failsafe-go %.3f): in those, one run's verdict is close to a coin toss. Of the %d runs (a scenario on one draw) "+
			"in which failsafe-go got more through, it answered less than %.0f%% of what it admitted inside the SLO in %d: "+
			"the p99 target `agile` keeps to, which the goal's bar of 90%% inside leaves room past.\n\n",
			joinInts(p.At), p.N, p.OnMeans, p.Flips, p.SD, marginsText(), joinInts(p.Within[:]), p.N*len(p.At),
			NearOracle, p.Near, p.NearAt, p.NearAgile, p.NearFailsafe, p.Behind, 100*P99Inside, p.PastP99)
		if k := l.KnownInbound; k.AtFailsafe != nil {
			fmt.Fprintf(w, "A fixed limit that knows its scenario gets at least failsafe-go's goodput in %s of %d scenarios draw by draw.\n\n",
				joinInts(k.AtFailsafe), k.N)
		}
	}
	writeHindMarkdown(w, l)
}

// writeHindMarkdown writes l's Hindsight as a paragraph of the page.
func writeHindMarkdown(w io.Writer, l Luck) {
	var parts []string
	for _, d := range l.hind() {
		if !d.ran() {
			continue
		}
		s := fmt.Sprintf("%s, a fixed %s keeps the p99 inside the SLO in %s of %d runs draw by draw, and the best of them meets the goal in %s",
			firstUpper(d.name), d.point, d.per(func(h Hindsight) int { return h.Kept }), d.h[0].Runs,
			d.per(func(h Hindsight) int { return h.KeptMet }))
		if d.h[0].OracleAtFailsafe >= 0 {
			s += fmt.Sprintf("; it gets at least failsafe-go's goodput in %s, and the oracle itself in %s",
				d.per(func(h Hindsight) int { return h.KeptAtFailsafe }),
				d.per(func(h Hindsight) int { return h.OracleAtFailsafe }))
			if d.h[0].AgileKeptAtFailsafe >= 0 {
				s += fmt.Sprintf("; in the runs where such a %s exists, `agile` gets at least failsafe-go's goodput in %s",
					d.point, d.per(func(h Hindsight) int { return h.AgileKeptAtFailsafe }))
			}
			if k := hindKindsText(d.h); k != "" {
				s += fmt.Sprintf(" (by kind of resource, over the draws: %s)", k)
			}
		}
		parts = append(parts, s+".")
	}
	if len(parts) == 0 {
		return
	}
	fmt.Fprintf(w, "*Each run's best fixed point, chosen on the run* (`eval.Hindsight`): the point of the oracle's sweep with the most "+
		"goodput among those whose p99 is inside the SLO, the target `agile` keeps (SPEC §3), where the goal's bar is 90%% "+
		"inside. It knows the run it is scored on, as the oracle does; a law that keeps the p99 gets past it only by moving "+
		"where a fixed point cannot. %s\n\n", strings.Join(parts, " "))
}

// firstUpper returns s with its first letter upper-case.
func firstUpper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// marginsText says ParityMargins as the shortfalls they allow: "2%, 5%, 10%".
func marginsText() string {
	parts := make([]string, len(ParityMargins))
	for i, m := range ParityMargins {
		parts[i] = fmt.Sprintf("%.0f%%", 100*(1-m))
	}
	return strings.Join(parts, ", ")
}
