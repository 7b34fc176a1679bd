//go:build agilelimiter_model

package agilelimiter

import (
	"math"
	"time"
)

// controller is the brain both limiters share: a pure function of its state
// and one tick's evidence. It knows nothing of clocks, goroutines or
// actuators; the limiters feed it a drained histogram every TickInterval and
// push the limit it returns to their bucket or semaphore.
//
// The law. Ticks gather into rounds (roundSamples answers; every tick in slow
// start). Of each round it reads the latency a slot sees (the median weighted
// by duration, so a flood of cheap calls cannot drag it down), the p99, and what
// got through. Its model of the resource is three numbers: floor, the unloaded
// latency (the lowest round seen, raised only by experiment); high, the most
// latency it accepts (AnchorBaseline: 2·floor; AnchorSLO: 0.8·SLO; never above
// 0.8·SLO); and knee, the limit the resource last held. First match wins:
//
//	refused, p99 > SLO, or latency > high → cut to min(limit, got through) × mid/latency, once a round trip
//	a cut that left latency where it was  → a level shift: floor := latency, limit restored
//	demand below the limit                → idle: nothing learnt above it
//	never congested, latency < 1.25·floor → slow start: ×2
//	below 0.9·knee                        → return: ×2, up to 0.9·knee
//	the last probe got nothing through    → knee: back to the limit before it
//	latency past mid = (floor+high)/2     → full: hold
//	otherwise                             → probe: + 1% of the ceiling
type controller struct {
	s     settings
	limit float64

	// floor is the unloaded latency in nanoseconds (0 until the first
	// round); floorAge how long since it was last lowered or measured.
	floor    float64
	floorAge time.Duration
	verified bool
	// knee is the limit the resource last held (0: unknown).
	knee float64
	// cold is true until the first cut or the first latency rise: slow start.
	cold bool
	// down is the way the next probe goes where either way is allowed:
	// set when a probe up got nothing more through, cleared when a probe
	// down cost throughput.
	down bool
	// step is the last probe's step, 0 after anything but a probe.
	lastStep float64
	// raised is set when the limit rises, and cleared by the cut that
	// follows: that cut's limit is the knee.
	raised bool

	round round
	// settling is set by a cut or a floor probe until the typical answer
	// was sent after it: the calls in flight when it was made say nothing
	// of it. since is the time since it was made.
	settling bool
	since    time.Duration
	// cut is the last cut, kept until the round after it says whether it
	// lowered the latency (a queue) or not (a level shift).
	cut struct {
		pending, shift bool
		latency, from  float64
	}
	// measure is a floor probe under way: the limit it lowered, to restore
	// once the round after it has measured the floor.
	measure struct {
		pending       bool
		from, latency float64 // the limit before, and the latency there
	}
	// probe is the last additive probe, kept until the round after it says
	// whether it got more through.
	probe struct {
		pending, down bool
		from, at      float64 // the limit before it, and what got through then
	}

	view view
}

// round is the evidence gathered since the last decision.
type round struct {
	hist        snapshot
	unreachable uint64
	ticks       int
	dt          time.Duration
	saturated   bool    // demand reached the limit in every tick of it
	delivered   float64 // calls reported back, summed over its ticks
	admitted    float64 // slots granted (rate limit), summed over its ticks
}

// view is what the controller saw and did at its last tick.
type view struct {
	latency, p99, floor, high time.Duration
	samples, synthetic        int
	decision                  decision
}

// decision is what one tick did with the limit. Every reason is its own
// value: a limit that did not move says why.
type decision uint8

const (
	decBlind      decision = iota // no answers yet: nothing changes
	decGather                     // a round is under way: not enough answers to decide
	decSettle                     // a cut's effect has not reached the answers yet
	decRefused                    // Unreachable answers: cut
	decSLO                        // p99 above SLOTarget: cut
	decQueue                      // latency above the window: a queue, cut
	decDrain                      // latency falls after a cut: the queue drains, wait
	decShift                      // a cut left latency where it was: a level shift, floor re-learnt
	decFloorProbe                 // the floor is stale: the limit halves for a round to measure it
	decFloor                      // the floor was measured again, and the limit restored
	decIdle                       // demand did not reach the limit
	decSlowStart                  // never congested: double
	decReturn                     // back toward the knee: double
	decKnee                       // the last probe got nothing more through: undone
	decFull                       // the last trim cost throughput: undone, hold
	decTrim                       // latency in the upper half of the window: one step down
	decCeiling                    // at the ceiling: nothing above to probe
	decProbe                      // additive probe
)

