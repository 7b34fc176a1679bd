package eval

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// The ranges scenarios are drawn from. Each is a property of the world the
// controller must work in, not of the controller.
const (
	minServers, maxServers = 1, 16
	minSigma, maxSigma     = 0.3, 1.0
	minAlpha, maxAlpha     = 1.5, 2.5
	minKnee, maxKnee       = 5, 50
	// Capacity, in requests per second of the mix: from a few calls a second
	// to a couple of thousand.
	minCapacity, maxCapacity = 3.0, 2000.0
	// maxService caps the unloaded mean service time (unless the capacity is
	// below one server's 1/maxService): a dependency that serves 3 req/s
	// with 16 servers would take 5 s a call, which nobody rate-limits at an
	// SLO.
	maxService       = 150 * time.Millisecond
	minNet, maxNet   = time.Millisecond, 50 * time.Millisecond
	maxNetJitter     = 0.5
	minLoad, maxLoad = 0.5, 3.0
	// The SLO is 3–10× the unloaded mean latency, at least 10 ms.
	minSLOFactor, maxSLOFactor = 3.0, 10.0
	minSLO                     = 10 * time.Millisecond
	// Outbound callers' deadlines: drawn per caller in 0.5–5× the SLO, or a
	// fixed timeout of max(1 s, 2 × SLO).
	minDeadlineFactor, maxDeadlineFactor = 0.5, 5.0
	fixedTimeout                         = time.Second
	// MaxRate is 2–4× the peak capacity; MaxLimit 2–10× the resource's knee
	// (its servers or knee, or capacity × unloaded latency if higher).
	minMaxRate, maxMaxRate   = 2.0, 4.0
	minMaxLimit, maxMaxLimit = 2.0, 10.0
	// Trace parameters.
	minDown, maxDown         = 0.25, 0.67 // a capacity fall
	minUp, maxUp             = 1.5, 4.0   // a capacity rise
	minFlap, maxFlap         = time.Second, 5 * time.Second
	minOutage, maxOutage     = 2 * time.Second, 6 * time.Second
	minAmp, maxAmp           = 0.2, 0.6
	minShiftUp, maxShiftUp   = 2.0, 4.0 // level shift of the round trip
	minBurst, maxBurst       = time.Second, 3 * time.Second
	maxBursts                = 3
	minSlowShare             = 0.1
	maxSlowShare             = 0.5
	minSlowCost, maxSlowCost = 5.0, 20.0
	// Route mix: a cheap route 10–1000× cheaper than the normal one (30%
	// of draws have one), an expensive one 10–100× dearer (in 1–10% of the
	// requests).
	minCheap, maxCheap           = 10.0, 1000.0
	minDear, maxDear             = 10.0, 100.0
	minCheapShare, maxCheapShare = 0.1, 0.5
	minDearShare, maxDearShare   = 0.01, 0.1
	// Closed-loop inbound clients.
	minClients, maxClients = 20, 200
	minBackoff, maxBackoff = 5 * time.Millisecond, 20 * time.Millisecond
	// Run length, shortened so that no run has more than maxArrivals
	// arrivals (open loop) or maxAttempts retries' worth of closed-loop
	// clients: the whole suite must run in minutes.
	minDuration, maxDuration = 20 * time.Second, 40 * time.Second
	shortestDuration         = 15 * time.Second
	maxArrivals              = 40000
	maxAttempts              = 200000
)

// RNG streams: each purpose draws from its own stream of the scenario's seed,
// so adding a draw to one never shifts the others.
const (
	streamOutbound uint64 = 0x0b
	streamInbound  uint64 = 0x1b
	streamArrivals uint64 = 0xa7
	streamClient   uint64 = 0xc1 << 32 // + client index
)

// runRand returns the run's generator for stream: the scenario's seed, and
// its draw in the stream's top bits (streamClient's index stays below them).
func (sc *Scenario) runRand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(sc.Seed, stream^sc.Draw<<48))
}

// phase is where in the limiters' floor-probe cycle (sim.ProbeCycle) a run
// of sc starts: none on the scenario's own draw, the one the reports'
// tables read, and sim.PhaseOf(draw) on every other, as compare/sim's
// matrix draws it per seed. A synctest bubble's clock starts on a whole
// cycle, so at one phase every run met its first floor probe exactly 5 s
// in, a coincidence a deployment has no reason to keep, and the one most
// favourable to the law: at the fifty-eighth session's, 450 inbound tuning
// runs met the goal in 374 and matched failsafe-go in 294 at phase 0, and
// in 361–371 and 274–290 at seven others.
func (sc *Scenario) phase() time.Duration {
	return sim.PhaseOf(sc.Draw)
}

