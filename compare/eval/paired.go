package eval

import (
	"math"
	"slices"
)

// Paired compares one arm's cells in two evaluations of the same scenarios
// (the law with a rule and without it, say), scenario by scenario: a change
// that moves a count of forty scenarios by one or two is as often chance as
// not, and the pairs say which.
type Paired struct {
	// N is how many scenarios both evaluations ran.
	N int
	// Ratio is the geometric mean, over the scenarios, of the second
	// evaluation's goodput over the first's (of the oracle's, each).
	Ratio float64
	// Better and Worse count the scenarios whose goodput moved by more than
	// PairedMargin either way, or that began or ceased to meet the goal.
	Better, Worse int
	// P is the two-sided sign test's p-value of Better against Worse: the
	// chance that a change that moves nothing splits them at least as
	// unevenly.
	P float64
}

// PairedMargin is the move in a scenario's goodput (as a ratio) that counts
// as better or worse in Paired when the scenario meets the goal both times
// or neither: 5%, a difference a user would see in a dashboard. Smaller moves
// count only in Ratio.
const PairedMargin = 0.05

// Compare pairs arm's cells in a and b by scenario name. Scenarios that only
// one of them ran are left out.
func Compare(a, b Evaluation, arm string) Paired {
	ia, ib := slices.Index(a.Arms, arm), slices.Index(b.Arms, arm)
	if ia < 0 || ib < 0 {
		return Paired{Ratio: math.NaN(), P: math.NaN()}
	}
	cells := map[string]Cell{}
	for _, r := range a.Rows {
		cells[r.Scenario.Name] = r.Cells[ia]
	}
	var p Paired
	var logs float64
	for _, r := range b.Rows {
		x, ok := cells[r.Scenario.Name]
		if !ok {
			continue
		}
		y := r.Cells[ib]
		p.N++
		ratio := ratioOf(y.OfOracle, x.OfOracle)
		logs += math.Log(ratio)
		flip := x.Meets != y.Meets
		switch {
		case flip && y.Meets, !flip && ratio > 1+PairedMargin:
			p.Better++
		case flip && x.Meets, !flip && ratio < 1/(1+PairedMargin):
			p.Worse++
		}
	}
	p.Ratio = math.NaN()
	if p.N > 0 {
		p.Ratio = math.Exp(logs / float64(p.N))
	}
	p.P = signTest(p.Better, p.Worse)
	return p
}

// ratioOf is y/x, with a floor of a hundredth of the oracle under both: a
// scenario neither served says nothing either way.
func ratioOf(y, x float64) float64 {
	const least = 0.01
	return math.Max(y, least) / math.Max(x, least)
}

// signTest is the two-sided binomial sign test of k successes against m
// failures at one half: the probability of a split at least as uneven.
func signTest(k, m int) float64 {
	n := k + m
	if n == 0 {
		return 1
	}
	lo := min(k, m)
	// P(X ≤ lo) for X ~ Binomial(n, ½), doubled.
	var sum float64
	for i := 0; i <= lo; i++ {
		sum += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*sum)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
