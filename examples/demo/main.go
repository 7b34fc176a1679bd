// Command demo shows agilelimiter at work on loopback, with nothing to set up.
//
// Outbound: a simulated dependency (a real HTTP server on 127.0.0.1) whose
// capacity changes during the run, called by more traffic than it can take
// through an http.Client whose transport an agilelimiter.Limiter wraps. A live
// line every second shows the limiter's rate following the capacity; a summary
// table and an SVG chart (rate vs capacity, p99 vs SLO) follow.
//
// Inbound: a service protected by an agilelimiter.ConcurrencyLimiter under a
// swarm of clients sending twice what it can serve: it serves what it can
// hold, fast, and answers the rest with 429 at once.
//
// It exits 1 if the limiter clearly misbehaved (the rate never came down when
// the capacity dropped, the ceiling was exceeded, nothing was shed), so CI
// catches regressions.
//
//	go run ./examples/demo
//	go run ./examples/demo -scenario outage -duration 20s
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
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
	fmt.Fprint(w, `Usage: go run ./examples/demo [flags]

Runs a simulated dependency on loopback whose capacity changes during the run,
calls it with more traffic than it can take through an http.Client whose
transport an agilelimiter.Limiter wraps, and prints a live line a second:

  capacity  what the dependency can serve now (req/s)
  sent      calls the limiter let out to the dependency in the last second (req/s)
  p50 p99   their round trips (answered or timed out), the limiter's wait excluded
  SLO       the p99 target given to the limiter
  refused   calls never sent, per second: no slot came early enough to leave
            the call a round trip (the limiter's last p99) before the
            caller's 1s deadline
  503s      calls the dependency itself refused (full or down), per second
  decision  what the controller's last tick did (see Stats.Decision)

Then a summary table per phase, and an SVG chart of what was sent vs
capacity and p99 vs SLO. The run fails (exit 1) if, from 2 s into any phase
of 4 s or more, the limiter let out less than 0.8 or more than 1.2 of what the
dependency could serve, or fewer than 90% of the calls sent were answered
inside the SLO. Then the inbound side: a service protected by a ConcurrencyLimiter
under a swarm, answering what it cannot hold with 429.

Scenarios:
`)
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
	o, err := runOutbound(sc, outLen, demand, w)
	if err != nil {
		return err
	}
	o.summary(w)
	if err := os.WriteFile(out, chart(o), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "chart: %s\n", out)

	fmt.Fprintf(w, "\ninbound: a service with %d cores and %s of work a request (%.0f req/s), a swarm of %.0f req/s, %s;\n",
		inboundCores, inboundWork, inboundCapacity, inboundSwarm, inLen)
	fmt.Fprintf(w, "  ConcurrencyLimiter{MaxLimit: %d, SLOTarget: %s}\n\n", inboundMaxLimit, slo)
	in, err := runInbound(inLen, w)
	if err != nil {
		return err
	}
	in.summary(w)

	bad := append(append(followed(o), o.checkCeiling()...), in.check()...)
	if len(bad) > 0 {
		return fmt.Errorf("the limiter misbehaved:\n  %s", strings.Join(bad, "\n  "))
	}
	fmt.Fprintln(w, "\nchecks passed: what the limiter let out followed the capacity (0.8–1.2 of it from 2 s into each phase), at least 90% of the calls sent were answered inside the SLO, the ceiling held, and the swarm was shed with 429s")
	return nil
}

// arrivals starts fn in a new goroutine at Poisson-distributed instants,
// rate a second on average, from begin until length has passed. wg counts
// the goroutines; the returned channel is closed after the last one started.
func arrivals(begin time.Time, length time.Duration, rate float64, wg *sync.WaitGroup, fn func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		next := begin
		for {
			next = next.Add(time.Duration(rand.ExpFloat64() / rate * float64(time.Second)))
			if next.Sub(begin) >= length {
				return
			}
			time.Sleep(time.Until(next))
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn()
			}()
		}
	}()
	return done
}

// drive calls sample every 100ms and line every second, with the time since
// begin, until done is closed.
func drive(done <-chan struct{}, begin time.Time, sample, line func(at time.Duration)) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	nextLine := time.Second
	for {
		select {
		case <-done:
			return
		case now := <-tick.C:
			at := now.Sub(begin)
			sample(at)
			if at >= nextLine {
				nextLine += time.Second
				line(at)
			}
		}
	}
}
