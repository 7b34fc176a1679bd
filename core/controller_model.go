//go:build agilelimiter_model

package agilelimiter

import (
	"math"
	"time"
)

// controller is the brain both limiters share: a pure function of its state
// and one tick's evidence. It knows nothing of clocks, goroutines or
// actuators; the limiters feed it a drained histogram every TickInterval and
// push what it paces at (the limit step returns, or less while too much is
// in flight) to their bucket or semaphore.
//
// The law. Ticks gather into rounds: a round trip with roundSamples answers,
// all sent after the limit last moved. Of each it reads the median latency
// (robust to a dear route's few calls), the answers past the SLO and what
// got through. The model: floor, the unloaded latency (lowest median of 64
// answers, measured again at a quarter of the load when in doubt); capacity,
// the most that got through lately; the knee that carries it (a rate:
// capacity; in flight: capacity × the floor's mean latency, Little's law);
// high, the latency accepted (AnchorBaseline 2·floor or the wait of 3 calls
// queued, if more; AnchorSLO 0.8·SLO; never above that).
//
//	a rate paces at the limit, but keeps at most 1.5·capacity·high in flight (BBR's cwnd): the limit does not move
//	in flight > 2·capacity·high (a rate; before capacity is known, what is sent) → backlog: half what comes back until it drains
//	refused, more past the SLO than 1% (or than unloaded), latency > high → cut toward mid-window
//	a cut that left latency where it was → a level shift, or others' queue: measure the floor, then restore
//	never congested, latency ≤ 1.25·floor → slow start ×2; below 0.9·knee → return ×2 to 0.9·knee
//	else one step of 1% of the ceiling toward mid-window; kept if it paid (small steps judged together)
type controller struct {
	s     settings
	limit float64

	// floor is the unloaded latency in nanoseconds (0 until the first
	// round); floorAge how long latency has been held in the upper half of
	// the window since the floor was last lowered or measured; verified is
	// set by the first congestion, which schedules a floor probe: until
	// then the floor was measured at whatever load the limiter started with.
	floor    float64
	floorAge time.Duration
	// floorMean is the mean latency of the answers the floor was read
	// from: Little's law holds for the mean, and in a mix of cheap and
	// dear calls the median is far below it.
	floorMean float64
	// guess is set while the floor is the first round's median, until the
	// first epoch replaces it.
	guess bool
	// tailOver of tailN answers of epochs without a queue (median at most
	// a quarter above the floor) were past the SLO: the resource's own
	// tail, which no limit cures (a route dearer than the SLO).
	tailOver, tailN float64
	// inflight is how many calls a rate limit has sent that have not come
	// back: slots granted less answers.
	inflight float64
	verified bool
	// epoch gathers rounds until it holds epochSamples answers: a median
	// and a throughput solid enough to take a minimum or a maximum of. got
	// holds what got through in the last capacityEpochs epochs, per second:
	// capacity is their maximum (BBR's bottleneck bandwidth filter).
	epoch epoch
	got   [capacityEpochs]float64
	gotI  int
	// cold is true until the first cut or the first latency rise: slow start.
	cold bool

	round round
	// settling is set whenever the limit moves, until the slowest answer of
	// a tick was sent after the move; lowered says the move was down; since
	// is the time since it.
	settling, lowered bool
	since, settleMax  time.Duration

	// cut is the last cut, kept until the rounds after it say whether it
	// lowered the latency (a queue) or not (a level shift).
	cut struct {
		pending            bool
		latency, p99, from float64
	}
	// measure is a floor probe under way.
	measure struct {
		pending       bool
		from, latency float64 // the limit before, and the latency there
	}
	// probe is the last probe, kept until the round after it says whether
	// what got through paid for it; down says it was a step down.
	probe struct {
		pending, down bool
		// carry says the last step up was too small to judge: the next
		// one is judged with it, from where it began.
		carry    bool
		from, at float64 // the limit before it, and what got through then
	}
	// lastStep is the last probe up's step.
	lastStep float64
	// most is the most that got through in an epoch, decaying by mostDecay
	// an epoch: unlike capacity it survives a capacity drop, so a doubling
	// probe may climb back to it when the capacity returns.
	most float64

	view view
}

