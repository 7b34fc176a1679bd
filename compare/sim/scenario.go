package sim

import (
	"math"
	"time"
)

// Scenario is one run's dependency and load: what the dependency can do at
// every instant, and how the clients call it. Times passed to the functions are
// measured from the start of the run.
type Scenario struct {
	// Name is a short identifier, used in tables and file names.
	Name string
	// About says in one sentence what happens during the run.
	About string
	// Duration is the length of the run in virtual time.
	Duration time.Duration
	// SLO is the latency a response must beat to count as good. Limiter arms
	// get it as their SLOTarget.
	SLO time.Duration
	// Timeout is when a client gives up on a call. The request stays queued.
	Timeout time.Duration
	// Workers is the number of closed-loop clients: each sends, waits for the
	// answer, and sends again as soon as its gate lets it. There must be enough
	// of them that the gate, not the worker count, binds.
	Workers int
	// MaxRate is the ceiling the limiter arms are promised (their MaxRate).
	MaxRate float64

	// Capacity is the dependency's throughput in requests per second at an
	// instant: its FIFO server spends 1/Capacity seconds on each request.
	Capacity func(t time.Duration) float64
	// Base is the round trip outside the server (network, fixed work that does
	// not contend). It does not consume capacity: a rise in Base is benign.
	Base func(t time.Duration) time.Duration
	// Refuse, if set, reports whether the dependency refuses every call at t
	// (an outage, a closed port). Refused calls use no capacity.
	Refuse func(t time.Duration) bool
	// Jitter scales each service time and each round trip by a uniform factor
	// in [1−Jitter, 1+Jitter].
	Jitter float64
	// TailProb is the probability that a call's round trip is multiplied by
	// TailFactor: a heavy tail that does not consume capacity (a retransmit, a
	// slow replica of the network path).
	TailProb, TailFactor float64
	// HitRatio is the share of calls a cache in front of the dependency
	// answers in HitLatency without reaching it. Zero means no cache.
	HitRatio   float64
	HitLatency time.Duration
	// Seed seeds the jitter.
	Seed uint64
	// Phase is where in the clock's ProbeCycle the run starts. The project's
	// limiters measure their floor on whole multiples of ProbeCycle of the
	// clock (so that limiters sharing a resource measure it together), and a
	// synctest bubble's clock starts on one: with a Phase of zero, every
	// event the matrix puts at 5 s meets a floor probe at its first instant,
	// a coincidence an incident in production has no reason to keep. Matrix
	// and RunSeeds draw it from the seed (PhaseOf).
	Phase time.Duration
}

// ProbeCycle is the period of the project's floor probes on the clock (the
// core's floorPeriod): the cycle a run's Phase is drawn from.
const ProbeCycle = 5 * time.Second

// PhaseOf is the Phase a run of the given seed starts at: seed × the golden
// ratio's fractional part, modulo 1, of ProbeCycle, so that consecutive
// seeds spread their phases evenly over the cycle (seed 1 starts 3.09 s into
// it, and its events at 5 s fall 1.9 s before a probe).
func PhaseOf(seed uint64) time.Duration {
	f := math.Mod(float64(seed)*0.6180339887498949, 1)
	return time.Duration(f * float64(ProbeCycle))
}

// Const returns a function of time that is always v.
func Const[T any](v T) func(time.Duration) T {
	return func(time.Duration) T { return v }
}

// Step returns a function that is before until at, and after from then on.
func Step[T any](at time.Duration, before, after T) func(time.Duration) T {
	return func(t time.Duration) T {
		if t < at {
			return before
		}
		return after
	}
}

// Window returns a function that is in during [from, to) and out otherwise.
func Window[T any](from, to time.Duration, out, in T) func(time.Duration) T {
	return func(t time.Duration) T {
		if t >= from && t < to {
			return in
		}
		return out
	}
}

// Flap returns a function that alternates between a and b every period.
func Flap[T any](period time.Duration, a, b T) func(time.Duration) T {
	return func(t time.Duration) T {
		if (t/period)%2 == 0 {
			return a
		}
		return b
	}
}

// Sine returns mid + amp·sin(2πt/period): a day compressed into period.
func Sine(period time.Duration, mid, amp float64) func(time.Duration) float64 {
	return func(t time.Duration) float64 {
		return mid + amp*math.Sin(2*math.Pi*float64(t)/float64(period))
	}
}

// The shared shape of the matrix: a dependency that serves 150 req/s with a
// 20 ms round trip, clients with a 100 ms SLO and a 1 s timeout, and limiters
// promised 300 req/s. These are the seed's figures (SPEC §7).
const (
	nominalCapacity = 150.0
	nominalBase     = 20 * time.Millisecond
	nominalSLO      = 100 * time.Millisecond
	nominalTimeout  = time.Second
	nominalRun      = 20 * time.Second
)

func nominal(name, about string) Scenario {
	return Scenario{
		Name: name, About: about,
		Duration: nominalRun, SLO: nominalSLO, Timeout: nominalTimeout,
		Workers: 300, MaxRate: 2 * nominalCapacity,
		Capacity: Const(nominalCapacity), Base: Const(nominalBase),
		Jitter: 0.2, Seed: 1, Phase: PhaseOf(1),
	}
}

// Matrix returns the scenarios of the comparison matrix: the seed's seven,
// plus an outage. Every one runs 20 s against a dependency of nominally
// 150 req/s, 20 ms round trip, 100 ms SLO.
func Matrix() []Scenario {
	steady := nominal("steady", "150 req/s and 20 ms throughout")

	bump := nominal("benign-bump", "the round trip rises 20 → 70 ms at 5 s; capacity is unchanged")
	bump.Base = Step(5*time.Second, nominalBase, 70*time.Millisecond)

	breaks := nominal("slo-breaks", "the round trip is 130 ms, above the SLO, from 5 s to 12 s")
	breaks.Base = Window(5*time.Second, 12*time.Second, nominalBase, 130*time.Millisecond)

	drops := nominal("capacity-drops", "capacity falls 150 → 40 req/s at 5 s")
	drops.Capacity = Step(5*time.Second, nominalCapacity, 40.0)

	recovers := nominal("capacity-recovers", "capacity is 40 req/s from 3 s to 8 s, then 150 again")
	recovers.Capacity = Window(3*time.Second, 8*time.Second, nominalCapacity, 40.0)

	flapping := nominal("flapping-latency", "the round trip flaps 20 ↔ 60 ms every second, 1% of calls ×4")
	flapping.Base = Flap(time.Second, nominalBase, 60*time.Millisecond)
	flapping.TailProb, flapping.TailFactor = 0.01, 4

	diurnal := nominal("diurnal", "capacity follows a 20 s day between 60 and 180 req/s")
	diurnal.Capacity = Sine(nominalRun, 120, 60)

	outage := nominal("outage", "every call is refused from 5 s to 8 s")
	outage.Refuse = Window(5*time.Second, 8*time.Second, false, true)

	return []Scenario{steady, bump, breaks, drops, recovers, flapping, diurnal, outage}
}
