package eval

import "math"

// knownStartArm names KnownStart's arm.
const knownStartArm = "agile-known-start"

// KnownStart returns an arm for the ConcurrencyLimiter configured as
// AgileInbound configures it, but started at the scenario's pipe (PipeLimit)
// instead of half MaxLimit. No user can build it: it knows the resource. It
// is not one of the default arms (InboundArms); run it with -arms. It says
// what the law's start costs: half MaxLimit serves a cold burst (SPEC §5's
// InitialLimit, core's TestColdBurst), and sends a processor whose knee is
// far lower, or a single worker, a burst it takes seconds to answer.
func KnownStart() InboundArm {
	return InboundArm{Name: knownStartArm, New: func(sc *Scenario) Admitter {
		return newAgile(sc, PipeLimit(sc))
	}}
}

// PipeLimit returns how many requests sc's resource holds without a queue at
// its initial speed: its servers, or its knee, plus the requests on its
// network leg at its initial capacity (Little's law), within [1, MaxLimit].
func PipeLimit(sc *Scenario) int {
	k := float64(sc.Servers)
	if sc.Law == PSKnee {
		k = float64(sc.Knee)
	}
	pipe := math.Round(k + sc.Capacity0*sc.Net.Seconds())
	return int(math.Max(1, math.Min(pipe, float64(sc.MaxLimit))))
}
