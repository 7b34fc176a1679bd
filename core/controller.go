//go:build !agilelimiter_model

package agilelimiter

import (
	"math"
	"time"
)

// controller is the brain both limiters share: a pure function of its state and
// one tick's samples. It knows nothing of clocks, goroutines or actuators; the
// limiters feed it a drained histogram every TickInterval and push the limit it
// returns to their bucket or semaphore. That keeps the law testable as a table.
//
// The law is SPEC §3's, with these refinements, each measured in compare/:
//   - a cut is spent at most once per round trip, and not while the queue is
//     visibly draining, unless a rate limit sees it still sends more than gets
//     through, or too much for the queue to drain within half a second (the
//     cut's effect arrives a round trip later; cutting on stale latency drove
//     the rate far below capacity, and a queue left to drain slowly made every
//     call in it miss the SLO);
//   - the fast signal falls at once and congestion needs the tick to agree;
//   - slow start grows by a quarter of its gain once latency rises an eighth
//     of the window (HyStart++'s careful phase) and ends at a quarter, before
//     the queue it builds; a rate limit that ends it while granting a quarter
//     more than comes back has overshot and drains at once (BBR's drain);
//   - no probing past the baseline window under either anchor, and latency
//     still rising past it for two ticks, or in three rises of a tenth each
//     over two ticks, is congestion even under AnchorSLO (a level shift is
//     forgiven, a growing queue is not);
//   - after a cut, recovery returns multiplicatively to 90% of the last limit
//     the resource sustained (for a rate, at most the throughput that got
//     through while more was sent), then probes additively: near that limit
//     only once five answers have come back since the last probe (at 40
//     req/s a tick holds four, too few to see one probe's queue before the
//     next), and never while latency is up a tenth on two ticks ago;
//   - the baseline rises only after a quiet spell without cuts;
//   - a rate limit compares the calls it grants with the calls that come back
//     (scaled by the share the caller reports at all): granting a quarter
//     more than comes back for longer than a round trip, with a queue
//     showing, cuts at once to what drains that queue in drainTicks (BBR's
//     drain), whatever the anchor; a cut sized from the measured queue
//     replaces a DownStep chased tick by tick down a stale latency; probes
//     stop while the last ones are not getting through; and under AnchorSLO
//     a flat latency with everything getting through may return toward the
//     last limit that held even inside the deadband.
type controller struct {
	s     settings
	limit float64

	// fast and baseline are EWMAs of the tick p50, in nanoseconds.
	fast, baseline     float64
	fastSet, baseSet   bool
	alphaFast, alphaSl float64

	// cold is true until the first backoff: while it holds, a healthy tick
	// multiplies by SlowStartGain. It never re-arms (a dependency that was ever
	// congested has shown where its capacity is).
	cold bool

	congestedRun, healthyRun int

	// cooldown counts the ticks left before another backoff may be spent:
	// one round trip after a cut, so the cut is judged by requests sent after
	// it, not by the queue that built before it.
	cooldown int
	// sinceCut counts ticks since the limit last went down; the baseline
	// may rise only once it reaches quiet.
	sinceCut, quiet int
	// known is the limit the resource was last seen to sustain: the limit
	// before the first cut of a congestion episode, or the throughput that got
	// through during it when that is lower (a rate limit knows it). Recovery
	// returns quickly to 90% of it, then probes additively.
	known float64
	// probed is set by a probe and cleared by a cut: the next cut starts a
	// new congestion episode.
	probed bool
	// past holds the p50 of the last trendSpan ticks with samples, newest
	// last, to see a queue draining, growing, or growing slowly; growRun
	// counts the ticks in a row it rose past the baseline window.
	past    [trendSpan]float64
	growRun int
	// blind counts the blind ticks in a row during which demand reached the
	// limit: at a low rate evidence arrives every few ticks, and a backoff then
	// spends one step per tick it covers, so the rate falls as fast in time as
	// it would with dense samples.
	blind int
	// rho is the share of granted calls the caller reports back (a rate
	// limit only), learnt while the limit holds still and no queue builds, so
	// a caller that times only some calls does not look like an overdriven
	// dependency. lastLimit is the limit a tick ago, to see it hold still.
	rho, lastLimit float64
	// overRun counts the ticks in a row a rate limit granted well more calls
	// than came back while a queue showed.
	overRun int
	// behind counts the calls sent beyond what came back over the ticks in
	// a row a rate limit sent a tenth more than got through: two or more,
	// and what got through is what the resource sustains.
	behind float64
	// sentAvg and thruAvg smooth admitted and thru over a few ticks: a probe
	// past what gets through only builds a queue.
	sentAvg, thruAvg float64
	// sinceProbe counts the answers since the last additive probe: near the
	// last limit that held, the next probe waits for probeAnswers of them.
	sinceProbe int

	view view
}