// round is the evidence gathered since the last decision.
type round struct {
	hist        snapshot
	unreachable uint64
	ticks       int
	dt          time.Duration
	saturated   int     // ticks of it in which demand reached the limit
	completions float64 // calls that came back
	admitted    float64 // slots granted (rate limit)
}

// epoch is the rounds gathered until they hold epochSamples answers.
type epoch struct {
	over        uint64 // answers past the SLO
	hist        snapshot
	dt          time.Duration
	completions float64
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
	decSettle                     // the limit just moved: answers still come from before
	decRefused                    // Unreachable answers: cut
	decSLO                        // p99 above SLOTarget: cut
	decQueue                      // latency above the window: a queue, cut
	decDrain                      // latency falls after a cut: the queue drains, wait
	decShift                      // a cut left latency where it was: a level shift, or others' queue; the floor is measured at a quarter of the load
	decFloorProbe                 // the floor is in doubt: the limit drops to a quarter for a round to measure it
	decFloor                      // the floor was measured again, and the limit restored
	decIdle                       // demand did not reach the limit
	decSlowStart                  // never congested: double
	decReturn                     // back toward the knee: double
	decKnee                       // the last probe up got nothing more through: undone
	decFull                       // the last probe down cost throughput: undone
	decCeiling                    // at the ceiling: nothing above to probe
	decTrim                       // latency past the queue's onset: one step down
	decProbe                      // latency in the window's lower half: one step up
	decBacklog                    // more in flight than twice the window holds at capacity: sending half what comes back
)

var decisionNames = [...]string{
	"blind", "gather", "settle", "refused", "slo", "queue", "drain", "shift", "floor-probe", "floor",
	"idle", "slow-start", "return", "knee", "full", "ceiling", "trim", "probe", "backlog",
}

func (d decision) String() string { return decisionNames[d] }

