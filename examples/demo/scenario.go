package main

import (
	"fmt"
	"time"
)

// phase is one stretch of the outbound run at a fixed capacity.
type phase struct {
	name     string
	from     float64 // start, as a fraction of the outbound run
	capacity float64 // req/s the dependency can serve; 0 is an outage
}

// scenario is a capacity schedule and the checks that tell whether the
// limiter followed it. check returns one message per failed expectation.
type scenario struct {
	name, about string
	phases      []phase
	check       func(r *outboundRun) []string
}

const normalCapacity = 100 // req/s

var scenarios = []scenario{
	{
		name:  "drop-recover",
		about: "capacity 100 req/s, drops to 30 at 30% of the run, back to 100 at 65%",
		phases: []phase{
			{"normal", 0, normalCapacity},
			{"drop", 0.30, 30},
			{"recovered", 0.65, normalCapacity},
		},
		check: func(r *outboundRun) []string {
			var bad []string
			before, during, after := r.settledRate(0), r.settledRate(1), r.finalRate(2)
			if during > 0.75*before {
				bad = append(bad, fmt.Sprintf("the rate did not come down when capacity dropped: %.0f req/s before, %.0f during", before, during))
			}
			if after < 1.2*during {
				bad = append(bad, fmt.Sprintf("the rate did not climb back after the recovery: %.0f req/s during the drop, %.0f at the end", during, after))
			}
			return bad
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
		check: func(r *outboundRun) []string {
			var bad []string
			before, during, after := r.settledRate(0), r.settledRate(1), r.finalRate(2)
			if during > 0.3*before {
				bad = append(bad, fmt.Sprintf("instant 503s did not push the rate down: %.0f req/s before the outage, %.0f during", before, during))
			}
			if after < 2*during {
				bad = append(bad, fmt.Sprintf("the rate did not climb back after the outage: %.0f req/s during, %.0f at the end", during, after))
			}
			return bad
		},
	},
	{
		name:   "steady",
		about:  "capacity 100 req/s throughout: the limiter finds it and stays near it",
		phases: []phase{{"steady", 0, normalCapacity}},
		check: func(r *outboundRun) []string {
			if got := r.settledRate(0); got < 0.5*normalCapacity {
				return []string{fmt.Sprintf("the rate settled at %.0f req/s, far below the capacity of %d", got, normalCapacity)}
			}
			return nil
		},
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