// view is what the controller saw and did at its last tick.
type view struct {
	p50, p99, fast, baseline, high time.Duration
	samples, synthetic             int
	decision                       decision
}

// decision is what one tick did with the limit.
type decision uint8

const (
	decBlind     decision = iota // no samples: nothing changes
	decHold                      // in the deadband, or not yet agreed
	decIdle                      // healthy, but demand did not reach the limit
	decProbe                     // additive probe
	decSlowStart                 // multiplicative, cold start
	decRamp                      // multiplicative, RecoverRamp
	decBackoff                   // proportional backoff
	decSLO                       // p99 above SLOTarget: full DownStep
	decReturn                    // multiplicative return toward the last sustained limit
	decDrain                     // a rate limit sends more than gets through: cut to drain
)

var decisionNames = [...]string{"blind", "hold", "idle", "probe", "slow-start", "ramp", "backoff", "slo-backoff", "return", "drain"}

func (d decision) String() string { return decisionNames[d] }

// growTicks is how many ticks in a row latency must rise past the baseline
// window to read as a growing queue rather than a level shift (a benign rise
// shows as a rise for a tick or two while the histogram turns over).
var growTicks = 2

// trendSpan is how many ticks back a slow ramp is looked for.
const trendSpan = 6

// probeAnswers is how many answers a probe near the last limit that held
// waits for since the last one: below 50 req/s (at the default tick) a tick
// holds too few to show the last probe's queue before the next. Above that it
// never binds, on purpose: a probe whose pace depends on the rate is no
// longer additive, and instances sharing a dependency keep an unfair split
// (waiting for ten answers took TestFairShares from 0.999 to as low as 0.93).
const probeAnswers = 5

// drainTicks is how soon a rate limit wants the queue it built drained.
const drainTicks = 5

// initialLimit is a semaphore's starting limit when InitialLimit is zero.
func initialLimit(ceiling float64) float64 { return math.Floor(ceiling / 8) }

// rateTick is a Limiter's tick when TickInterval is zero: the default.
const rateTick = DefaultTickInterval

func newController(s settings) *controller {
	return &controller{
		s:         s,
		limit:     s.initial,
		cold:      true,
		alphaFast: alpha(s.tick, s.fastHalfLife),
		alphaSl:   alpha(s.tick, s.slowHalfLife),
		quiet:     max(1, int(s.slowHalfLife/s.tick/2)),
		sinceCut:  math.MaxInt32,
		rho:       1,
		lastLimit: s.initial,
	}
}

// excess reports whether sending at sent while thru got through, over the
// given number of ticks, left at least two calls behind: at a low rate one
// call more or less in a tick is a large ratio and no evidence.
func (c *controller) excess(sent, thru float64, ticks int) bool {
	return (sent-thru)*c.s.tick.Seconds()*float64(ticks) >= 2
}

// alpha is the EWMA weight of one tick for the given half-life.
func alpha(tick, halfLife time.Duration) float64 {
	return 1 - math.Exp2(-float64(tick)/float64(halfLife))
}