var decisionNames = [...]string{
	"blind", "gather", "settle", "refused", "slo", "queue", "drain", "shift", "floor-probe", "floor",
	"idle", "slow-start", "return", "knee", "full", "trim", "ceiling", "probe",
}

func (d decision) String() string { return decisionNames[d] }

// The law's thresholds. None is configuration: each is what the reason
// beside it needs, and compare/'s ablation shows the figure each protects.
const (
	// roundSamples is how many answers a round needs outside slow start: the
	// median of eight is inside the middle half of the distribution with
	// probability 0.93, enough that one slow answer does not cost a cut.
	roundSamples = 8
	// roundMaxTicks closes a round with what it has: at a few calls a
	// second, a decision every two seconds rather than none.
	roundMaxTicks = 20
	// baselineWindow is how far above the floor AnchorBaseline lets latency
	// rise (SPEC §3.2: the window is twice the unloaded latency).
	baselineWindow = 2.0
	// sloShare caps the window at 80% of SLOTarget, so that the p99 has room
	// above the median before the SLO breaks.
	sloShare = 0.8
	// queueOnset is where a queue shows: latency a quarter above the floor.
	// Slow start ends there, before the queue the next doubling would build
	// (HyStart), and a probe down is worth trying only past it.
	queueOnset = 1.25
	// minCut and maxCut bound one cut: at least 10% (a cut that changes
	// nothing measurable is no experiment), at most half (TCP's decrease).
	minCut, maxCut = 0.9, 0.5
	// returnShare is how close to the knee a return goes before probing
	// again additively (CUBIC and BIC return fast, then probe carefully).
	returnShare = 0.9
	// probeShare is the additive probe as a share of the ceiling: the climb
	// from floor to ceiling takes 100 rounds. Additive on purpose: with a
	// multiplicative cut, instances sharing a resource converge to equal
	// shares only if the probe is additive (AIMD).
	probeShare = 0.01
	// probePays is the share of a probe's step that must come through for
	// the probe to stay: a resource past its knee delivers nothing more
	// (or less) for more admitted.
	probePays = 0.5
	// probeCalls is how many answers a probe's step must be worth before
	// what got through can judge it: a difference of one call is noise.
	probeCalls = 2
	// shiftKept is how much of the latency a cut must leave for the rise to
	// read as a level shift: a queue the cut drained falls by more.
	shiftKept = 0.9
	// floorMaxAge: a floor not lowered or measured for ten seconds of
	// latency held in the upper half of the window is measured again
	// (BBR's ProbeRTT interval).
	floorMaxAge = 10 * time.Second
	// floorProbeShare is how far a floor probe lowers the limit: a quarter
	// of the load drains a queue of one's own making within a round trip
	// and, unlike half, is below the knee of a service first met with a
	// burst of twice its knee.
	floorProbeShare = 0.25
)

// initialLimit is a semaphore's starting limit when InitialLimit is zero:
// half the ceiling, so a service that just started serves a cold burst of
// that size at once; the first round trip of answers cuts it to the knee if
// the service holds less.
func initialLimit(ceiling float64) float64 { return math.Floor(ceiling / 2) }

func newController(s settings) *controller {
	return &controller{s: s, limit: s.initial, cold: true, raised: true}
}

// fill copies the controller's view into st.
func (c *controller) fill(st *Stats) {
	v := c.view
	st.Baseline, st.High = v.floor, v.high
	st.P50, st.P99 = v.latency, v.p99
	st.Samples, st.Unreachable = v.samples, v.synthetic
	st.Decision = v.decision.String()
}

// reserve is the round trip a call needs: the last round's p99.
func (c *controller) reserve() time.Duration { return c.view.p99 }

// high is the top of the window, in nanoseconds.
func (c *controller) high() float64 {
	h := sloShare * float64(c.s.slo)
	if c.s.anchor == AnchorBaseline && (h == 0 || baselineWindow*c.floor < h) {
		h = baselineWindow * c.floor
	}
	// A floor near the SLO leaves the window no room: a quarter above the
	// floor is still a queue, and the p99 guard still protects the SLO.
	return math.Max(h, queueOnset*c.floor)
}

