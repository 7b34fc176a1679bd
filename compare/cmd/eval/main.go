// Command eval runs the evaluation of compare/eval: random scenarios drawn
// from a seed set, every arm against the oracle, on virtual time, and writes
// docs/compare/eval.md with a compact summary on stdout. Run it from the
// repository root:
//
//	go run ./compare/cmd/eval -set validation
//
// Flags: -set training|validation|all picks the seeds (all writes the
// validation page and prints both summaries), -n keeps the first n scenarios
// of each direction, -out is the directory for eval.md (empty: write
// nothing), -v prints every scenario's figures (each arm's with the calls it
// held in flight on average, its depth and its motion: eval.Row.Steady), -arms keeps only the named
// arms (the oracle always runs) and can name failsafe-go-p99, failsafe-go
// behind the law's p99 guard (eval.FailsafeGuarded), which runs only when
// named: how often it gets failsafe-go's own goodput is how much of the
// parity target a limiter that keeps the p99 reaches moving its limit as
// failsafe-go does; and agile-known-start, the limiter started at the
// resource's pipe (eval.KnownStart): what the law's start costs. -sweeps
// names a JSON file the oracle's sweeps are read from and added to: they do
// not depend on the limiter, so a tuning loop runs
//
//	go run ./compare/cmd/eval -set training -out "" -arms agile,agile-slo -sweeps /tmp/sweeps.json
//
// in seconds once the first run has filled the file. The two named scenarios run
// every time and are reported apart. -settled prints, for each arm and kind of
// resource, the runs meeting the goal (and, inbound, at failsafe-go's goodput)
// over the whole run and over the calls offered after its first quarter
// (eval.Settled): which part of a miss the start makes, and which part the
// law leaves once the start has passed.
//
// -ablate names rules of the law to turn off one at a time (a+b turns
// off both): the command evaluates the agile arms with every rule, then
// without each, and prints the figures each rule protects. An entry
// name=value instead sets one of the law's thresholds (alpha, gain,
// smoothing, slo-z, floor-period: core's knob calls) to another value, and
// the figures say what the value in the law buys. Beside each variant's
// figures come the scenario-by-scenario pairs against the law (eval.Compare),
// over each direction and then by kind of resource, of trace, of SLO and
// of mix (eval.CompareByKind): a change that lifts one kind and costs
// another shows there. It needs core built so that it reads
// AGILELIMITER_ABLATE and AGILELIMITER_KNOB, which only the tag
// agilelimiter_ablate does:
//
//	go run -tags agilelimiter_ablate ./compare/cmd/eval -set training -sweeps /tmp/sweeps.json -ablate gate,floor-probe
//	go run -tags agilelimiter_ablate ./compare/cmd/eval -set development -direction inbound -sweeps /tmp/sweeps.json -ablate alpha=2,gain=1.35
//
// -draw N runs the seed sets' scenarios on another draw of their randomness
// (arrivals, each request's cost and delay, clients' think times), the
// scenarios themselves unchanged: how far a figure moves between draws is
// how much of it is luck. The oracle's sweeps are drawn again too. Reports
// read draw 0, so -draw needs -out "":
//
//	go run ./compare/cmd/eval -set validation -draw 1 -out "" -sweeps /tmp/sweeps.json
//
// With -ablate, -draws K pools K draws: each scenario of each draw is one
// pair of the comparison.
//
// -draws K runs the sets on K draws, from -draw on, and reports what each
// figure keeps from draw to draw: meets per draw, the scenarios meeting the
// goal on every draw and on any, how far one run's figure moves by luck, and
// the comparison with failsafe-go draw by draw and on the means. With -out,
// the page reads the first draw and adds that report (see eval.Luck):
//
//	go run ./compare/cmd/eval -set validation -draws 5 -sweeps /tmp/sweeps.json
//
// -trace runs one scenario (a named one, or out-N / in-N for the scenario
// seed N draws, with /dK or -draw K for its draw K: out-152/d2) with the
// project's limiter alone and prints what its controller read, held and
// decided at every tick, then the run's figures: the way to see why a
// scenario of the evaluation misses its goal. With -arms agile-known-start an
// inbound scenario is traced from the resource's pipe (eval.KnownStart's
// start) instead of the limiter's own: how a run's path differs when the
// start is not what costs.
//
//	go run ./compare/cmd/eval -trace out-9
//	go run ./compare/cmd/eval -trace in-127 -set development -arms agile-known-start
//
// -replay runs one inbound scenario with the project's limiter, records the
// path its limit took, and runs that path again through a fixed schedule
// (eval.Scheduled): as it was (which gets what the limiter got), without its
// floor probes, held at its mean, and as it was for its first quarter (the
// settled figures' start) and then held at its mean after it. Where -v says a
// run's motion costs it (eval.Row.Steady), this says which part of the path
// does: the gap between the last two is what the start left behind, the gap
// between the last and the path as it was the motion after the start.
//
//	go run ./compare/cmd/eval -replay in-30/d2
//
// The simulator runs inside testing/synctest bubbles, which exist only under
// a *testing.T, so the evaluation runs as the single test of a testing.Main,
// its runs as parallel subtests (GOMAXPROCS at once).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/eval"
	"github.com/agilelimiter/agilelimiter/compare/internal/cmdmain"
)

