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
// both at once), or a threshold set to another value (name=value, through
// AGILELIMITER_KNOB; a rule and a value combine the same way), and prints one
// line per rule and set: the figures the issue's goal is judged by, how far
// each moved, and the scenario-by-scenario comparison (pairs). A rule whose
// removal moves nothing protects nothing. With draws > 1 every set runs on
// that many draws and each scenario of each draw is one pair: one draw's
// pairs move by luck as much as by most rules.
func runAblation(t *testing.T, sets []eval.Seeds, draws int, rules []string, cache string, n int) error {
	sweeps, err := loadSweeps(cache)
	if err != nil {
		return err
	}
	arms, _ := eval.DefaultArms().Only("agile")
	var scs []eval.Scenario
	names := make([][]string, len(sets))
	for j, s := range sets {
		for _, sd := range s.Draws(draws) {
			scs = append(scs, sd.Scenarios(n)...)
			names[j] = append(names[j], sd.Names(n)...)
		}
	}
	defer os.Unsetenv("AGILELIMITER_ABLATE")
	defer os.Unsetenv("AGILELIMITER_KNOB")
	var base []eval.Summary
	var baseRep []eval.Report
	for i, rule := range append([]string{""}, rules...) {
		off, knobs, label := variant(rule)
		os.Setenv("AGILELIMITER_ABLATE", off)
		os.Setenv("AGILELIMITER_KNOB", knobs)
		rep := eval.EvaluateWith(scs, arms, eval.Bubbles(t), sweeps)
		if i == 0 {
			if err := saveSweeps(cache, sweeps); err != nil {
				return err
			}
		}
		for j, s := range sets {
			picked, _ := rep.Pick(names[j]...)
			sum := picked.Summarize()
			name := s.Name
			if draws > 1 {
				name = fmt.Sprintf("%s×%d", s.Name, draws)
			}
			if i == 0 {
				base, baseRep = append(base, sum), append(baseRep, picked)
				fmt.Printf("%-14s %-10s %s\n", "all rules", name, figures(sum, eval.Summary{}))
				continue
			}
			fmt.Printf("%-14s %-10s %s%s\n", label, name, figures(sum, base[j]), pairs(baseRep[j], picked))
			fmt.Print(pairsByKind(baseRep[j], picked))
		}
	}
	return nil
}

// variant reads one -ablate entry, parts joined by +: the rules it turns off
// (AGILELIMITER_ABLATE) and the thresholds it sets (name=value,
// AGILELIMITER_KNOB), each comma-separated, and the label its line gets.
func variant(entry string) (off, knobs, label string) {
	var rules, values, labels []string
	for _, part := range strings.Split(entry, "+") {
		if strings.Contains(part, "=") {
			values = append(values, part)
			labels = append(labels, part)
		} else {
			rules = append(rules, part)
			labels = append(labels, "no "+part)
		}
	}
	return strings.Join(rules, ","), strings.Join(values, ","), strings.Join(labels, "+")
}

// pairs formats, for each direction, how the agile arm's goodput moved from
// base to rep scenario by scenario: the geometric mean of the ratios, how
// many scenarios fell and rose (see eval.Compare), and the sign test's
// p-value. A rule whose removal leaves p far from 0 protects no figure
// beyond chance, whatever a count moved.
func pairs(base, rep eval.Report) string {
	line := ""
	for _, ev := range [][2]eval.Evaluation{{base.Outbound, rep.Outbound}, {base.Inbound, rep.Inbound}} {
		p := eval.Compare(ev[0], ev[1], "agile")
		if p.N == 0 {
			continue
		}
		line += fmt.Sprintf("| %s ×%.3f −%d/+%d p %.2f ", ev[0].Direction, p.Ratio, p.Worse, p.Better, p.P)
	}
	return line
}

// pairsByKind formats pairs by kind of resource, of trace and of mix (and
// of SLO, where the runs have sweeps), a line for each direction and
// grouping: each kind's geometric mean of the goodput ratios, the
// scenarios that fell and rose, and how many it has. A change that lifts
// one kind and costs another moves the ratio over every scenario by
// little; these lines show both.
func pairsByKind(base, rep eval.Report) string {
	var b strings.Builder
	for _, ev := range [][2]eval.Evaluation{{base.Outbound, rep.Outbound}, {base.Inbound, rep.Inbound}} {
		group := ""
		for _, k := range eval.CompareByKind(ev[0], ev[1], "agile") {
			if k.Group != group {
				if group != "" {
					b.WriteString("\n")
				}
				group = k.Group
				fmt.Fprintf(&b, "    %s by %s:", ev[0].Direction, group)
			} else {
				b.WriteString(" ·")
			}
			fmt.Fprintf(&b, " %s ×%.3f −%d/+%d of %d", k.Kind, k.Ratio, k.Worse, k.Better, k.N)
		}
		if group != "" {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// figures formats the agile arm's outbound and inbound figures, with the
// change from base when base has them.
func figures(s, base eval.Summary) string {
	line := ""
	for _, dir := range []eval.Direction{eval.Outbound, eval.Inbound} {
		a, ok := s.Arm(dir, "agile")
		if !ok || a.N == 0 {
			continue // not run (-direction)
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
