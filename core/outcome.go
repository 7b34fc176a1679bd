package agilelimiter

import "strconv"

// Outcome says whether a call's duration is evidence about the protected resource.
// The zero value is Reached, the right reading for almost every call: a slow
// answer and a timeout are both real signals.
type Outcome int

const (
	// Reached means the call reached the resource: its duration is a sample.
	// It is the default for every error, because a timeout says the resource took
	// at least that long.
	Reached Outcome = iota
	// Unreachable means the call never arrived (connection refused, DNS failure,
	// an open breaker) or the resource refused it for lack of capacity (an instant
	// 503 or 429). It records a synthetic sample above the tolerated window and
	// above SLOTarget, so the controller backs off instead of reading an instant
	// failure as a fast, healthy resource; a ConcurrencyLimiter keeps the
	// request's slot until its next tick, so that refusals, which come back at
	// once, are not admitted at their own pace.
	Unreachable
	// Aborted means the call says nothing about capacity (the caller cancelled, a
	// cache answered, a 4xx, a health probe). Nothing is recorded.
	Aborted
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Reached:
		return "Reached"
	case Unreachable:
		return "Unreachable"
	case Aborted:
		return "Aborted"
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}