func main() {
	set := flag.String("set", "validation", "seed set: training, development (three times training's seeds, also tuned on), validation, all (training and validation), or holdout (never tuned on, never the report: how far the tuning sets overstate the law; needs -out \"\")")
	n := flag.Int("n", 0, "keep the first n scenarios of each direction (0: all)")
	out := flag.String("out", filepath.Join("docs", "compare"), "directory to write eval.md to (empty: none)")
	verbose := flag.Bool("v", false, "print every scenario's figures")
	only := flag.String("arms", "", "comma-separated arms to run, e.g. agile,failsafe-go (empty: the default arms); failsafe-go-p99 (failsafe-go behind the law's p99 guard) and agile-known-start (the limiter started at the resource's pipe) run only when named; the oracle always runs")
	ablate := flag.String("ablate", "", "comma-separated rules of the law to turn off one at a time (a+b: both at once), or thresholds to set (name=value), with the figures each moves (needs -tags agilelimiter_ablate)")
	replay := flag.String("replay", "", "run one inbound scenario (in-N, /dK or -draw K for another draw) with the agile arm, then its limit's path through a fixed schedule: as it was, without its floor probes, held at its mean, and its first quarter as it was then held at its mean")
	trace := flag.String("trace", "", "run one scenario (a named one, out-N or in-N, /dK or -draw K for another draw) with the agile arm alone and print its controller's every tick")
	draw := flag.Uint64("draw", 0, "run the seed sets' scenarios on this draw of their randomness (0: their own, the one reports read): how far a figure moves between draws is how much of it is luck; with -trace or -replay, the draw of the scenario named")
	draws := flag.Int("draws", 1, "run the seed sets on this many draws, from -draw on, and report what the figures keep from draw to draw (at least 2 for a report of luck)")
	direction := flag.String("direction", "", "run only this direction's seeded scenarios, outbound or inbound (empty: both): a change to one limiter's side is judged in half the time")
	cache := flag.String("sweeps", "", "JSON file to take the oracle's sweeps from and add new ones to (empty: none): the sweeps do not depend on the limiter, so tuning runs reuse them")
	settled := flag.Bool("settled", false, "print each arm's runs meeting the goal (and at failsafe-go's goodput) over the whole run and over the calls offered after its first quarter, by kind of resource, draws pooled: which part of a miss is the start (eval.Settled)")
	flag.Parse()

	arms, unknown := eval.DefaultArms(), []string(nil)
	if names := splitNonEmpty(*only); len(names) > 0 {
		arms, unknown = eval.AllArms().Only(names...) // an arm run only when named included
	}
	if len(unknown) > 0 {
		fmt.Fprintf(os.Stderr, "eval: no arm named %s\n", strings.Join(unknown, ", "))
		os.Exit(2)
	}

	var sets []eval.Seeds
	switch *set {
	case "all":
		sets = []eval.Seeds{eval.TrainingSeeds, eval.ValidationSeeds}
	default:
		s, err := eval.SeedSet(*set)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sets = []eval.Seeds{s}
	}

	if *draws < 1 || *draw+uint64(*draws) > 1<<16 {
		fmt.Fprintln(os.Stderr, "eval: -draws must be at least 1, and -draw + -draws at most 65536")
		os.Exit(2)
	}
	if *draw >= 1<<16 {
		fmt.Fprintln(os.Stderr, "eval: -draw must be below 65536 (a draw lives in the top 16 bits of each run stream)")
		os.Exit(2)
	}
	if *set == eval.HoldoutSeeds.Name && *out != "" && *trace == "" && *ablate == "" {
		fmt.Fprintln(os.Stderr, `eval: the holdout seeds are never a report: add -out ""`)
		os.Exit(2)
	}
	if *draw > 0 && *out != "" && *trace == "" && *ablate == "" {
		fmt.Fprintln(os.Stderr, `eval: -draw is a measure of luck, not a report: add -out ""`)
		os.Exit(2)
	}
	if *direction != "" && *direction != "outbound" && *direction != "inbound" {
		fmt.Fprintf(os.Stderr, "eval: -direction %q: want outbound or inbound\n", *direction)
		os.Exit(2)
	}
	if *direction != "" && *out != "" && *trace == "" && *ablate == "" {
		fmt.Fprintln(os.Stderr, `eval: -direction leaves half the report out: add -out ""`)
		os.Exit(2)
	}
	for i := range sets {
		sets[i].Draw = *draw
		switch *direction {
		case "outbound":
			sets[i].Inbound = 0
		case "inbound":
			sets[i].Outbound = 0
		}
	}

	rules := splitNonEmpty(*ablate)
	if len(rules) > 0 && !ablation {
		fmt.Fprintln(os.Stderr, "eval: -ablate needs a build with -tags agilelimiter_ablate")
		os.Exit(2)
	}

	var traced eval.Scenario
	if *trace != "" || *replay != "" {
		name := *trace
		if name == "" {
			name = *replay
		}
		sc, err := tracedScenario(name, *draw)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if *replay != "" && sc.Direction != eval.Inbound {
			fmt.Fprintf(os.Stderr, "eval: -replay %s: a semaphore's path is replayed, and %s is outbound\n", name, name)
			os.Exit(2)
		}
		traced = sc
	}

	cmdmain.Run("eval", func(t *testing.T) error {
		if *replay != "" {
			runReplay(t, &traced)
			return nil
		}
		if *trace != "" {
			initial := 0
			if slices.Contains(splitNonEmpty(*only), eval.KnownStart().Name) && traced.Direction == eval.Inbound {
				initial = eval.PipeLimit(&traced)
				fmt.Printf("started at the pipe, %d (%s)\n", initial, eval.KnownStart().Name)
			}
			synctest.Test(t, func(*testing.T) {
				r := eval.TraceTicks(os.Stdout, &traced, initial)
				fmt.Printf("sent %d, good %d (%.1f/s), inside %.1f%%, p99 %v, timed out %d, refused %d\n",
					r.Sent, r.Good, r.Goodput, 100*r.Inside, r.P99.Round(time.Millisecond), r.TimedOut, r.Refused)
			})
			return nil
		}
		if len(rules) > 0 {
			return runAblation(t, sets, *draws, rules, *cache, *n)
		}
		return run(t, sets, *draws, arms, *cache, *n, *out, *verbose, *settled)
	})
}

