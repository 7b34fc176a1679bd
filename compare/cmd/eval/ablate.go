package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/eval"
)

// runAblation evaluates the agile arms on the seed sets with every rule of
// the law, then with each named rule turned off in turn
// (AGILELIMITER_ABLATE, read by an ablation build of core; a+b turns off
// both at once), and prints one
// line per rule and set: the figures the issue's goal is judged by, and how
// far each moved. A rule whose removal moves nothing protects nothing.
func runAblation(t *testing.T, sets []eval.Seeds, rules []string, cache string, n int) error {
	sweeps, err := loadSweeps(cache)
	if err != nil {
		return err
	}
	arms, _ := eval.DefaultArms().Only("agile")
	var scs []eval.Scenario
	for _, s := range sets {
		scs = append(scs, s.Scenarios(n)...)
	}
	defer os.Unsetenv("AGILELIMITER_ABLATE")
	var base []eval.Summary
	for i, rule := range append([]string{""}, rules...) {
		os.Setenv("AGILELIMITER_ABLATE", strings.ReplaceAll(rule, "+", ","))
		rep := eval.EvaluateWith(scs, arms, eval.Bubbles(t), sweeps)
		if i == 0 {
			if err := saveSweeps(cache, sweeps); err != nil {
				return err
			}
		}
		for j, s := range sets {
			picked, _ := rep.Pick(s.Names(n)...)
			sum := picked.Summarize()
			if i == 0 {
				base = append(base, sum)
				fmt.Printf("%-14s %-10s %s\n", "all rules", s.Name, figures(sum, eval.Summary{}))
				continue
			}
			fmt.Printf("%-14s %-10s %s\n", "no "+rule, s.Name, figures(sum, base[j]))
		}
	}
	return nil
}

// figures formats the agile arm's outbound and inbound figures, with the
// change from base when base has them.
func figures(s, base eval.Summary) string {
	line := ""
	for _, dir := range []eval.Direction{eval.Outbound, eval.Inbound} {
		a, ok := s.Arm(dir, "agile")
		if !ok {
			continue
		}
		b, hasBase := base.Arm(dir, "agile")
		f := func(v, w float64) string {
			if !hasBase || v == w {
				return fmt.Sprintf("%.2f", v)
			}
			return fmt.Sprintf("%.2f(%+.2f)", v, v-w)
		}
		meets := fmt.Sprintf("%d/%d", a.Meets, a.N)
		if hasBase && a.Meets != b.Meets {
			meets += fmt.Sprintf("(%+d)", a.Meets-b.Meets)
		}
		line += fmt.Sprintf("| %s meets %-9s median %-11s p10 %-11s worst %-11s ", dir, meets,
			f(a.OfOracle.Median, b.OfOracle.Median), f(a.OfOracle.P10, b.OfOracle.P10), f(a.OfOracle.Worst, b.OfOracle.Worst))
	}
	return line
}