// The law's thresholds. None is configuration: each is what the reason
// beside it needs, and compare/'s ablation shows the figure each protects.
const (
	// roundSamples is how many answers a round needs: the median of eight
	// is inside the middle half of the distribution with probability 0.93,
	// enough that one slow answer does not cost a cut. Slow start and a
	// return far below the knee decide on fewer: growth there is known to
	// be safe, and the next round is quick to cut if it misled.
	roundSamples = 8
	// roundMaxTicks closes a round with what it has: at a few calls a
	// second, a decision every two seconds rather than none.
	roundMaxTicks = 20
	// baselineWindow is how far above the floor AnchorBaseline lets latency
	// rise (SPEC §3.2: the window is twice the unloaded latency).
	baselineWindow = 2.0
	// sloShareOver is the share of answers a p99 SLO lets past it.
	sloShareOver = 0.01
	// sloZ is how many standard deviations past the expected count of
	// answers over the SLO a round must be to read as a breach: one false
	// alarm in about a hundred rounds.
	sloZ = 2.33
	// sloShare caps the window at 80% of SLOTarget, so that the p99 has room
	// above the median before the SLO breaks.
	sloShare = 0.8
	// queueOnset is where a queue shows: latency a quarter above the floor.
	// Slow start ends there, before the queue the next doubling would build
	// (HyStart); an epoch no slower counts toward the resource's own tail;
	// and the window is never narrower.
	queueOnset = 1.25
	// minCut and maxCut bound one cut: at least 10% (a cut that changes
	// nothing measurable is no experiment), at most half (TCP's decrease).
	minCut, maxCut = 0.9, 0.5
	// returnShare is how close to the knee a return goes before probing
	// again step by step (CUBIC and BIC return fast, then probe carefully).
	returnShare = 0.9
	// probeShare is one probe's step as a share of the ceiling: the climb
	// from floor to ceiling takes 100 rounds. Additive on purpose: with a
	// multiplicative cut, instances sharing a resource converge to equal
	// shares only if the probe is additive (AIMD).
	probeShare = 0.01
	// probePays is the share of a probe's step that must come through for
	// the probe to stay: a resource past its knee delivers nothing more
	// (or less) for more admitted.
	probePays = 0.5
	// probeGain caps a doubled probe at a quarter of the limit.
	probeGain = 0.25
	// probeCalls is how many answers a probe's step must be worth in a
	// round before what got through can judge it: one call is noise.
	probeCalls = 2
	// shiftKept is how much of the latency and p99 a cut must leave for the
	// rise to read as a level shift: a queue the cut drained falls by more.
	shiftKept = 0.9
	// backlogShare is how many times the calls the window holds at
	// capacity (capacity × high, Little's law) may be in flight before the
	// excess reads as a queue past the resource's cliff.
	backlogShare = 2.0
	// tailMemory is how many answers the resource's own tail is read
	// from before older ones count half: enough to tell 2% from 1%.
	tailMemory = 1024
	// fastStartAnswers is how many answers a tick needs to judge a doubling
	// in slow start by itself: one answer is noise.
	fastStartAnswers = 2
	// saturatedShare is the share of a round's ticks in which demand must
	// have reached the limit for the round to say anything of the region
	// above it. At a few calls a second a round lasts many ticks, some of
	// which no call falls in.
	saturatedShare = 0.5
	// epochSamples is how many answers the floor and the capacity are read
	// from: the median of 64 is within about ±15% of the true one, so a
	// minimum or a maximum over a few of them is not just the luckiest
	// round's noise (a minimum of 8-answer medians drifts far below the
	// unloaded latency of an exponential server).
	epochSamples = 64
	// capacityEpochs is how many epochs the capacity filter remembers
	// (BBR's bottleneck bandwidth window).
	capacityEpochs = 10
	// floorMaxAge is how long latency may be held in the upper half of the
	// window before the floor is measured again (BBR's ProbeRTT interval).
	floorMaxAge = 10 * time.Second
	// floorProbeShare is how far a floor probe lowers the limit: a quarter
	// of the load drains a queue of the limiter's making within a round
	// trip and is below the knee of a service first met with a burst of
	// twice its knee.
	floorProbeShare = 0.25
	// queueCalls is the queue, in calls, AnchorBaseline always accepts
	// (Vegas' alpha: TCP Vegas keeps two to four packets queued).
	queueCalls = 3.0
	// cwndGain is how many times what the window holds at capacity a rate
	// limit may keep in flight: the gate stands behind the law and binds
	// only when latency runs past the window faster than a round can say
	// so. At 1× (BBR's cwnd gain of two, for AnchorBaseline's window of
	// twice the floor) it held latency at the window's top, where the law
	// reads noise as a queue; at 1.25× limiters sharing a resource yielded
	// to a newcomer in slow start, which then read their queue as its
	// floor (TestSharedQueueIsNotALevelShift failed in 3 of 6 runs).
	cwndGain = 1.5
	// cwndMin is the fewest calls the gate lets out (BBR's minimum cwnd of
	// four packets): at a few calls a second the window holds less than one.
	cwndMin = 4.0
	// mostDecay halves the memory of the most that got through in about
	// 35 epochs.
	mostDecay = 0.98
)

// initialLimit is a semaphore's starting limit when InitialLimit is zero:
// half the ceiling, so a service that just started serves a cold burst of
// that size at once; the first round trip of answers cuts it to the knee if
// the service holds less.
func initialLimit(ceiling float64) float64 { return math.Floor(ceiling / 2) }

func newController(s settings) *controller {
	return &controller{s: s, limit: s.initial, cold: true}
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
	if c.floor == 0 {
		return h // nothing to build on yet but the SLO, if any
	}
	if c.s.anchor == AnchorBaseline {
		w := baselineWindow * c.floor
		if x := c.capacity(); x > 0 && uses("queue-calls") {
			// ...or a queue of queueCalls calls, if that is more: the
			// wait they add is queueCalls / capacity (Little's law). A
			// server of one or two workers needs a few calls waiting to
			// stay busy, and twice its unloaded latency allows one.
			w = math.Max(w, c.floor+queueCalls/x*float64(time.Second))
		}
		if h == 0 || w < h {
			h = w
		}
	}
	// A floor near the SLO leaves the window no room: a queue still shows
	// at its onset, and the p99 guard still protects the SLO.
	return math.Max(h, queueOnset*c.floor)
}