// fill copies the controller's view into st.
func (c *controller) fill(st *Stats) {
	v := c.view
	st.Baseline, st.Fast, st.High = v.baseline, v.fast, v.high
	st.P50, st.P99 = v.p50, v.p99
	st.Samples, st.Unreachable = v.samples, v.synthetic
	st.Decision = v.decision.String()
}

// reserve is the round trip a call needs: the last tick's p99, or the fast
// signal if higher.
func (c *controller) reserve() time.Duration { return max(c.view.fast, c.view.p99) }

// high returns the top of the tolerated window, in nanoseconds, or 0 when
// there is nothing to build it on yet.
func (c *controller) high() float64 {
	slo := float64(c.s.slo)
	if c.s.anchor == AnchorSLO {
		return 0.8 * slo
	}
	if !c.baseSet {
		return 0.8 * slo // 0 without an SLO
	}
	h := c.baseline * (1 + c.s.inflation)
	if slo > 0 {
		h = math.Min(h, 0.8*slo)
	}
	return h
}

// pace is what the actuator gets after step: the limit.
func (c *controller) pace(tick) float64 { return c.limit }

// step runs one tick and returns the new limit: what the tick says
// (observe), what that means (judge), and what to do about it (act).
func (c *controller) step(in tick) float64 {
	e, ok := c.observe(in)
	if !ok {
		return c.limit
	}
	v := c.judge(in, e)
	dec := c.act(in, e, v)
	c.limit = math.Min(math.Max(c.limit, c.s.min), c.s.max)

	c.view = view{
		p50: time.Duration(e.p50), p99: e.p99,
		fast: time.Duration(c.fast), baseline: time.Duration(c.baseline), high: time.Duration(e.high),
		samples: int(e.n), synthetic: int(e.unreachable), decision: dec,
	}
	return c.limit
}

// evidence is what one tick says before any decision: its latencies, what a
// rate limit got through and has queued, and which way the latency moves.
// Latencies are in nanoseconds, rates in calls per second.
type evidence struct {
	p50, rtt, prevP50 float64 // rtt: the median of the real samples alone (0 if none)
	p99               time.Duration
	high, low         float64 // the tolerated window
	n, unreachable    uint64  // samples, and the synthetic ones among them
	steps             int     // the ticks this one covers: itself and the saturated blind ones before it
	steady            bool    // the limit held within 5% through the last tick
	queueing          bool    // latency past the baseline window
	exited            bool    // this tick ended slow start
	thru, sent, queue float64 // through and granted per second, requests queued (rate limit; 0 unknown)
	trend, rising     bool    // a slow ramp; up a tenth on two ticks ago
}

