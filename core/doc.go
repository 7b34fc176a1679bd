// Package agilelimiter sets a limit from what it measures: a feedback controller
// reads the round-trip times of the calls it admits and moves a limit inside a
// static ceiling the caller promises. It runs one law for both limiters, on a
// window of calls in flight: TCP Vegas' step on the wait a round of answers
// shows over the resource's unloaded latency (its floor, re-measured every 5 s),
// multiplicative cuts on refusals and on answers past the SLO, and a doubling
// startup until a queue begins. The law and its reasons are stated on the
// controller in controller.go.
//
// There are two limiters on one controller. A [Limiter] paces calls out to a
// dependency with a leaky bucket whose rate the controller sets; most callers want
// [Limiter.Do] (or [Do] for a call that returns a value). A [ConcurrencyLimiter] caps
// the requests a service handles at once with a non-blocking semaphore whose size
// the controller sets; at the limit it refuses at once with [ErrOverloaded] and
// never queues.
//
// Not every duration is evidence. An [Outcome] says whether a call measured the
// protected resource ([Reached]), never arrived or was refused for lack of capacity
// ([Unreachable]), or says nothing about capacity ([Aborted]). The HTTP adapters in
// the sibling modules translate each framework's response into an Outcome with the
// one policy in this package ([ServerOutcome], [ClientOutcome]).
//
// Both limiters use only the time package: a test inside a testing/synctest bubble
// drives minutes of controller behaviour in milliseconds. Neither starts a goroutine
// until [Limiter.Start] (or [ConcurrencyLimiter.Start]) is called, and Stop ends it.
package agilelimiter