// Generate draws the scenario of seed for direction dir. The same seed and
// direction always give the same scenario.
func Generate(dir Direction, seed uint64) Scenario {
	stream := streamOutbound
	prefix := "out"
	if dir == Inbound {
		stream, prefix = streamInbound, "in"
	}
	g := gen{rand.New(rand.NewPCG(seed, stream))}
	sc := Scenario{Name: fmt.Sprintf("%s-%d", prefix, seed), Seed: seed, Direction: dir}

	// The resource.
	sc.Law = Law(g.IntN(4))
	switch sc.Law {
	case PSKnee:
		sc.Knee = g.intIn(minKnee, maxKnee)
		// base = Knee/capacity must stay under maxService.
		lo := math.Max(minCapacity, float64(sc.Knee)/maxService.Seconds())
		sc.Capacity0 = g.logIn(lo, maxCapacity)
	default:
		sc.Servers = g.intIn(minServers, maxServers)
		sc.Capacity0 = g.logIn(minCapacity, maxCapacity)
		// service = Servers/capacity must stay under maxService.
		sc.Servers = max(1, min(sc.Servers, int(sc.Capacity0*maxService.Seconds())))
		switch sc.Law {
		case FIFOLogNormal:
			sc.Sigma = g.in(minSigma, maxSigma)
		case FIFOPareto:
			sc.Alpha = g.in(minAlpha, maxAlpha)
		}
	}
	sc.Net = g.dur(minNet, maxNet, true)
	if g.Float64() < 0.5 {
		sc.NetJitter = g.in(0, maxNetJitter)
	}
	sc.Routes = g.routes()
	sc.Duration = g.dur(minDuration, maxDuration, false)

	// The SLO and the load.
	sc.SLO = max(minSLO, time.Duration(g.in(minSLOFactor, maxSLOFactor)*float64(sc.UnloadedAt(0))))
	sc.Load = g.in(minLoad, maxLoad)
	sc.Rate = sc.Load * sc.Capacity0

	// The trace; it needs the duration, and fixes the peak capacity.
	sc.Trace = g.trace(sc.Duration)

	switch dir {
	case Outbound:
		if g.Float64() < 0.5 {
			sc.DeadlineMin = time.Duration(minDeadlineFactor * float64(sc.SLO))
			sc.DeadlineMax = time.Duration(maxDeadlineFactor * float64(sc.SLO))
		} else {
			sc.DeadlineMin = max(fixedTimeout, 2*sc.SLO)
			sc.DeadlineMax = sc.DeadlineMin
		}
		sc.shorten(maxArrivals / sc.Rate)
		sc.MaxRate = g.in(minMaxRate, maxMaxRate) * sc.PeakCapacity()
	case Inbound:
		knee := math.Max(float64(max(sc.Servers, sc.Knee)), sc.concurrency())
		sc.MaxLimit = max(2, int(math.Ceil(g.in(minMaxLimit, maxMaxLimit)*knee)))
		if g.Float64() < 0.5 {
			sc.closedLoop(g)
		} else {
			sc.shorten(maxArrivals / sc.Rate)
		}
	}
	sc.describe()
	return sc
}

// closedLoop draws the clients of a closed-loop inbound scenario: their
// number, and a think time that makes them offer Load × Capacity0 while
// nobody is refused (none if even back-to-back they offer less).
func (sc *Scenario) closedLoop(g gen) {
	sc.Clients = g.intIn(minClients, maxClients)
	sc.BackoffMin, sc.BackoffMax = minBackoff, maxBackoff
	cycle := float64(sc.Clients) / sc.Rate // seconds per request per client
	lat := sc.UnloadedAt(0).Seconds()
	sc.Think = time.Duration(math.Max(0, cycle-lat) * float64(time.Second))
	sc.Load = float64(sc.Clients) / (sc.Think.Seconds() + lat) / sc.Capacity0
	sc.Rate = sc.Load * sc.Capacity0
	// Refused clients retry every mean backoff: bound the attempts.
	perClient := float64(time.Second) / float64(sc.BackoffMin+sc.BackoffMax) * 2
	sc.shorten(maxAttempts / (float64(sc.Clients) * perClient))
}

// shorten cuts the run to at most limit seconds, never below
// shortestDuration, moving the trace's instants with it.
func (sc *Scenario) shorten(limit float64) {
	d := max(shortestDuration, min(sc.Duration, time.Duration(limit*float64(time.Second))))
	if d >= sc.Duration {
		return
	}
	f := float64(d) / float64(sc.Duration)
	scale := func(t *time.Duration) { *t = time.Duration(float64(*t) * f) }
	tr := &sc.Trace
	scale(&tr.At)
	scale(&tr.Until)
	if tr.Kind == Diurnal {
		scale(&tr.Period)
	}
	if tr.Kind == Outage && tr.Until-tr.At < minOutage {
		tr.Until = tr.At + minOutage
	}
	for i := range tr.Bursts {
		w := &tr.Bursts[i]
		n := w.To - w.From
		scale(&w.From)
		w.To = w.From + n
	}
	sc.Duration = d
}

