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
}

func summarize(sc *Scenario, arm string, recs []*record) Result {
	r := Result{Scenario: sc.Name, Arm: arm}
	var (
		lat          []time.Duration
		sum          time.Duration
		busy, wasted time.Duration
	)
	for _, c := range recs {
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
			} else if sc.Direction == Inbound {
				wasted += c.work
			}
		case timedOut:
			r.TimedOut++
			wasted += c.work
		case refused:
			r.Refused++
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
