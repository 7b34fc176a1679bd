package eval

import (
	"fmt"
	"io"
	"slices"
)

// A run's figures mix two things: what its start cost, and how well the law
// holds the resource once the start is behind it. The evaluation's runs are
// short (15–40 s), closed-loop clients all arrive in the first 100 ms, and
// a default start serves half MaxLimit at once (the cold-burst target), so
// the start weighs on them as it would not on a service that runs for
// hours. The settled figures count only the calls offered after
// SettledFrom, a quarter into the run, against a sweep judged the same way
// (Row.SettledOracle, Row.SettledBar): they are not a goal, but a way to
// read which part of a miss is the start. An arm started at the resource's
// pipe (KnownStart) tells what the start costs; the settled figures tell
// what is left once it has passed.

// SettledKind is one arm's runs of one kind of resource (ResourceKind, or
// "all"), judged on the whole run and on its settled part.
type SettledKind struct {
	Kind string
	// N counts the runs; Meets those meeting the goal over the whole run,
	// SettledMeets those meeting it over the settled part (Cell.SettledMeets).
	N, Meets, SettledMeets int
	// AtLeastFailsafe and SettledAtLeastFailsafe count the runs whose
	// goodput, over the whole run and over the settled part, is at least
	// failsafe-go's; -1 without a failsafe-go arm, or for that arm itself.
	AtLeastFailsafe, SettledAtLeastFailsafe int
}

// SettledArm is one arm's SettledKind of every kind of resource with a run,
// in ResourceKind's order, then of all runs together.
type SettledArm struct {
	Arm   string
	Kinds []SettledKind
}

// kindAll names the SettledKind of every run.
const kindAll = "all"

// Settled returns every arm's runs of ev judged over the whole run and over
// its settled part, by kind of resource.
func (ev Evaluation) Settled() []SettledArm {
	f := slices.Index(ev.Arms, failsafeArm)
	var out []SettledArm
	for j, arm := range ev.Arms {
		a := SettledArm{Arm: arm}
		for _, kind := range append(slices.Clone(resourceKinds), kindAll) {
			k := SettledKind{Kind: kind, AtLeastFailsafe: -1, SettledAtLeastFailsafe: -1}
			vs := f >= 0 && f != j
			if vs {
				k.AtLeastFailsafe, k.SettledAtLeastFailsafe = 0, 0
			}
			for i := range ev.Rows {
				r := &ev.Rows[i]
				if kind != kindAll && ResourceKind(&r.Scenario) != kind {
					continue
				}
				c := r.Cells[j]
				k.N++
				k.Meets += b2i(c.Meets)
				k.SettledMeets += b2i(c.SettledMeets)
				if vs {
					k.AtLeastFailsafe += b2i(atLeast(c, r.Cells[f]))
					k.SettledAtLeastFailsafe += b2i(atLeastSettled(&r.Scenario, c, r.Cells[f]))
				}
			}
			if k.N > 0 {
				a.Kinds = append(a.Kinds, k)
			}
		}
		out = append(out, a)
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WriteSettledText writes rep's Settled figures, a line per arm and kind:
// runs meeting the goal, and (inbound) at failsafe-go's goodput, over the
// whole run → over its settled part.
func WriteSettledText(w io.Writer, rep Report) {
	for _, ev := range []Evaluation{rep.Outbound, rep.Inbound} {
		if len(ev.Rows) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s, the whole run → the calls offered after its first quarter:\n", ev.Direction)
		for _, a := range ev.Settled() {
			for _, k := range a.Kinds {
				fmt.Fprintf(w, "  %-18s %-30s %4d runs  meets %4d → %-4d", a.Arm, k.Kind, k.N, k.Meets, k.SettledMeets)
				if k.AtLeastFailsafe >= 0 {
					fmt.Fprintf(w, "  at least failsafe-go's goodput %4d → %d", k.AtLeastFailsafe, k.SettledAtLeastFailsafe)
				}
				fmt.Fprintln(w)
			}
		}
	}
}