// capacity is the most that got through per second in the last
// capacityEpochs epochs.
func (c *controller) capacity() float64 {
	m := 0.0
	for _, v := range c.got {
		m = math.Max(m, v)
	}
	return m
}

// knee is the limit that carries the capacity: the capacity itself for a
// rate, capacity × the floor's mean latency for a count in flight (Little's
// law holds for the mean, not the median), 0 if unknown.
func (c *controller) knee() float64 {
	if !c.s.rate && !uses("knee-mean") {
		return c.capacity() * c.floor / float64(time.Second)
	}
	return c.carries(c.capacity())
}

// carries is the limit that carries a throughput (per second): the
// throughput itself for a rate, × the floor's mean latency in flight.
func (c *controller) carries(x float64) float64 {
	if c.s.rate {
		return x
	}
	return x * c.floorMean / float64(time.Second)
}

// step takes one tick and returns the new limit.
func (c *controller) step(in tick) float64 {
	r := &c.round
	r.hist.add(in.hist)
	r.unreachable += in.unreachable
	r.ticks++
	r.dt += in.dt
	if in.saturated {
		r.saturated++
	}
	r.completions += in.completions
	r.admitted += in.admitted * in.dt.Seconds()

	c.view.samples, c.view.synthetic = int(in.hist.n+in.unreachable), int(in.unreachable)
	from := c.limit
	if c.s.rate {
		c.inflight = math.Max(0, c.inflight+in.admitted*in.dt.Seconds()-in.completions)
	}
	dec := c.decide(in)
	c.limit = math.Min(math.Max(c.limit, c.s.min), c.s.max)
	if c.limit != from {
		// Packet-timed rounds: what answers next was sent before the move.
		c.settling, c.since, c.lowered = true, 0, c.limit < from
		// Answers sent after the move arrive within a couple of round
		// trips as they were then, or the move did not help: wait no
		// longer (and never longer than a round may last).
		c.settleMax = min(max(2*c.view.p99, c.s.tick), roundMaxTicks*c.s.tick)
	}
	c.view.decision = dec
	c.view.floor, c.view.high = time.Duration(c.floor), time.Duration(c.high())
	return c.limit
}

// pace is what the actuator gets after step: the limit, but for a rate no
// more than keeps cwndGain × the calls the window holds at capacity in
// flight (capacity × high, scaled to the floor's mean: Little's law; BBR's
// cwnd beside its pacing rate). A resource
// that slows down gets fewer calls at once as soon as its answers come back
// later, a round trip before a round can say so, and a processor-sharing
// server past its knee, which answers less the more it holds, is never
// driven into its trap. The limit itself, the law's, does not move.
func (c *controller) pace(in tick) float64 {
	if !c.s.rate || !uses("cwnd") || c.floor == 0 || c.floorMean == 0 || in.dt <= 0 {
		return c.limit
	}
	x := c.capacity()
	if x == 0 {
		return c.limit
	}
	held := c.high() * c.floorMean / c.floor
	cwnd := math.Max(cwndGain*x*held/float64(time.Second), cwndMin)
	room := math.Max(cwnd-c.inflight+in.completions, 0)
	return math.Max(math.Min(c.limit, room/in.dt.Seconds()), c.s.min)
}