type gen struct{ *rand.Rand }

func (g gen) in(lo, hi float64) float64 { return lo + (hi-lo)*g.Float64() }
func (g gen) logIn(lo, hi float64) float64 {
	return math.Exp(g.in(math.Log(lo), math.Log(hi)))
}
func (g gen) intIn(lo, hi int) int { return lo + g.IntN(hi-lo+1) }

// dur draws a duration in [lo, hi], log-uniformly if log, rounded to 1 µs.
func (g gen) dur(lo, hi time.Duration, log bool) time.Duration {
	v := g.in(float64(lo), float64(hi))
	if log {
		v = g.logIn(float64(lo), float64(hi))
	}
	return time.Duration(v).Round(time.Microsecond)
}

// factor draws a capacity change: a fall or a rise, evenly.
func (g gen) factor() float64 {
	if g.Float64() < 0.5 {
		return g.logIn(minDown, maxDown)
	}
	return g.logIn(minUp, maxUp)
}

// at draws an instant in [lo, hi] of d.
func (g gen) at(d time.Duration, lo, hi float64) time.Duration {
	return time.Duration(g.in(lo, hi) * float64(d)).Round(time.Millisecond)
}

func (g gen) trace(d time.Duration) Trace {
	tr := Trace{Kind: TraceKind(g.IntN(drawnKinds))}
	switch tr.Kind {
	case Step:
		tr.At, tr.Factor = g.at(d, 0.3, 0.6), g.factor()
	case Ramp:
		tr.At = g.at(d, 0.2, 0.4)
		tr.Until = tr.At + g.at(d, 0.2, 0.4)
		tr.Factor = g.factor()
	case Flap:
		tr.Period = g.dur(minFlap, maxFlap, false).Round(time.Millisecond)
		tr.Factor = g.logIn(minDown, maxDown)
	case Outage:
		tr.At = g.at(d, 0.3, 0.6)
		tr.Until = tr.At + g.dur(minOutage, maxOutage, false).Round(time.Millisecond)
	case Diurnal:
		tr.Period = g.at(d, 0.5, 1)
		tr.Amp = g.in(minAmp, maxAmp)
	case LevelShift:
		tr.At = g.at(d, 0.3, 0.6)
		tr.Factor = g.logIn(minShiftUp, maxShiftUp)
		if g.Float64() < 0.5 {
			tr.Factor = 1 / tr.Factor
		}
	case SlowBursts:
		n := g.intIn(1, maxBursts)
		length := g.dur(minBurst, maxBurst, false).Round(time.Millisecond)
		for range n {
			from := g.at(d, 0.2, 0.85)
			tr.Bursts = append(tr.Bursts, Window{from, from + length})
		}
		tr.SlowShare = g.in(minSlowShare, maxSlowShare)
		tr.SlowCost = g.in(minSlowCost, maxSlowCost)
	}
	return tr
}

// routes draws the request mix: one route half the time; otherwise a normal
// route beside a cheap one, a dear one, or both. Costs are normalised so the
// mix's mean cost is 1.
func (g gen) routes() []Route {
	if g.Float64() < 0.5 {
		return []Route{{Name: "call", Share: 1, Cost: 1}}
	}
	k := g.IntN(3) // 0: cheap, 1: dear, 2: both
	var cheap, dear *Route
	if k != 1 {
		cheap = &Route{Name: "health", Share: g.in(minCheapShare, maxCheapShare), Cost: 1 / g.logIn(minCheap, maxCheap)}
	}
	if k != 0 {
		dear = &Route{Name: "report", Share: g.in(minDearShare, maxDearShare), Cost: g.logIn(minDear, maxDear)}
	}
	normal := Route{Name: "normal", Share: 1, Cost: 1}
	var rs []Route
	for _, r := range []*Route{cheap, dear} {
		if r != nil {
			normal.Share -= r.Share
		}
	}
	if cheap != nil {
		rs = append(rs, *cheap)
	}
	rs = append(rs, normal)
	if dear != nil {
		rs = append(rs, *dear)
	}
	return normalise(rs)
}

func normalise(rs []Route) []Route {
	mean := 0.0
	for _, r := range rs {
		mean += r.Share * r.Cost
	}
	for i := range rs {
		rs[i].Cost /= mean
	}
	return rs
}
