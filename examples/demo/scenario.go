package main

import (
	"fmt"
	"math"
	"time"
)

// phase is one stretch of the outbound run at a fixed capacity.
type phase struct {
	name     string
	from     float64 // start, as a fraction of the outbound run
	capacity float64 // req/s the dependency can serve; 0 is an outage
}

// scenario is a capacity schedule; followed checks that the limiter
// followed it.
type scenario struct {
	name, about string
	phases      []phase
}

const normalCapacity = 100 // req/s

// judgedPhase is the shortest phase the checks judge.
const judgedPhase = 4 * time.Second

// followed returns one message per failed expectation: from 2 s into each
// phase the limiter lets out at least 0.8 of the capacity the callers can use
// (an undershoot fails as surely as an overshoot), no more than 1.2 of it, and
// over the whole run at least 90% of the calls sent are answered inside the
// SLO. An outage phase must send at most MinRate's probes. A phase shorter
// than judgedPhase is not judged: the controller needs a few round trips of
// answers to find a capacity, and two seconds of them to be measured.
func followed(r *outboundRun) []string {
	var bad []string
	for i, p := range r.sc.phases {
		if from, to := r.sc.bounds(i, r.length); to-from < judgedPhase {
			continue
		}
		got := r.judged(i).sentPerSec()
		if p.capacity == 0 {
			if got > 2*minRate {
				bad = append(bad, fmt.Sprintf("%s: %.0f req/s sent to a dependency that answers every call with 503; want the probe rate, %d", p.name, got, minRate))
			}
			continue
		}
		want := math.Min(p.capacity, r.demand)
		if got < 0.8*want {
			bad = append(bad, fmt.Sprintf("%s: %.0f req/s sent where the dependency serves %.0f; want at least 0.8 of it", p.name, got, want))
		}
		if got > 1.2*want {
			bad = append(bad, fmt.Sprintf("%s: %.0f req/s sent where the dependency serves %.0f; want at most 1.2 of it", p.name, got, want))
		}
	}
	if in := r.inSLO(); in < 0.9 {
		bad = append(bad, fmt.Sprintf("%.0f%% of the calls sent answered inside the SLO; want at least 90%%", 100*in))
	}
	return bad
}

var scenarios = []scenario{
	{
		name:  "drop-recover",
		about: "capacity 100 req/s, drops to 30 at 30% of the run, back to 100 at 65%",
		phases: []phase{
			{"normal", 0, normalCapacity},
			{"drop", 0.30, 30},
			{"recovered", 0.65, normalCapacity},
		},
	},
	{
		name:  "outage",
		about: "capacity 100 req/s; from 30% to 55% of the run the dependency answers every call with an instant 503; then 100 again",
		phases: []phase{
			{"normal", 0, normalCapacity},
			{"outage", 0.30, 0},
			{"recovered", 0.55, normalCapacity},
		},
	},
	{
		name:   "steady",
		about:  "capacity 100 req/s throughout: the limiter finds it and stays near it",
		phases: []phase{{"steady", 0, normalCapacity}},
	},
}

func findScenario(name string) (scenario, bool) {
	for _, s := range scenarios {
		if s.name == name {
			return s, true
		}
	}
	return scenario{}, false
}

// bounds returns the start and end of phase i in a run of length d.
func (s scenario) bounds(i int, d time.Duration) (from, to time.Duration) {
	from = time.Duration(s.phases[i].from * float64(d))
	to = d
	if i+1 < len(s.phases) {
		to = time.Duration(s.phases[i+1].from * float64(d))
	}
	return from, to
}

// capacityAt returns the capacity the schedule gives at elapsed time t.
func (s scenario) capacityAt(t, d time.Duration) float64 {
	c := s.phases[0].capacity
	for _, p := range s.phases {
		if float64(t) >= p.from*float64(d) {
			c = p.capacity
		}
	}
	return c
}