// decide closes the round when it holds enough evidence and applies the law.
func (c *controller) decide(in tick) decision {
	r := &c.round
	if c.backlogged(in) && uses("backlog") {
		// More is in flight than twice what the window holds at capacity:
		// the resource is past its cliff, and may answer nothing at all.
		// Send less than comes back until the backlog drains (BBR's
		// drain), whatever the round says.
		if l := maxCut * in.completions / in.dt.Seconds(); l < c.limit {
			c.limit = l
			c.cold = false
			*r = round{}
			return decBacklog
		}
	}
	if c.settling && !uses("settle") {
		c.settling = false
	}
	if c.settling {
		// An answer of latency d arriving in this tick was sent at least
		// d before the tick began. Until the slowest of them was sent
		// after the limit moved, what arrives says nothing of the move
		// (BBR's packet-timed round trip, read off the durations).
		fresh := in.hist.n > 0 && in.hist.quantile(0.99, 0, 0) <= c.since
		if c.cold && !c.lowered && uses("fast-start") {
			// In slow start one tick is enough when most of its answers
			// were sent after the doubling: the round trip is a small
			// part of the tick (TCP doubles once per round trip).
			fresh = fresh || in.hist.n >= fastStartAnswers && in.hist.quantile(0.99, 0, 0) <= c.since+in.dt/2
		}
		c.since += in.dt
		switch {
		case fresh || in.unreachable > 0 || c.since > c.settleMax:
			c.settling = false
		case c.lowered:
			// After a cut, what arrives was queued before it: a second
			// cut on it would overshoot far below the knee.
			*r = round{}
			return decSettle
		}
		// After a raise, congestion still counts at once (the raise may
		// have caused it), but no further raise until the answers show the
		// last one.
	}
	n := r.hist.n + r.unreachable
	switch {
	case n == 0 && r.ticks >= roundMaxTicks:
		*r = round{}
		return decBlind
	case n == 0:
		return decBlind
	case r.unreachable == 0 && r.ticks < roundMaxTicks &&
		((r.hist.n < roundSamples && (!c.growing() || c.measure.pending)) || r.dt < time.Duration(c.floor) ||
			(c.floor == 0 && r.dt < r.hist.quantile(0.5, 0, 0))):
		// A round is a round trip with enough answers in it to know its
		// median: shorter, it sees only the fastest answers of what it
		// sent; with fewer answers, noise reads as a queue.
		return decGather
	}
	e := c.read()
	*r = round{}
	if e.latency == 0 && !e.unreachable {
		return decBlind // only Unavailable calls, and nothing to put them above
	}
	return c.law(e)
}

// backlogged reports whether a rate limit keeps more calls in flight than
// twice what the window holds at capacity (capacity × high, scaled to the
// mean latency, Little's law): a queue that grows past the resource's cliff.
// Before an epoch has measured the capacity, the rate is what is being sent:
// a slow start that doubled past a cliff sees no answer for seconds, and
// only its calls in flight say so.
func (c *controller) backlogged(in tick) bool {
	if !c.s.rate || c.floor == 0 {
		return false
	}
	rate := c.capacity()
	if rate == 0 && uses("backlog-sent") {
		// Before the first epoch: what is being sent. Calls in flight
		// divided by the rate they were sent at is how long they have
		// been out (Little's law), answered or not: a resource that
		// stopped answering shows here before any answer does.
		rate = in.admitted
	}
	if rate == 0 {
		return false
	}
	held := c.high()
	if uses("backlog-mean") && c.floorMean > 0 {
		held *= c.floorMean / c.floor // Little's law holds for the mean
	}
	return c.inflight > backlogShare*rate*held/float64(time.Second)+probeCalls
}

// probeStep is one probe's step: probeShare of the ceiling, and for a count
// in flight at least one slot, or the semaphore would not move.
func (c *controller) probeStep() float64 {
	if c.s.rate || !uses("slot-step") {
		return probeShare * c.s.max
	}
	return math.Max(probeShare*c.s.max, 1)
}

// growing reports whether the limit is where growth is known to be safe: in
// slow start, or far below the knee.
func (c *controller) growing() bool {
	return c.cold || c.limit < returnShare*c.knee()/2
}