// tracedScenario is the scenario -trace or -replay names, on the draw -draw
// names if the name gives none: -draw 2 -trace in-128 is in-128/d2, as the
// evaluation's -draw 2 -v run lists it. A name whose draw differs from -draw,
// or a named scenario (which has one draw) with -draw, is an error rather
// than a run of another draw than the one asked for.
func tracedScenario(name string, draw uint64) (eval.Scenario, error) {
	sc, err := eval.ScenarioByName(name)
	if err != nil || draw == 0 || sc.Draw == draw {
		return sc, err
	}
	if sc.Draw != 0 {
		return eval.Scenario{}, fmt.Errorf("eval: %s and -draw %d name two draws", name, draw)
	}
	for _, named := range eval.Named() {
		if named.Name == name {
			return eval.Scenario{}, fmt.Errorf("eval: %s is a named scenario, with one draw: drop -draw %d", name, draw)
		}
	}
	return eval.ScenarioByName(fmt.Sprintf("%s/d%d", name, draw))
}

func splitNonEmpty(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// loadSweeps reads the sweep cache, if any.
func loadSweeps(cache string) (eval.Sweeps, error) {
	sweeps := eval.Sweeps{}
	if cache == "" {
		return sweeps, nil
	}
	if b, err := os.ReadFile(cache); err == nil {
		if err := json.Unmarshal(b, &sweeps); err != nil {
			return nil, fmt.Errorf("eval: %s: %w", cache, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, err
	}
	return sweeps, nil
}

// saveSweeps writes the sweep cache back, if any.
func saveSweeps(cache string, sweeps eval.Sweeps) error {
	if cache == "" {
		return nil
	}
	b, err := json.Marshal(sweeps)
	if err != nil {
		return err
	}
	return os.WriteFile(cache, b, 0o644)
}

func run(t *testing.T, sets []eval.Seeds, draws int, arms eval.Arms, cache string, n int, dir string, verbose, settled bool) error {
	start := time.Now()
	sweeps, err := loadSweeps(cache)
	if err != nil {
		return err
	}
	scs := eval.Named()
	var names []string
	for _, sc := range scs {
		names = append(names, sc.Name)
	}
	for _, s := range sets {
		for _, sd := range s.Draws(draws) {
			scs = append(scs, sd.Scenarios(n)...)
		}
	}
	// One batch, so every run competes for the cores at once.
	named, seeded := eval.EvaluateWith(scs, arms, eval.Bubbles(t), sweeps).Pick(names...)
	if err := saveSweeps(cache, sweeps); err != nil {
		return err
	}

	fmt.Println("named scenarios:")
	eval.WriteRows(os.Stdout, named)
	var page bytes.Buffer
	var last eval.Seeds
	for _, s := range sets {
		var reps []eval.Report
		for _, sd := range s.Draws(draws) {
			rep, _ := seeded.Pick(sd.Names(n)...)
			reps = append(reps, rep)
			if verbose {
				eval.WriteRows(os.Stdout, rep)
			}
			fmt.Printf("\n%s seeds%s (%d outbound, %d inbound):\n", s.Name, drawNote(sd.Draw), len(rep.Outbound.Rows), len(rep.Inbound.Rows))
			eval.WriteText(os.Stdout, rep.Summarize())
		}
		page.Reset()
		eval.WriteMarkdown(&page, s.Name, reps[0], named)
		if draws > 1 {
			luck, err := eval.LuckOf(reps)
			if err != nil {
				return err
			}
			fmt.Printf("\n%s seeds over %d draws:\n", s.Name, draws)
			eval.WriteLuckText(os.Stdout, luck)
			eval.WriteLuckMarkdown(&page, luck, s.Draw)
		}
		eval.WriteKindsMarkdown(&page, eval.Pool(reps), len(reps))
		if settled {
			fmt.Printf("\n%s seeds%s, %d draw(s) pooled: ", s.Name, drawNote(s.Draw), len(reps))
			eval.WriteSettledText(os.Stdout, eval.Pool(reps))
		}
		last = s
	}
	fmt.Printf("\n%v real time\n", time.Since(start).Round(100*time.Millisecond))
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dir, "eval.md")
	if err := os.WriteFile(path, page.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "eval: wrote %s (%s seeds)\n", path, last.Name)
	return nil
}

// drawNote says which draw a set ran on, when not its own.
func drawNote(draw uint64) string {
	if draw == 0 {
		return ""
	}
	return fmt.Sprintf(", draw %d", draw)
}

// runReplay runs sc with the agile arm, then replays the path its limit took
// through a fixed schedule, as it was and in two variants, and prints what
// each got: what the path's parts cost the run.
func runReplay(t *testing.T, sc *eval.Scenario) {
	var path []eval.LimitAt
	show := func(name string, r eval.Result) {
		fmt.Printf("%-32s goodput %8.1f/s inside %5.1f%% in flight %6.1f\n", name, r.Goodput, 100*r.Inside, r.InFlight(sc.Duration.Seconds()))
	}
	fmt.Printf("%s: %s\n", sc.Name, sc.About)
	synctest.Test(t, func(*testing.T) {
		var r eval.Result
		r, path = eval.RecordPath(sc)
		show("agile", r)
	})
	steady := eval.HeldAtMean(path, sc.Duration)
	after := eval.HeldAfter(path, eval.SettledFrom(sc), sc.Duration)
	for _, v := range []struct {
		name string
		path []eval.LimitAt
	}{
		{"its path, replayed", path},
		{"without its floor probes", eval.WithoutProbes(path)},
		{fmt.Sprintf("held at its mean (%d)", steady[0].Limit), steady},
		{fmt.Sprintf("its start, then its mean (%d)", after[len(after)-1].Limit), after},
	} {
		synctest.Test(t, func(*testing.T) { show(v.name, eval.RunInbound(sc, eval.Scheduled(v.name, v.path))) })
	}
}