// step takes one tick and returns the new limit.
func (c *controller) step(in tick) float64 {
	r := &c.round
	r.hist.add(in.hist)
	r.unreachable += in.unreachable
	r.ticks++
	r.dt += in.dt
	r.saturated = in.saturated && (r.ticks == 1 || r.saturated)
	r.delivered += in.completions
	r.admitted += in.admitted * in.dt.Seconds()

	c.view.samples, c.view.synthetic = int(in.hist.n+in.unreachable), int(in.unreachable)
	dec := c.decide(in)
	c.limit = math.Min(math.Max(c.limit, c.s.min), c.s.max)
	c.view.decision = dec
	c.view.floor, c.view.high = time.Duration(c.floor), time.Duration(c.high())
	return c.limit
}

// decide closes the round when it holds enough evidence and applies the law.
func (c *controller) decide(in tick) decision {
	r := &c.round
	if c.settling {
		// An answer of latency d arriving in this tick was sent at least
		// d before the tick began. Until the slowest of them was sent after
		// the cut, what arrives says nothing of it (BBR's packet-timed
		// round trip, read off the durations).
		fresh := in.hist.n > 0 && in.hist.quantile(0.99, 0, 0) <= c.since
		c.since += in.dt
		if !fresh && c.since < roundMaxTicks*c.s.tick {
			*r = round{}
			return decSettle
		}
		c.settling = false
	}
	n := r.hist.n + r.unreachable
	switch {
	case n == 0 && r.ticks >= roundMaxTicks:
		*r = round{}
		return decBlind
	case n == 0:
		return decBlind
	case r.unreachable == 0 && r.ticks < roundMaxTicks &&
		((n < roundSamples && !c.growing()) || r.dt < time.Duration(c.floor) ||
			(c.floor == 0 && r.dt < r.hist.quantile(0.5, 0, 0))):
		// A round is a round trip with enough answers in it: shorter, it
		// sees only the fastest answers of what it sent.
		return decGather
	}
	e := c.read()
	*r = round{}
	if e.latency == 0 && !e.unreachable {
		return decBlind // only Unavailable calls, and nothing to put them above
	}
	dec := c.law(e)
	if dec != decProbe && dec != decIdle {
		c.lastStep = 0 // anything but a paying probe ends the run of probes
	}
	return dec
}

// growing reports whether the limit is where growth is known to be safe: in
// slow start, or far below the knee. There one answer is a round: at the
// floor after an outage a round of roundSamples would take seconds, and the
// next round, at a higher rate, is quick to cut if the answer misled.
func (c *controller) growing() bool {
	return c.cold || c.limit < returnShare*c.knee/2
}

// evidence is one round, read.
type evidence struct {
	latency, p99    float64 // nanoseconds
	unreachable     bool
	saturated       bool
	delivered, sent float64 // per second; sent is 0 for a semaphore
	rtt             time.Duration
	dt              time.Duration
	ticks           int
}

func (c *controller) read() evidence {
	r := &c.round
	// An Unavailable call is a sample above the window and above the SLO.
	// With no SLO and no floor there is nothing to put it above: dropped.
	above := time.Duration(2 * math.Max(c.high(), float64(c.s.slo)))
	unreach := r.unreachable
	if above == 0 {
		unreach = 0
	}
	e := evidence{
		unreachable: unreach > 0,
		saturated:   r.saturated,
		p99:         float64(r.hist.quantile(0.99, unreach, above)),
		dt:          r.dt,
		ticks:       r.ticks,
	}
	if r.hist.n > 0 {
		e.latency = float64(r.hist.weightedMedian())
		e.rtt = r.hist.quantile(0.5, 0, 0)
	}
	if r.dt > 0 {
		e.delivered = r.delivered / r.dt.Seconds()
		e.sent = r.admitted / r.dt.Seconds()
	}
	c.view.latency, c.view.p99 = time.Duration(e.latency), time.Duration(e.p99)
	return e
}