// evidence is one round, read.
type evidence struct {
	latency, p99    float64 // nanoseconds
	mean            float64 // nanoseconds
	unreachable     bool
	saturated       bool
	delivered, sent float64 // per second; sent is 0 for a semaphore
	dt              time.Duration
	ticks           int
	n               uint64 // answers, Unavailable ones included
	over            uint64 // answers past the SLO, Unavailable ones included
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
		saturated:   r.saturated == r.ticks || uses("saturated") && float64(r.saturated) >= saturatedShare*float64(r.ticks),
		p99:         float64(r.hist.quantile(0.99, unreach, above)),
		dt:          r.dt,
		ticks:       r.ticks,
		n:           r.hist.n + r.unreachable,
	}
	if c.s.slo > 0 {
		e.over = r.hist.above(c.s.slo) + r.unreachable
		c.epoch.over += e.over
	}
	if r.hist.n > 0 {
		e.latency, e.mean = float64(r.hist.median()), float64(r.hist.mean())
	}
	if r.dt > 0 {
		e.delivered = r.completions / r.dt.Seconds()
		e.sent = r.admitted / r.dt.Seconds()
	}
	c.view.latency, c.view.p99 = time.Duration(e.latency), time.Duration(e.p99)
	c.epoch.hist.add(&r.hist)
	c.epoch.dt += r.dt
	c.epoch.completions += r.completions
	return e
}

// sloBreach reports whether the round shows more answers past the SLO than a
// p99 SLO allows (or than the resource gives without a queue, if more: no
// limit cures a route dearer than the SLO), beyond what chance explains: a
// one-sided binomial test at sloZ standard deviations, and never on fewer than
// two answers. The p99 of a round of eight answers is its slowest one: one
// slow answer among eight is no evidence that more than 1% of answers are
// slow.
func (c *controller) sloBreach(e evidence) bool {
	if c.s.slo == 0 {
		return false
	}
	if !uses("slo-count") {
		return e.p99 > float64(c.s.slo)
	}
	if e.over < 2 {
		return false
	}
	p := sloShareOver
	if uses("tail") {
		if c.tailN > 0 {
			p = math.Max(p, c.tailOver/c.tailN)
		}
	}
	n := float64(e.n)
	return float64(e.over) > n*p+sloZ*math.Sqrt(n*p*(1-p))
}

// overdriven reports whether a rate limit sent more than came back in the
// round, by a tenth and by at least two calls (at a low rate one call more or
// less is a large share and no evidence): a queue grows, whatever the latency
// did.
func overdriven(e evidence) bool {
	behind := (e.sent - e.delivered) * e.dt.Seconds()
	return e.sent > 0 && behind >= probeCalls && behind >= (1-shiftKept)*e.sent*e.dt.Seconds()
}