// observe reads one tick: it updates the signals (the fast EWMA, the
// baseline, the rate averages and run counters) and returns the evidence, or
// false for a blind tick, which changes nothing else.
func (c *controller) observe(in tick) (evidence, bool) {
	// An Unavailable call is a sample above the window and above the SLO, so
	// both the proportional backoff and the p99 guard fire. With no SLO and no
	// baseline there is no "above" to put it: it is dropped.
	synthetic := 2 * math.Max(c.high(), float64(c.s.slo))
	unreachable := in.unreachable
	if synthetic == 0 {
		unreachable = 0
	}
	real := in.hist.n
	n := real + unreachable
	c.view = view{fast: time.Duration(c.fast), baseline: time.Duration(c.baseline), samples: int(n), synthetic: int(unreachable)}
	if c.cooldown > 0 {
		c.cooldown--
	}
	if c.sinceCut < math.MaxInt32 {
		c.sinceCut++
	}
	steady := math.Abs(c.limit-c.lastLimit) <= 0.05*c.limit
	c.lastLimit = c.limit
	if n == 0 {
		if in.saturated {
			c.blind++
		}
		c.view.decision = decBlind
		c.view.high = time.Duration(c.high())
		return evidence{}, false
	}
	steps := 1 + c.blind
	c.sinceProbe += int(real)
	c.blind = 0
	above := time.Duration(synthetic)
	p50 := float64(in.hist.quantile(0.5, unreachable, above))
	p99 := in.hist.quantile(0.99, unreachable, above)

	// The fast signal rises with its half-life, so one slow tick does not
	// cost a step, but falls at once: a tick that is already back under the
	// window is trustworthy, and waiting for the average to decay would hold
	// the rate down for ticks after a queue has drained.
	if !c.fastSet || p50 < c.fast {
		c.fast, c.fastSet = p50, true
	} else {
		c.fast += c.alphaFast * (p50 - c.fast)
	}
	// The baseline follows real samples only: an outage must not drag it up.
	var rtt float64
	if real > 0 {
		b := float64(in.hist.quantile(0.5, 0, 0))
		rtt = b
		switch {
		case !c.baseSet:
			c.baseline, c.baseSet = b, true
		case b < c.baseline:
			// A lower latency is always trustworthy: fall at the fast rate.
			c.baseline += c.alphaFast * (b - c.baseline)
		case c.sinceCut >= c.quiet:
			// Rise slowly and at most MaxBaselineRise a tick. And not at all
			// within half a SlowHalfLife of a cut: near a knee the controller
			// holds latency inside the window, above the true floor, and a
			// baseline that crept toward it would drag the window up without
			// end (baseline pollution). A latency that stays up through a quiet
			// spell with no cut (or with the limit at its floor, where cuts
			// change nothing) is the dependency's new normal: learn it.
			// A tick that follows blind ones covers them all: rise per tick
			// of time, not per tick that happened to carry samples.
			k := float64(steps)
			a := 1 - math.Pow(1-c.alphaSl, k)
			c.baseline += math.Min(a*(b-c.baseline), c.s.maxBaselineRise*k*c.baseline)
		}
	}

	high := c.high()
	low := high * (1 - c.s.deadband)
	// Queueing has begun when the signal passes the baseline-anchored window,
	// whatever the anchor: under AnchorSLO that is no reason to cut (the rise
	// may be benign), but it is no reason to probe further either.
	queueing := c.baseSet && math.Max(c.fast, p50) > c.baseline*(1+c.s.inflation)
	// Slow start ends at the first sign of a queue (a quarter of the way to
	// the window, as TCP's HyStart ends on a delay increase), not at the first
	// cut: doubling past capacity builds a queue that takes seconds to drain.
	exited := false
	if c.cold && c.baseSet && p50 > c.baseline*(1+c.s.inflation/4) {
		c.cold, exited = false, true
	}
	prevP50 := c.past[trendSpan-1]
	// A level shift is what AnchorSLO forgives; a queue that keeps growing is
	// not. Past the baseline window with latency still rising, the resource is
	// getting more than it can serve, whatever the anchor.
	if queueing && prevP50 > 0 && p50 > 1.05*prevP50 {
		c.growRun++
	} else {
		c.growRun = 0
	}

	thru, sent, queue := c.rates(in, p50, steady, queueing)
	// A rate limit a little past capacity builds its queue slowly: latency
	// climbs a few percent a tick, too little and too noisy for growRun, and
	// under AnchorSLO nothing else moves until the p99 guard fires. Three
	// rises of a tenth in a row, each over two ticks, are a ramp; a level
	// shift, even one split across a tick boundary, makes at most two.
	trend := sent > 0 && thru > 0 && queueing && c.past[0] > 0
	for i := 0; trend && i < trendSpan; i += 2 {
		next := p50
		if i+2 < trendSpan {
			next = c.past[i+2]
		}
		trend = next > 1.1*c.past[i]
	}
	// Latency up a tenth on two ticks ago: the last probe is queueing.
	rising := c.past[trendSpan-2] > 0 && p50 > 1.1*c.past[trendSpan-2]
	copy(c.past[:], c.past[1:])
	c.past[trendSpan-1] = p50
	return evidence{
		p50: p50, rtt: rtt, prevP50: prevP50, p99: p99, high: high, low: low,
		n: n, unreachable: unreachable, steps: steps,
		steady: steady, queueing: queueing, exited: exited,
		thru: thru, sent: sent, queue: queue, trend: trend, rising: rising,
	}, true
}

