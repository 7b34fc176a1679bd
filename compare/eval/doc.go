// Package eval measures whether the controller generalises: it draws random
// scenarios from a seed (a service law, a capacity trace, a request mix, an
// offered load, callers with deadlines or closed-loop clients, an SLO), runs
// every arm through each on virtual time, and compares each arm's goodput
// with an oracle's: the best fixed share of the true capacity trace
// (outbound) or the best fixed concurrency (inbound), found by sweep.
//
// The seeds are split in two sets kept apart: the controller is tuned on
// [TrainingSet] only, and figures are reported on [ValidationSet]. A result
// on the validation set says how the controller does on scenarios nobody
// tuned it for.
//
// Everything runs inside testing/synctest bubbles (see [Bubbles]), so a run of
// 30 s costs a fraction of a second, and a seed gives the same numbers on
// every run and machine: every random draw comes from an RNG seeded by the
// scenario's seed, in an order fixed by virtual time (arrivals are drawn in
// one goroutine, closed-loop clients each own a stream), never by goroutine
// scheduling.
//
// The goal for an arm in one scenario is: at least 90% of the calls it sent
// (requests it admitted) answered inside the SLO, and at least 0.8 of the
// oracle's goodput. Where no fixed share or limit of the sweep keeps 90%
// inside (an SLO the dependency itself breaks), the bar on inside is the best
// the sweep achieved less two points; see [InsideBar].
package eval