// law applies the law to one round of evidence.
func (c *controller) law(e evidence) decision {
	slo := c.sloBreach(e)
	if c.floor == 0 && e.n >= roundSamples {
		c.floor, c.floorMean = e.latency, e.mean // a first guess, until an epoch is complete
		c.guess = true
	}
	if ep := &c.epoch; ep.hist.n >= epochSamples {
		if m := float64(ep.hist.median()); m < c.floor || c.guess && uses("first-epoch") && (c.s.slo == 0 || m <= sloShare*float64(c.s.slo)) {
			// A round of eight is no floor: in a mix of routes its
			// median is whichever route happened to fill it, and the
			// first answers back are the fastest. The first epoch
			// replaces the guess, up or down, unless it is past what
			// the SLO allows the window: then it was gathered past the
			// knee (a cold burst), and the first congestion's floor
			// probe measures it instead.
			c.guess = false
			c.floor, c.floorMean = m, float64(ep.hist.mean()) // lower is trustworthy at once
		}
		if m := float64(ep.hist.median()); m <= queueOnset*c.floor {
			c.tailOver += float64(ep.over)
			c.tailN += float64(ep.hist.n)
			if c.tailN > tailMemory {
				c.tailOver, c.tailN = c.tailOver/2, c.tailN/2
			}
		}
		c.got[c.gotI] = ep.completions / ep.dt.Seconds()
		c.most = math.Max(c.most*mostDecay, c.got[c.gotI])
		c.gotI = (c.gotI + 1) % capacityEpochs
		*ep = epoch{}
	}
	if e.latency > (c.floor+c.high())/2 {
		// Held in the upper half of the window: either a queue the
		// limiter keeps, or a floor that moved. Time to check which.
		c.floorAge += e.dt
	}

	// A floor probe's round: the latency at a quarter of the load is the
	// floor, higher or lower than the one it replaces. The limit goes back
	// where it was, unless the latency there was past the window the new
	// floor draws: then as a cut from there would have gone.
	if c.measure.pending && e.latency > 0 {
		c.measure.pending = false
		c.floor, c.floorMean, c.floorAge = e.latency, e.mean, 0
		c.limit = c.measure.from
		if high := c.high(); c.measure.latency > high {
			c.limit *= math.Max((c.floor+high)/2/c.measure.latency, maxCut)
		}
		if k := c.knee(); k > 0 {
			c.limit = math.Min(c.limit, k) // and never past what the resource carries
		}
		if !e.unreachable && !slo {
			return decFloor
		}
	}
	// The last cut was an experiment: did it lower the latency?
	if c.cut.pending && e.latency > 0 && uses("shift") {
		c.cut.pending = false
		moved := e.latency < shiftKept*c.cut.latency || e.latency > c.cut.latency/shiftKept
		tail := slo && e.p99 < shiftKept*c.cut.p99 // the SLO cut helped the tail
		switch {
		case e.unreachable || overdriven(e) || tail || e.latency <= c.high() && !slo:
			// Refused, still sending more than gets through, or better:
			// the law as usual.
		case moved:
			// Still moving: the answers lag the queue the cut left by its
			// own length. A second cut now would overshoot far below it.
			c.cut.pending, c.cut.latency, c.cut.p99 = true, e.latency, e.p99
			return decDrain
		case !slo || e.latency <= float64(c.s.slo):
			// Settled where it was with less sent than gets through: the
			// rise was not of the limiter's making (a level shift, or a
			// tail the resource has at any load), and most answers are
			// inside the SLO. Sending less buys nothing.
			if uses("shift-probe") {
				// Not re-anchored here: where several limiters share the
				// resource, each one's cut leaves the others' queue, and a
				// floor read off it ratchets up with every cut. A floor
				// probe measures it: limiters that see the same latency
				// probe at about the same time, and drain together. The
				// probe goes to a quarter of the limit the cut left, not
				// of the one before it: that one may have been far past
				// the knee (a cold burst), and a quarter of it too.
				c.measure.pending, c.measure.from, c.measure.latency = true, c.cut.from, e.latency
				c.limit *= floorProbeShare
				c.probe.pending = false
				return decShift
			}
			if e.latency > c.floor {
				c.floor, c.floorMean = e.latency, e.mean
			}
			c.floorAge = 0
			c.limit = c.cut.from
			if k := c.knee(); k > 0 {
				c.limit = math.Min(c.limit, k) // never past what the resource carries
			}
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
	case slo:
		congested = decSLO
	case high > 0 && e.latency > high:
		congested = decQueue
	}
	if congested != 0 {
		c.probe.pending, c.cold = false, false
		if !c.verified {
			// The first congestion: the floor so far was measured at
			// whatever load the limiter started with, which may already
			// have been past the knee. Measure it once the cut settles.
			c.verified, c.floorAge = true, floorMaxAge
		}
		// What got through is what the resource sustains: a rate limit
		// cuts from it, not from a rate the resource never served. The cut
		// brings latency back to the middle of the window within a round
		// trip: in-flight work scales with the limit (Little's law).
		base := c.limit
		if e.sent > 0 && e.delivered > 0 && uses("cut-delivered") {
			base = math.Min(base, e.delivered)
		}
		factor := minCut
		if e.latency > 0 {
			factor = math.Min(factor, mid/e.latency)
		}
		if congested == decSLO {
			factor = math.Min(factor, float64(c.s.slo)/e.p99)
		}
		if congested == decRefused {
			factor = maxCut
		}
		if overdriven(e) {
			// Sending more than gets through: what gets through now is the
			// capacity, whatever the filter remembers from before.
			for i := range c.got {
				c.got[i] = e.delivered
			}
		}
		c.cut.pending = congested != decRefused
		c.cut.latency, c.cut.p99, c.cut.from = e.latency, e.p99, c.limit
		c.limit = base * math.Max(factor, maxCut)
		return congested
	}

	if c.settling {
		return decSettle // the last raise has not reached the answers yet
	}
	// A probe is judged by what got through: one up stays only if it got
	// more through, by at least probePays of its step; one down stays only
	// if it cost less than that. A round in which the step was worth fewer
	// than probeCalls answers cannot judge it: a probe up then stays (the
	// window still guards it), one down goes back, so that noise cannot
	// walk the limit down.
	paying := false
	if c.probe.pending && e.saturated && uses("probe-judge") {
		c.probe.pending = false
		paid := c.probe.at * (1 + probePays*(c.limit/c.probe.from-1))
		judged := math.Abs(c.limit/c.probe.from-1)*e.delivered*e.dt.Seconds() >= probeCalls
		switch {
		case c.probe.down && (!judged || e.delivered < paid):
			c.limit = c.probe.from
			return decFull
		case !c.probe.down && judged && e.delivered < paid:
			c.limit = c.probe.from
			return decKnee
		case !c.probe.down && judged:
			paying = true
		case !c.probe.down && uses("carry"):
			// Too small to judge alone: the next step up adds to it,
			// and the two are judged together from where this began
			// (at tens of calls a second a step of 1% of the ceiling is
			// worth under a call a round, so no probe ever paid, none
			// doubled, and a capacity that came back was climbed at a
			// step a round).
			c.probe.carry = true
		}
	}
	c.probe.pending = false
	if !e.saturated {
		return decIdle
	}
	if !c.cold && c.floorAge >= floorMaxAge && uses("floor-probe") {
		// The floor is in doubt: measure it again at a quarter of the load
		// (BBR's ProbeRTT, Envoy's minRTT recalculation), so a floor that
		// moved, or was first seen past the knee, is replaced rather than
		// trusted.
		c.measure.pending, c.measure.from, c.measure.latency = true, c.limit, e.latency
		c.limit *= floorProbeShare
		return decFloorProbe
	}
	switch {
	case c.cold && (c.floor == 0 || e.latency <= queueOnset*c.floor):
		c.limit *= 2
		return decSlowStart
	case c.limit < returnShare*c.knee() && uses("return"):
		// Per tick of time the round covered: at a low rate a round is
		// long, and the return should not be slower in time for it.
		c.cold = false
		c.limit = math.Min(c.limit*math.Exp2(float64(e.ticks)), returnShare*c.knee())
		return decReturn
	}
	c.cold = false
	// One step toward the window's middle: up while latency is in its
	// lower half, down in its upper half; the judge above keeps only the
	// steps that paid, so the probe climbs what gets through.
	down := e.latency > mid
	if !down && c.limit >= c.s.max {
		return decCeiling
	}
	carried := c.probe.carry && !down
	if !carried {
		c.probe.from, c.probe.at = c.limit, e.delivered
	}
	c.probe.pending, c.probe.down, c.probe.carry = true, down, false
	if down {
		c.limit -= c.probeStep()
		return decTrim
	}
	// A probe up that paid makes the next one twice as big (BIC's max
	// probing): a resource that grew fourfold is found in a few rounds,
	// not a hundred. Anything else starts again from one step, so near the
	// knee the probe stays additive, which is what makes shares converge.
	step := c.probeStep()
	if paying && uses("double") {
		// ...but never more than a quarter of the limit at once (BBR's
		// probing gain of 1.25): a resource that thrashes past its knee
		// must not be hit with twice what it held a round ago.
		step = math.Max(step, math.Min(2*c.lastStep, probeGain*c.limit))
		k := math.Max(c.knee(), c.carries(e.delivered))
		if uses("most") {
			k = math.Max(k, c.carries(c.most))
		}
		if uses("double-knee") && k > 0 && c.limit+step > k {
			// ...and not past the most that got through lately, or
			// that ever did (decaying: after a capacity drop reset the
			// filter, a capacity that comes back is climbed by doubling
			// again): a processor-sharing server shows no latency
			// before its cliff, and thrashes for seconds past it. Beyond
			// that the probe is one step.
			step = math.Max(c.probeStep(), k-c.limit)
		}
	} else if carried {
		step = math.Max(step, c.lastStep) // still unjudged: the same step again
	}
	c.lastStep = step
	c.limit += step
	return decProbe
}