// rates is a rate limit's accounting for one tick: the calls that got
// through per second (scaled up by the share the caller reports), the slots
// granted per second, and the requests queued at the resource; all 0 where
// unknown. It also keeps the smoothed rates and the runs of sending more than
// gets through.
func (c *controller) rates(in tick, p50 float64, steady, queueing bool) (thru, sent, queue float64) {
	// A rate limit knows what it sends and what comes back. thru is the
	// calls that got through per second, scaled up by the share the caller
	// reports; queue is the requests waiting at the resource now: the queue
	// the newest answers waited in ((p50 − baseline) × thru), plus what
	// arrived beyond thru since they were sent.
	sent = in.admitted
	if in.delivered > 0 {
		thru = in.delivered
		if sent > 0 {
			if steady && !queueing {
				c.rho += 0.02 * (math.Min(1, in.delivered/sent) - c.rho)
			}
			thru /= math.Max(c.rho, 0.1)
			if c.sentAvg == 0 {
				c.sentAvg, c.thruAvg = sent, thru
			}
			c.sentAvg += 0.25 * (sent - c.sentAvg)
			c.thruAvg += 0.25 * (thru - c.thruAvg)
		}
		if c.baseSet {
			queue = (math.Max(0, p50-c.baseline)*thru + math.Max(0, sent-thru)*p50) / float64(time.Second)
		}
	}
	// behind counts the calls sent beyond what came back while sending a
	// tenth more than gets through: a latency step delays one tick's answers
	// by a call or so, an overdriven resource falls further behind each tick.
	if in.saturated && thru > 0 && sent > 1.1*thru {
		c.behind += (sent - thru) * c.s.tick.Seconds()
	} else {
		c.behind = 0
	}
	// Sending a quarter more than gets through for longer than a round trip
	// (and at least two ticks), with a queue showing, is overdriving the
	// resource whatever the anchor: a benign level shift, or the pipeline
	// filling after a rise, delays the answers by one round trip, not more.
	if in.saturated && queueing && thru > 0 && sent > 1.25*thru && c.excess(sent, thru, 1) {
		c.overRun++
	} else {
		c.overRun = 0
	}
	return thru, sent, queue
}

// verdict is what the evidence means: congestion (and how deep a cut it
// asks for), health, or neither, and whether a cut would only overshoot a
// queue that is already draining.
type verdict struct {
	dec                   decision // the decision, if the limit moves
	congested, healthy    bool
	clear                 bool    // healthy by the latency window itself, not only flat
	factor                float64 // the multiplicative cut asked for
	drainTo               float64 // the rate that drains the measured queue in drainTicks
	slowDrain, overdriven bool    // a rate limit sends too much to drain, or more than gets through
	draining              bool    // the queue drains fast enough: wait
}

