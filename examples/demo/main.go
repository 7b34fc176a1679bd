// Command demo shows agilelimiter at work on loopback, with nothing to set up.
//
// Outbound: a simulated dependency (agiletest.Queue, served over HTTP on 127.0.0.1)
// whose capacity changes during the run, called by more traffic than it can
// take through an http.Client whose transport an agilelimiter.Limiter wraps.
// A live row every second shows what the limiter lets out following the
// capacity; per phase, the rates and every call by outcome follow, and an SVG
// chart (what was sent vs capacity, p99 vs SLO) drawn by compare/report.
//
// Inbound: a service protected by an agilelimiter.ConcurrencyLimiter under a
// swarm of clients sending twice what it can serve: it serves what it can
// hold, fast, and answers the rest with 429 at once.
//
// It exits 1 if the limiter clearly misbehaved (what it let out did not
// follow the capacity, fewer than 90% of the calls sent were answered inside
// the SLO, the ceiling was exceeded, nothing was shed), so CI catches
// regressions.
//
//	go run ./examples/demo
//	go run ./examples/demo -scenario outage -duration 20s
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	var (
		duration = flag.Duration("duration", 40*time.Second, "length of the whole demo: three quarters outbound, one quarter inbound (at most 10s); at least 4s")
		name     = flag.String("scenario", "drop-recover", "the dependency's capacity schedule: "+scenarioNames())
		demand   = flag.Float64("demand", 150, "req/s the callers send towards the dependency (its normal capacity is 100)")
		out      = flag.String("out", filepath.Join(os.TempDir(), "agilelimiter-demo.svg"), "where to write the SVG chart")
	)
	flag.Usage = usage
	flag.Parse()
	sc, ok := findScenario(*name)
	if !ok || *duration < 4*time.Second || *demand <= 0 || flag.NArg() > 0 {
		usage()
		os.Exit(2)
	}
	if err := run(sc, *duration, *demand, *out); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func usage() {
	w := flag.CommandLine.Output()
	fmt.Fprintf(w, `Usage: go run ./examples/demo [flags]

Runs a simulated dependency on loopback whose capacity changes during the run,
calls it with more traffic than it can take through an http.Client whose
transport an agilelimiter.Limiter wraps, and prints a live row a second about
the calls that ended in that second:

  capacity   what the dependency can serve now (req/s)
  sent       calls the limiter let out to the dependency (req/s)
  refused    calls never sent (req/s): the limiter refused them at once with
             ErrDeadline, because their slot would come less than a round trip
             (the limiter's p99 of its last round, Stats.P99, and at least the
             SLO) before the caller's %s deadline, or the deadline passed
             while they waited
  503        calls the dependency refused, its queue full or down (req/s)
  timed out  calls whose deadline passed while the dependency had them (req/s)
  p50 p99    round trips of the calls answered or timed out (ms), the limiter's
             wait excluded
  decision   what the controller's last tick did (see Stats.Decision)

Then, per phase, the rates, and every call by outcome (calls = refused + sent;
sent = in SLO + late + 503 + timed out + error), and an SVG chart of what was
sent vs capacity and p99 vs SLO. The run fails (exit 1) if, from 2 s into any
phase of 4 s or more, the limiter let out less than 0.8 or more than 1.2 of
what the dependency could serve ("settled"), or fewer than 90%% of the calls
sent were answered inside the SLO ("in SLO, %% sent", the "all" row). Then the
inbound side: a service protected by a ConcurrencyLimiter under a swarm,
answering what it cannot hold with 429.

Scenarios:
`, callerTimeout)
	for _, s := range scenarios {
		fmt.Fprintf(w, "  %-13s %s\n", s.name, s.about)
	}
	fmt.Fprint(w, "\nFlags:\n")
	flag.PrintDefaults()
	fmt.Fprint(w, "\nExits 1 if the limiter clearly misbehaved, 2 on bad flags.\n")
}

func scenarioNames() string {
	var names []string
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
}

func run(sc scenario, total time.Duration, demand float64, out string) error {
	inLen := min(max(total/4, 2*time.Second), 10*time.Second)
	outLen := total - inLen
	w := os.Stdout

	fmt.Fprintf(w, "outbound: %s, %s: %s\n", sc.name, outLen, sc.about)
	fmt.Fprintf(w, "  callers send %.0f req/s, each with a %s deadline; Limiter{MaxRate: %d, MinRate: %d, SLOTarget: %s}\n\n",
		demand, callerTimeout, maxRate, minRate, slo)
	o := runOutbound(sc, outLen, demand, w)
	o.summary(w)
	if err := os.WriteFile(out, chart(o), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "chart: %s\n", out)

	fmt.Fprintf(w, "\ninbound: a service with %d cores and %s of work a request (%.0f req/s), a swarm of %.0f req/s, %s;\n",
		inboundCores, inboundWork, inboundCapacity, inboundSwarm, inLen)
	fmt.Fprintf(w, "  ConcurrencyLimiter{MaxLimit: %d, SLOTarget: %s}\n\n", inboundMaxLimit, slo)
	in := runInbound(inLen, w)
	in.summary(w)

	bad := append(append(followed(o), o.checkCeiling()...), in.check()...)
	if len(bad) > 0 {
		return fmt.Errorf("the limiter misbehaved:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Fprintln(w, "\nchecks passed: what the limiter let out followed the capacity (0.8–1.2 of it from 2 s into each phase), over the whole run at least 90% of the calls sent were answered inside the SLO, the ceiling held, and the swarm was shed with 429s")
	return nil
}
