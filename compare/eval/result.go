package eval

import (
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// Result is what one arm achieved in one scenario.
type Result struct {
	// Scenario and Arm name what was run.
	Scenario, Arm string
	// Offered counts arrivals (outbound, open-loop inbound) or attempts,
	// retries included (closed-loop inbound). Outbound callers still waiting
	// for a slot when the run ended count nowhere.
	Offered int
	// Sent counts the calls the arm let through: sent to the dependency, or
	// admitted into the service.
	Sent int
	// Limited counts the offered calls the arm did not let through; they cost
	// nothing but goodput.
	Limited int
	// Answered, TimedOut and Refused split Sent: answered (before the
	// caller's deadline), timed out, refused at once by the resource.
	Answered, TimedOut, Refused int
	// Good counts answers inside the SLO; Goodput is Good per second of run.
	Good    int
	Goodput float64 // Good per second of Scenario.Duration
	// Inside is Good / Sent: timeouts and refusals count as outside.
	Inside float64
	// LimitedShare is Limited / Offered.
	LimitedShare float64
	// Mean and P99 are over the sent calls that reached the resource
	// (answered or timed out, at the time the caller waited).
	Mean, P99 time.Duration
	// Wasted is the share of the resource's work spent on requests nobody
	// used: outbound, those whose caller had timed out; inbound, those
	// answered outside the SLO.
	Wasted float64
	// SettledFrom is when the run's settled figures begin (SettledFrom of
	// the scenario); zero in a Result counted before they were. SettledSent
	// and SettledGood are Sent and Good over the calls offered from then on:
	// what the arm did once its start was behind it.
	SettledFrom              time.Duration
	SettledSent, SettledGood int
}

// settledShare is the share of a run its settled figures leave out at the
// start. A quarter is a choice, not a measure: long enough that most starts
// and what they leave (a floor read from a cold burst, the cuts after it)
// are behind a run (development in-127, a knee of 11 hit by 37 calls at
// once, reaches its pipe 4.2 s into 18.8), short enough to keep three
// quarters of its answers.
const settledShare = 0.25

// SettledFrom is when a run of sc's settled figures begin: after the first
// quarter of the run, by when most starts have passed; what one leaves for
// longer is what the settled figures show of it.
func SettledFrom(sc *Scenario) time.Duration {
	return time.Duration(settledShare * float64(sc.Duration))
}

// SettledGoodput is SettledGood per second of the run after SettledFrom.
func (r Result) SettledGoodput(sc *Scenario) float64 {
	if d := sc.Duration - SettledFrom(sc); d > 0 {
		return float64(r.SettledGood) / d.Seconds()
	}
	return 0
}

// SettledInside is SettledGood / SettledSent (0 with none sent).
func (r Result) SettledInside() float64 {
	if r.SettledSent == 0 {
		return 0
	}
	return float64(r.SettledGood) / float64(r.SettledSent)
}

func summarize(sc *Scenario, arm string, recs []*record) Result {
	r := Result{Scenario: sc.Name, Arm: arm, SettledFrom: SettledFrom(sc)}
	var (
		lat          []time.Duration
		sum          time.Duration
		busy, wasted time.Duration
	)
	for _, c := range recs {
		settled := c.at >= r.SettledFrom
		switch c.st {
		case unfinished:
			continue
		case limited:
			r.Limited++
			continue
		case answered:
			r.Answered++
			if c.d <= sc.SLO {
				r.Good++
				if settled {
					r.SettledGood++
				}
			} else if sc.Direction == Inbound {
				wasted += c.work
			}
		case timedOut:
			r.TimedOut++
			wasted += c.work
		case refused:
			r.Refused++
		}
		if settled {
			r.SettledSent++
		}
		busy += c.work
		if c.st != refused {
			lat = append(lat, c.d)
			sum += c.d
		}
	}
	r.Sent = r.Answered + r.TimedOut + r.Refused
	r.Offered = r.Sent + r.Limited
	r.Goodput = float64(r.Good) / sc.Duration.Seconds()
	if r.Sent > 0 {
		r.Inside = float64(r.Good) / float64(r.Sent)
	}
	if r.Offered > 0 {
		r.LimitedShare = float64(r.Limited) / float64(r.Offered)
	}
	if len(lat) > 0 {
		r.Mean = sum / time.Duration(len(lat))
		r.P99 = sim.Quantile(lat, 0.99)
	}
	if busy > 0 {
		r.Wasted = float64(wasted) / float64(busy)
	}
	return r
}