// judge turns one tick's evidence into a verdict and counts how many ticks
// in a row agree.
func (c *controller) judge(in tick, e evidence) verdict {
	p50, p99, high, low, prevP50 := e.p50, e.p99, e.high, e.low, e.prevP50
	thru, sent, queue := e.thru, e.sent, e.queue
	queueing, exited, steady, trend := e.queueing, e.exited, e.steady, e.trend
	growing := c.growRun >= growTicks || trend
	// A rate limit also knows a flat latency with everything getting through
	// from a queue of its own making: under AnchorSLO that may return toward
	// the last limit that held, even inside the deadband (but not probe past
	// it). Otherwise a benign rise that settles inside the deadband would
	// hold any cut made during it for good.
	flat := c.s.anchor == AnchorSLO && sent > 0 && thru > 0 && c.growRun == 0 && c.sentAvg <= 1.02*c.thruAvg
	factor := 1.0
	dec := decHold
	// Congestion needs the smoothed signal and the tick itself to agree: the
	// EWMA alone would go on cutting for ticks after the queue has drained.
	congested := high > 0 && c.fast >= high && p50 >= high
	if congested {
		factor = math.Max(1-c.s.gain*(c.fast-high)/high, 1-c.s.downStep)
		dec = decBackoff
	} else if growing {
		hb := c.baseline * (1 + c.s.inflation)
		congested, dec = true, decBackoff
		factor = math.Max(1-c.s.gain*(math.Max(c.fast, p50)-hb)/hb, 1-c.s.downStep)
	}
	// Slow start that ends while granting well more than gets through has
	// overshot: the queue it built is already in flight. Drain it now (as
	// BBR leaves its startup), rather than wait a round trip of a queue that
	// grows by the overshoot every tick.
	exitDrain := exited && !steady && in.saturated && thru > 0 && sent > 1.25*thru && c.excess(sent, thru, 1)
	if !congested && (exitDrain || c.overRun >= max(2, 1+int(math.Ceil(float64(p99)/float64(c.s.tick))))) {
		congested, dec = true, decDrain
	}
	if c.s.slo > 0 && p99 > c.s.slo {
		congested, factor, dec = true, 1-c.s.downStep, decSLO
	}
	clear := c.fast <= low && !queueing
	healthy := !congested && (clear || flat)
	// A queue that is already draining after a cut needs time, not another
	// cut: cutting again on its stale latency overshoots far below capacity.
	// A rate limit knows whether its queue grows: it sends more than gets
	// through. It also knows how long the queue will take to drain: the
	// queued requests are about (p50 − baseline) × throughput, and they drain
	// at throughput − rate. Sending too much to drain within drainTicks is
	// overdriving too. Then the next cut need not wait a round trip (which
	// the queue itself has made long) to be judged.
	// ...but never aim below a quarter of the throughput: the rate is also
	// how the controller measures, and one that collapses to the floor is
	// blind for seconds afterwards.
	drainTo := math.Max(thru-queue/(drainTicks*c.s.tick.Seconds()), thru/4)
	slowDrain := thru > 0 && c.baseSet && congested && c.limit > drainTo
	overdriven := thru > 0 && (c.limit > 1.05*thru || slowDrain)
	// A queue that drains fast enough needs time, not another cut.
	draining := congested && !c.probed && c.known > 0 && !slowDrain &&
		(p50 < 0.95*prevP50 || (thru > 0 && c.limit < 0.95*thru))

	switch {
	case congested:
		c.congestedRun++
		c.healthyRun = 0
	case healthy:
		c.healthyRun++
		c.congestedRun = 0
	default:
		c.congestedRun, c.healthyRun = 0, 0
	}
	return verdict{
		dec: dec, congested: congested, healthy: healthy, clear: clear, factor: factor,
		drainTo: drainTo, slowDrain: slowDrain, overdriven: overdriven, draining: draining,
	}
}