// overdriven reports whether a rate limit sent more than came back in the
// round, by a tenth and by at least two calls (at a low rate one call more or
// less is a large share and no evidence): a queue grows, whatever the latency
// did.
func overdriven(e evidence) bool {
	behind := (e.sent - e.delivered) * e.dt.Seconds()
	return e.sent > 0 && behind >= 2 && behind >= (1-shiftKept)*e.sent*e.dt.Seconds()
}

// law applies the law to one round of evidence.
func (c *controller) law(e evidence) decision {
	// The floor: any lower round is trustworthy at once.
	if e.latency > 0 {
		switch {
		case c.floor == 0 || e.latency < c.floor:
			// Lower is trustworthy at once; but not proof that the floor
			// is not still too high, so its age goes on.
			c.floor = e.latency
		}
		if e.latency > (c.floor+c.high())/2 {
			// Held in the upper half of the window: either a queue the
			// limiter keeps, or a floor that moved. Time to check which.
			c.floorAge += e.dt
		}
	}

	// A floor probe's round: what latency is at half the load is the floor,
	// higher or lower than the one it replaces (a level shift, or a floor
	// first measured past the knee). The limit goes back where it was.
	if c.measure.pending && e.latency > 0 {
		c.measure.pending = false
		c.floor, c.floorAge = e.latency, 0
		// Back where it was, unless the latency there was past the
		// window that the floor just measured now draws: then as a cut
		// from there would have gone.
		c.limit, c.raised = c.measure.from, true
		if high := c.high(); c.measure.latency > high {
			c.limit *= math.Max((c.floor+high)/2/c.measure.latency, maxCut)
			c.knee = math.Min(c.knee, c.limit)
		}
		if !e.unreachable && !(c.s.slo > 0 && e.p99 > float64(c.s.slo)) {
			return decFloor
		}
	}
	// The last cut was an experiment: did it lower the latency?
	afterCut := c.cut.pending
	if c.cut.pending && e.latency > 0 {
		c.cut.pending = false
		moved := e.latency < shiftKept*c.cut.latency || e.latency > c.cut.latency/shiftKept
		slo := c.s.slo > 0 && e.p99 > float64(c.s.slo)
		switch {
		case e.unreachable || overdriven(e) || slo || e.latency <= c.high():
			// Refused, still sending more than gets through, past the
			// SLO, or back in the window: the law as usual.
		case moved:
			// Still moving: the answers lag the queue the cut left by its
			// own length. A second cut now would overshoot far below it.
			c.cut.pending, c.cut.latency = true, e.latency
			return decDrain
		case e.latency > c.high() && c.cut.shift:
			// Settled above the window with less sent than gets through:
			// the rise was not of the limiter's making. A level shift.
			c.floor, c.floorAge = e.latency, 0
			c.raised = true
			c.limit = c.cut.from
			c.probe.pending = false
			return decShift
		}
	}
	high := c.high()
	mid := (c.floor + high) / 2

	congested := decision(0)
	switch {
	case e.unreachable:
		congested = decRefused
	case c.s.slo > 0 && e.p99 > float64(c.s.slo):
		congested = decSLO
	case high > 0 && e.latency > high:
		congested = decQueue
	}
	if congested != 0 {
		c.probe.pending = false
		c.cold = false
		if !c.verified {
			// The first congestion: the floor so far was measured at
			// whatever load the limiter started with, which may already
			// have been past the knee. Measure it once the cut settles.
			c.verified, c.floorAge = true, floorMaxAge
		}
		from := c.limit
		// What got through is what the resource sustains: a rate limit cuts
		// from it, not from a rate the resource never served.
		base := c.limit
		if e.sent > 0 && e.delivered > 0 {
			base = math.Min(base, e.delivered)
		}
		// Bring the latency back to the middle of the window within a round
		// trip: in-flight work scales with the limit (Little's law).
		factor := minCut
		if e.latency > 0 && mid > 0 {
			factor = math.Min(minCut, mid/e.latency)
		}
		if congested == decSLO {
			factor = math.Min(factor, float64(c.s.slo)/e.p99)
		}
		if congested == decRefused {
			factor = maxCut
		}
		factor = math.Max(factor, maxCut)
		if c.raised {
			// The first cut since the limit last rose: what it rose to is
			// where the resource gave out. Later cuts of the same episode
			// only lower it by what got through.
			c.raised = false
			c.knee = from
			if e.sent == 0 && e.latency > high {
				// A semaphore's occupants wait in proportion to how many
				// there are (Little's law): the limit that held latency at
				// the window's top is this one scaled down to it.
				c.knee = from * high / e.latency
			}
		}
		if c.knee > 0 && afterCut && overdriven(e) {
			// A second cut, and still sending more than gets through: the
			// resource sustains less than the knee. (After one cut, answers
			// delayed by a latency step look the same for a round.)
			c.knee = math.Min(c.knee, e.delivered)
		}
		c.limit = base * factor
		c.cut.pending, c.cut.latency, c.cut.from = congested != decRefused, e.latency, from
		c.cut.shift = congested == decQueue
		c.settling, c.since = true, 0
		return congested
	}

	// A probe is judged by what got through: one up stays only if it got
	// more through, by at least probePays of its step; one down stays only
	// if it cost less than that.
	if c.probe.pending {
		c.probe.pending = false
		paid := c.probe.at * (1 + probePays*(c.limit/c.probe.from-1))
		// A round in which the step was worth fewer than probeCalls
		// answers cannot judge it: a probe up stays unjudged (the window
		// still guards it); one down goes back, so that noise cannot walk
		// the limit down.
		judged := math.Abs(c.limit/c.probe.from-1)*e.delivered*e.dt.Seconds() >= probeCalls
		switch {
		case !e.saturated:
		case c.probe.down && !judged:
			c.limit = c.probe.from
			return decFull
		case !c.probe.down && e.delivered < paid:
			c.limit, c.knee = c.probe.from, c.probe.from
			c.down = true // past the knee: the next probe goes the other way
			return decKnee
		case c.probe.down && e.delivered < paid:
			c.limit = c.probe.from
			c.down = false
			return decFull
		case c.probe.down:
			// Shedding slots cost nothing: the resource holds less than
			// the knee said.
			c.knee = math.Min(c.knee, c.limit)
		}
	}
	if !e.saturated {
		return decIdle
	}
	if !c.cold && c.floorAge >= floorMaxAge {
		// No round has come near the floor for a while: measure it again
		// at half the load (BBR's ProbeRTT, Envoy's minRTT recalculation),
		// so a floor that moved, or was first seen past the knee, is
		// replaced rather than trusted.
		c.measure.pending, c.measure.from, c.measure.latency = true, c.limit, e.latency
		c.limit *= floorProbeShare
		c.settling, c.since = true, 0
		c.probe.pending = false
		return decFloorProbe
	}
	switch {
	case c.cold && e.latency <= queueOnset*c.floor:
		c.raised = true
		c.limit *= 2
		return decSlowStart
	case c.limit < returnShare*c.knee:
		c.cold = false
		// Per tick of time the round covered: at a low rate a round is
		// long, and the return should not be slower in time for it.
		c.raised = true
		c.limit = math.Min(c.limit*math.Exp2(float64(e.ticks)), returnShare*c.knee)
		return decReturn
	}
	c.cold = false
	if c.limit >= c.s.max {
		return decCeiling // nothing above to probe
	}
	// The probe climbs what gets through, one step at a time, inside the
	// window: up while latency is in its lower half, down while a queue
	// shows, and in between the way the last probe paid.
	up, down := e.latency <= mid, e.latency > queueOnset*c.floor
	c.probe.pending, c.probe.from, c.probe.at, c.probe.down = true, c.limit, e.delivered, down && (!up || c.down)
	if c.probe.down {
		// In the upper half of the window: try one step down. Slots that
		// carried nothing more through (a queue, or a resource past its
		// knee that serves less the more it holds) are better shed.
		c.limit -= probeShare * c.s.max
		return decTrim
	}
	c.raised = true
	// Past the knee with every probe paying, the resource has grown: each
	// probe doubles the last (BIC's max probing), so a capacity that rose
	// fourfold is found in a few rounds, not a hundred. At or below the
	// knee the probe is additive, which is what makes shares converge.
	step := probeShare * c.s.max
	if c.limit > c.knee && c.lastStep > 0 {
		step = 2 * c.lastStep
	}
	c.lastStep = step
	c.limit += step
	return decProbe
}
