package agilelimiter

import "time"

// Stats is a limiter's state for dashboards and alerts. The controller's view
// (Limit, Baseline, Fast, High, P50, P99, Samples, Unreachable, Decision,
// WaitP99, PeakInFlight) is as of the last tick; the counters and gauges
// (Admitted, Rejected*, Canceled, Waiting, InFlight) are live.
//
// The four numbers that make a limiter operable are Admitted, the rejections,
// Waiting (or InFlight) and WaitP99. Alert on Samples == 0 while traffic flows:
// the controller is blind and the limit is frozen where it was.
type Stats struct {
	// Limit is the current limit: req/s for a Limiter, requests in flight for
	// a ConcurrencyLimiter.
	Limit float64
	// Baseline is the slow EWMA of p50: what "normal" latency is.
	Baseline time.Duration
	// Fast is the fast EWMA of p50, the signal compared with the window.
	Fast time.Duration
	// High is the top of the tolerated window at the last tick.
	High time.Duration
	// P50 and P99 are the last tick's quantiles, synthetic samples included.
	P50, P99 time.Duration
	// Samples is the number of samples in the last tick, synthetic ones
	// included. 0 means the controller is blind and changed nothing.
	Samples int
	// Unreachable is how many of Samples were synthetic (Unavailable calls).
	Unreachable int
	// Decision says what the last tick did: "blind", "hold", "idle" (healthy
	// but the limit was not used up), "probe", "return" (quickly back toward
	// the last limit the resource sustained), "slow-start", "ramp", "backoff",
	// "slo-backoff" or "drain" (a rate limit sent a quarter more than came
	// back while a queue showed, and cut to what drains it).
	Decision string
	// Ticks counts controller ticks since Start.
	Ticks uint64

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

	// InFlight is how many requests hold a slot now (inbound).
	InFlight int
	// PeakInFlight is the most requests in flight at once during the last tick
	// (inbound).
	PeakInFlight int
}