// act moves the limit on a verdict: a cut once enough congested ticks agree
// (sized from the measured queue where a rate limit knows it), or, once
// enough healthy ticks agree and demand reached the limit, slow start, a
// return toward the last limit that held, or an additive probe. It returns
// what it did.
func (c *controller) act(in tick, e evidence, v verdict) decision {
	dec, congested, healthy, clear := v.dec, v.congested, v.healthy, v.clear
	factor, drainTo, slowDrain, overdriven, draining := v.factor, v.drainTo, v.slowDrain, v.overdriven, v.draining
	p50, high, rtt, steps, unreachable := e.p50, e.high, e.rtt, e.steps, e.unreachable
	thru, sent, rising := e.thru, e.sent, e.rising
	switch {
	case congested && (c.congestedRun >= c.s.backoffTicks || dec == decDrain) && (c.cooldown == 0 || overdriven) && !draining:
		first := c.probed || c.known == 0
		if first {
			c.known = c.limit
			c.probed = false
		}
		if thru > 0 && unreachable == 0 {
			// What got through while more was sent is what the resource
			// sustains; what got through while a latency step delayed the
			// answers is not. (Refused calls are not throughput, but no
			// sign of capacity either.)
			switch {
			case first && (c.behind >= 2 || sent == 0):
				// The episode's first cut, with calls falling behind (or
				// nothing known of what was sent: what came back is then
				// the only measure there is).
				c.known = math.Min(c.known, thru)
			case c.sentAvg > 1.05*c.thruAvg && c.excess(c.sentAvg, c.thruAvg, 4):
				// Any later cut, on the smoothed rates: a capacity that
				// falls over time lowers the limit recovery returns to.
				c.known = math.Min(c.known, math.Max(c.thruAvg, thru))
			}
		}
		cut := c.limit * math.Pow(factor, float64(steps))
		if slowDrain {
			// The measured drain rate, not a stale latency chased tick by
			// tick, says how far down to go; the SLO guard still costs at
			// least a full DownStep.
			if dec == decSLO {
				cut = math.Min(cut, drainTo)
			} else {
				cut = drainTo
			}
		}
		if cut = math.Max(cut, c.s.min); cut < c.limit {
			c.limit, c.sinceCut = cut, 0
		}
		c.cold = false
		c.cooldown = int(math.Ceil(rtt / float64(c.s.tick)))
	case congested:
		dec = decHold
	case healthy && c.healthyRun >= c.s.recoverTicks:
		// A limit that was not used up says nothing about the region above it:
		// raising it would let an idle service drift to the ceiling.
		if !in.saturated {
			dec = decIdle
			break
		}
		additive := c.limit + c.s.upStep*c.s.max
		c.probed = true
		switch {
		case !clear && additive >= 0.9*c.known:
			// Healthy only because the latency is flat (AnchorSLO): the
			// return is allowed, a probe past the window is not.
			c.probed, dec = false, decHold
		case c.cold:
			gain := c.s.slowStartGain
			if p50 > c.baseline*(1+c.s.inflation/8) {
				gain = math.Pow(gain, 0.25)
			}
			c.limit, dec = math.Max(c.limit*gain, additive), decSlowStart
		case c.s.recoverRamp > 0 && c.fast <= c.s.recoverRamp*high:
			c.limit, dec = math.Max(c.limit*c.s.slowStartGain, additive), decRamp
		case additive < 0.9*c.known:
			// Far below what the resource was last seen to sustain: return
			// there quickly, multiplicatively, and probe additively only
			// near it, where the next congestion is likely (as CUBIC and BIC
			// do). The gap between instances still shrinks at every cut.
			// At a low rate evidence comes every few ticks: grow per tick of
			// time it covers, up to the cap, as a cut does.
			grown := c.limit * math.Pow(c.s.slowStartGain, float64(steps))
			c.limit, dec = math.Min(math.Max(grown, additive), 0.9*c.known), decReturn
		case rising:
			// Latency up a tenth on two ticks ago: the last probe is
			// already queueing.
			dec = decHold
		case c.sinceProbe < probeAnswers && c.limit < 1.1*c.known:
			// Near the last limit that held, the next congestion is
			// likely: at a low rate each probe waits for enough answers
			// to show its queue before the next (at 40 req/s a tick
			// holds four).
			dec = decHold
		case c.thruAvg > 0 && c.sentAvg > 1.03*c.thruAvg && c.excess(c.sentAvg, c.thruAvg, 4):
			// The last probes are not getting through: the resource is at
			// its capacity, and more would only queue.
			dec = decHold
		default:
			c.limit, dec = additive, decProbe
			c.sinceProbe = 0
		}
	}
	return dec
}
