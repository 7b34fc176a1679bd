package agilelimiter

import "time"

// Stats is a limiter's state for dashboards and alerts. The controller's view
// (Limit, Baseline, High, P50, P99, Samples, Unreachable, Decision,
// Decisions, Ticks, Measured, Delivered, WaitP99, PeakInFlight) is as of the
// last tick; the counters and gauges (Admitted, Rejected*, Canceled, Waiting,
// InFlight, Rate, PausedUntil) are live.
//
// The four numbers that make a limiter operable are Admitted, the rejections,
// Waiting (or InFlight) and WaitP99. Alert on Admitted growing while Measured
// does not: the controller is blind and the limit is frozen where it was.
type Stats struct {
	// Limit is the current limit: req/s for a Limiter, requests in flight for
	// a ConcurrencyLimiter.
	Limit float64
	// Min and Max are the bounds Limit moves in, from the configuration with
	// its defaults filled in (MinRate and MaxRate, or MinLimit and
	// MaxLimit): a limit at Min for long is a dependency down or a
	// controller stuck, one at Max a ceiling that binds.
	Min, Max float64
	// Baseline is the floor: the unloaded latency (the median of the fastest
	// epoch of 64 answers as a slot sees it, re-measured every 5 s by a floor
	// probe). A queue is read as the wait above it.
	Baseline time.Duration
	// High is the latency an Unavailable call is recorded at: twice the floor
	// under AnchorBaseline, 0.8 of SLOTarget under AnchorSLO (see [Anchor]).
	High time.Duration
	// P50 and P99 are the quantiles of the last round of answers (a round
	// trip with at least eight, or half a second), synthetic samples
	// included. P99 is also the round trip TakeContext leaves room for.
	P50, P99 time.Duration
	// Samples is the number of answers in the last tick, synthetic ones
	// included. 0 means the controller is blind and changed nothing.
	Samples int
	// Unreachable is how many of Samples were synthetic (Unavailable calls).
	Unreachable int
	// Decision says what the last tick did, one reason each: "blind" (no
	// answers), "gather" (a round is under way), "settle" (after a cut, the
	// answers still come from before it), "refused" (Unavailable answers:
	// the window halves), "slo" (more answers past SLOTarget than 1%
	// explains, or more calls out for longer than it: the window cut to
	// 0.7 of what was in flight), "tail" (the resource's own share past the
	// SLO), "floor-probe" and "floor" (the floor measured with a narrower
	// window, and the window back when the probe's time is up), "idle"
	// (demand did not fill the window), "queue" (it did not, but queued),
	// "startup" (doubling by rounds; after refusals, also a call for each
	// answer without a queue), "regain" (doubling back after SLO cuts),
	// "window" (TCP Vegas' step) or "unmoved" (a narrower window left the
	// wait: held, and Vegas reads the wait above it until it passes) or "knee" (the wider the window, the less got through,
	// and every call slower: narrowed by a tenth; or a floor probe's
	// narrower window got 1.4 times as much through: kept) or "paused" (the
	// dependency asked for a pause: see [Limiter.PauseUntil]) or "stalled"
	// (in startup, the window is one slow call out past the SLO with
	// callers waiting: one more call goes out, since no answer can come).
	Decision string
	// Ticks counts controller ticks since New.
	Ticks uint64
	// Decisions counts the ticks since New by the Decision each ended in:
	// how often the controller cut, probed, held or was blind, for a
	// counter by reason.
	Decisions DecisionCounts
	// Rate is the pace a Limiter lets calls out at now, in requests per
	// second (see [Limiter.Rate]); 0 for a ConcurrencyLimiter.
	Rate float64
	// Delivered is how many calls came back per second during the last
	// tick: answers, Unavailable calls and Aborted ones alike. Against
	// Samples it shows a controller that sees traffic but no evidence.
	Delivered float64
	// Measured counts the answers the controller has read since New:
	// samples and Unavailable calls, the evidence (Aborted ones carry none).
	// Admitted growing while Measured does not is a blind controller, at
	// any rate: the alert a per-tick Samples cannot give at a call a second.
	Measured uint64

	// Admitted counts slots granted since New.
	Admitted uint64
	// RejectedDeadline counts outbound takes refused at once because the slot
	// would leave no round trip before the context's deadline (ErrDeadline).
	RejectedDeadline uint64
	// Canceled counts outbound takes whose context ended while they waited.
	Canceled uint64
	// RejectedOverload counts inbound requests refused because every slot was
	// taken (ErrOverloaded).
	RejectedOverload uint64

	// Waiting is how many callers are blocked in Take or TakeContext now.
	Waiting int
	// WaitP99 is the p99 of the time callers spent waiting for a slot during
	// the last tick (zero waits included).
	WaitP99 time.Duration
	// PausedUntil is the end of the pause in force (see
	// [Limiter.PauseUntil]), zero when none.
	PausedUntil time.Time

	// InFlight is how many slots are taken now (inbound): by requests in
	// flight, and by requests the service refused since the last tick.
	InFlight int
	// PeakInFlight is the most requests in flight at once during the last tick
	// (inbound).
	PeakInFlight int
}

// DecisionCounts counts ticks by the reason each ended in, one counter per
// value Stats.Decision can hold. It is a fixed array, not a map, so a Stats
// copied every tick allocates nothing.
type DecisionCounts struct {
	n [len(decisionNames)]uint64
}

// Get returns the ticks counted for decision (a Stats.Decision value), 0 for
// a name that is none.
func (c *DecisionCounts) Get(decision string) uint64 {
	for i, name := range decisionNames {
		if name == decision {
			return c.n[i]
		}
	}
	return 0
}

// Each calls f for every decision, in a fixed order, with its count, zeros
// included: a counter by reason is then exported with every label from the
// start.
func (c *DecisionCounts) Each(f func(decision string, ticks uint64)) {
	for i, name := range decisionNames {
		f(name, c.n[i])
	}
}
