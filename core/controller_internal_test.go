//go:build !agilelimiter_model

package agilelimiter

import (
	"math"
	"testing"
	"time"
)

// The controller is a pure step: these tables state the clock instead of
// running one.

func TestStepTable(t *testing.T) {
	ms := time.Millisecond
	type step struct {
		hist      *snapshot
		unreach   uint64
		saturated bool
		want      float64 // the limit after the step
		dec       decision
		delivered float64 // completions per second (rate limits); 0 unknown
		admitted  float64 // grants per second (rate limits); 0 unknown
	}
	for _, tc := range []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"slow start doubles while saturated", Config{MaxRate: 1000, InitialRate: 10}, []step{
			{samples(10, 20*ms), 0, true, 20, decSlowStart, 0, 0},
			{samples(10, 20*ms), 0, true, 40, decSlowStart, 0, 0},
			{samples(10, 20*ms), 0, false, 40, decIdle, 0, 0},
			{samples(10, 20*ms), 0, true, 80, decSlowStart, 0, 0},
		}},
		{"blind tick changes nothing", Config{MaxRate: 1000, InitialRate: 10}, []step{
			{samples(0, 0), 0, true, 10, decBlind, 0, 0},
			{samples(10, 20*ms), 0, true, 20, decSlowStart, 0, 0},
		}},
		{"congestion cuts proportionally, ends slow start, then probes additively", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 0, 0}, // baseline 20ms, high 40ms
			// fast jumps no faster than its EWMA: one tick at 100ms moves it part way
			{samples(10, 150*ms), 0, true, proportional(200, 20*ms, 150*ms), decBackoff, 0, 0},
			{samples(10, 150*ms), 0, true, proportional(200, 20*ms, 150*ms), decHold, 0, 0}, // one cut per 150ms round trip
			// back under the window: return at once to 90% of the 200 that held
			{samples(10, 20*ms), 0, true, 180, decReturn, 0, 0},
			{samples(10, 20*ms), 0, true, 190, decProbe, 0, 0}, // then additive: +1% of the ceiling
		}},
		{"p99 above the SLO costs a full DownStep", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 50 * ms}, []step{
			{samples(10, 10*ms), 0, true, 200, decSlowStart, 0, 0},
			{mix(99, 10*ms, 2, 90*ms), 0, true, 140, decSLO, 0, 0},
		}},
		{"Unavailable with nothing to anchor to is a no-op", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(0, 0), 50, true, 100, decBlind, 0, 0},
		}},
		{"Unavailable with an SLO backs off", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 50 * ms}, []step{
			{samples(0, 0), 50, true, 70, decSLO, 0, 0},
		}},
		{"sparse evidence spends the blind ticks it covers", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 50 * ms}, []step{
			{samples(0, 0), 0, true, 100, decBlind, 0, 0},
			{samples(0, 0), 0, true, 100, decBlind, 0, 0},
			{samples(0, 0), 1, true, 100 * 0.7 * 0.7 * 0.7, decSLO, 0, 0},
		}},
		{"the floor and the ceiling hold", Config{MinRate: 5, MaxRate: 30, InitialRate: 20, SLOTarget: 50 * ms}, []step{
			{samples(10, 10*ms), 0, true, 30, decSlowStart, 0, 0},
			{samples(0, 0), 100, true, 21, decSLO, 0, 0},
			{samples(0, 0), 100, true, 14.7, decSLO, 0, 0},
			{samples(0, 0), 100, true, 10.29, decSLO, 0, 0},
			{samples(0, 0), 100, true, 7.203, decSLO, 0, 0},
			{samples(0, 0), 100, true, 5.0421, decSLO, 0, 0},
			{samples(0, 0), 100, true, 5, decSLO, 0, 0},
		}},
		{"slow start ends at a 25% latency rise, before any cut", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 0, 0},
			{samples(10, 30*ms), 0, true, 210, decProbe, 0, 0}, // additive, not doubled
		}},
		{"AnchorSLO forgives a level shift but not a growing queue", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 500 * ms, Anchor: AnchorSLO}, []step{
			{samples(10, 20*ms), 0, true, 100, decHold, 0, 0},
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 0, 0},
			{samples(10, 50*ms), 0, true, 200, decHold, 0, 0}, // past 2× baseline: no probe
			{samples(10, 50*ms), 0, true, 200, decHold, 0, 0}, // flat: a level shift, no cut
			{samples(10, 50*ms), 0, true, 200, decHold, 0, 0},
			{samples(10, 60*ms), 0, true, 200, decHold, 0, 0},    // rising once
			{samples(10, 70*ms), 0, true, 200, decHold, 0, 0},    // twice: growing, first congested tick
			{samples(10, 80*ms), 0, true, 140, decBackoff, 0, 0}, // agreed (2 ticks under AnchorSLO): cut
		}},
		{"a rate limit cuts straight to what drains its queue, then waits, then returns", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			// 200 sent, 100 back, 300 ms: ~57 queued, more than 100/s drains in
			// 5 ticks; the target is the floor, a quarter of the throughput
			{samples(10, 300*ms), 0, true, 25, decBackoff, 100, 200},
			{samples(10, 300*ms), 0, true, 25, decHold, 100, 25}, // drains fast enough: wait
			{samples(10, 20*ms), 0, true, 50, decReturn, 25, 25}, // back toward 90% of the 100 that got through
			{samples(10, 20*ms), 0, true, 90, decReturn, 50, 50},
			{samples(10, 20*ms), 0, true, 100, decProbe, 90, 90}, // then additive
		}},
		{"slow start grows by a quarter of its gain once latency rises an eighth", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 0, 0},
			{samples(10, 24*ms), 0, true, 200 * math.Pow(2, 0.25), decSlowStart, 0, 0}, // as HyStart++'s careful phase
		}},
		{"near the last limit that held, a probe waits for five answers", Config{MaxRate: 100, InitialRate: 40}, []step{
			{samples(4, 20*ms), 0, true, 80, decSlowStart, 40, 40},
			{samples(4, 300*ms), 0, true, 10, decBackoff, 40, 80}, // 40 got through: known
			{samples(4, 300*ms), 0, true, 10, decHold, 40, 10},
			{samples(4, 20*ms), 0, true, 20, decReturn, 20, 20},
			{samples(4, 20*ms), 0, true, 36, decReturn, 36, 36},
			{samples(4, 20*ms), 0, true, 37, decProbe, 36, 36},
			{samples(4, 20*ms), 0, true, 37, decHold, 36, 36},  // 4 answers since
			{samples(4, 20*ms), 0, true, 38, decProbe, 37, 37}, // 8
			{samples(4, 20*ms), 0, true, 38, decHold, 38, 38},  // 4 again
		}},
		{"a slow start that overshoots drains at once", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			// the doubling shows: 60 ms, and far more sent than comes back
			{samples(10, 60*ms), 0, true, drainTarget(100, 20*ms, 60*ms, 200), decDrain, 100, 200},
		}},
		{"...but a slow start held at the ceiling only ends", Config{MaxRate: 100, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 100, decSlowStart, 100, 100},
			{samples(10, 20*ms), 0, true, 100, decSlowStart, 100, 100},
			{samples(10, 60*ms), 0, true, 100, decHold, 50, 100}, // a level shift delays the answers
		}},
		{"sending a quarter more than comes back drains under AnchorSLO too", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: time.Second, Anchor: AnchorSLO}, []step{
			{samples(10, 20*ms), 0, true, 100, decHold, 100, 100},
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			{samples(10, 30*ms), 0, true, 200, decHold, 200, 200}, // slow start ends on the rise, nothing overshot
			{samples(10, 60*ms), 0, true, 200, decHold, 100, 200}, // once could be a level shift
			// twice is a queue: ~10 queued drains in 5 ticks at 100 − 10/0.5
			{samples(10, 60*ms), 0, true, drainTarget(100, 20*ms, 60*ms, 200), decDrain, 100, 200},
		}},
		{"a probe past what gets through holds", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			{samples(10, 30*ms), 0, true, 210, decProbe, 200, 200}, // slow start ends on the rise
			{samples(10, 30*ms), 0, true, 210, decHold, 200, 210},  // up a tenth on two ticks ago
			{samples(10, 30*ms), 0, true, 220, decProbe, 200, 210},
			{samples(10, 30*ms), 0, true, 220, decHold, 200, 220}, // the probes are not getting through
		}},
		{"a probe that gets through goes on", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			{samples(10, 30*ms), 0, true, 210, decProbe, 200, 200},
		}},
		{"AnchorSLO returns through the deadband while everything gets through", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 100 * ms, Anchor: AnchorSLO}, []step{
			{samples(10, 20*ms), 0, true, 100, decHold, 100, 100},
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			{samples(10, 150*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 150*ms), 0, true, 140, decSLO, 200, 200},
			{samples(10, 70*ms), 0, true, 140, decHold, 140, 140},   // in the deadband, but flat:
			{samples(10, 70*ms), 0, true, 180, decReturn, 140, 140}, // return once agreed
			{samples(10, 70*ms), 0, true, 180, decHold, 180, 180},   // no probe past the window
		}},
		{"...but not while calls pile up", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 100 * ms, Anchor: AnchorSLO}, []step{
			{samples(10, 20*ms), 0, true, 100, decHold, 100, 100},
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 100, 100},
			{samples(10, 150*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 150*ms), 0, true, 140, decSLO, 200, 200},
			{samples(10, 70*ms), 0, true, 140, decHold, 112, 140},
			{samples(10, 70*ms), 0, true, 140, decHold, 112, 140},
			{samples(10, 70*ms), 0, true, 140, decHold, 112, 140},
		}},
		{"a queue that grows a little each tick is congestion under AnchorSLO", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: time.Second, Anchor: AnchorSLO, BackoffTicks: 1}, []step{
			{samples(10, 20*ms), 0, true, 100, decHold, 200, 200},
			{samples(10, 20*ms), 0, true, 200, decSlowStart, 200, 200},
			{samples(10, 30*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 43*ms), 0, true, 200, decHold, 200, 200}, // a level shift: no cut
			{samples(10, 43*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 43*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 43*ms), 0, true, 200, decHold, 200, 200},
			// a ramp too slow and noisy for two rises in a row...
			{samples(10, 47*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 49*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 53*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 53*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 60*ms), 0, true, 200, decHold, 200, 200},
			{samples(10, 60*ms), 0, true, 200, decHold, 200, 200},
			// ...but three rises of a tenth over two ticks each: a queue
			{samples(10, 66*ms), 0, true, 182.6, decBackoff, 200, 200},
		}},
		{"AnchorSLO agrees over two ticks", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 100 * ms, Anchor: AnchorSLO}, []step{
			{samples(10, 10*ms), 0, true, 100, decHold, 0, 0},
			{samples(10, 10*ms), 0, true, 200, decSlowStart, 0, 0},
			{samples(10, 150*ms), 0, true, 200, decHold, 0, 0}, // p99 over the SLO, not yet agreed
			{samples(10, 150*ms), 0, true, 140, decSLO, 0, 0},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newController(settingsFor(t, tc.cfg))
			for i, st := range tc.steps {
				got := c.step(tick{hist: st.hist, unreachable: st.unreach, saturated: st.saturated, delivered: st.delivered, admitted: st.admitted})
				if math.Abs(got-st.want) > 0.01*st.want || c.view.decision != st.dec {
					t.Fatalf("step %d: limit %.3f (%v); want %.3f (%v); view %+v", i, got, c.view.decision, st.want, st.dec, c.view)
				}
			}
		})
	}
}

// drainTarget is the limit a rate limit cuts to when it sends admitted per
// second, thru come back, and the tick's p50 is p over a baseline b: what
// drains the queue in drainTicks, at least a quarter of thru.
func drainTarget(thru float64, b, p time.Duration, admitted float64) float64 {
	bv, pv := histValue(histIndex(b)).Seconds(), histValue(histIndex(p)).Seconds()
	queue := (pv-bv)*thru + (admitted-thru)*pv
	return math.Max(thru-queue/(drainTicks*DefaultTickInterval.Seconds()), thru/4)
}

// proportional is the limit after one congested tick at p from a baseline
// b under the default knobs, computed from the law itself: the fast EWMA
// moves a third of the way (half-life two ticks), high is twice the baseline,
// and the cut is Gain times the excess, at most DownStep.
func proportional(limit float64, b, p time.Duration) float64 {
	bv, pv := float64(histValue(histIndex(b))), float64(histValue(histIndex(p)))
	fast := bv + (1-math.Exp2(-0.5))*(pv-bv)
	high := 2 * bv
	return limit * math.Max(1-0.5*(fast-high)/high, 0.7)
}

// The probe converges: two controllers with the same config, one at 20 and
// one at 200, see the same congestion and the same healthy ticks; the gap
// between them shrinks at every cut (by DownStep, and by the 90% of the quick
// return to the last sustained limit). A multiplicative probe would keep their
// 10:1 ratio for ever.
func TestAdditiveProbeConverges(t *testing.T) {
	cfg := Config{MaxRate: 1000, InitialRate: 20, SLOTarget: 50 * time.Millisecond}
	a, b := newController(settingsFor(t, cfg)), newController(settingsFor(t, cfg))
	b.limit = 200
	a.cold, b.cold = false, false
	healthy, congested := samples(10, 10*time.Millisecond), samples(10, 100*time.Millisecond)
	gap0 := b.limit - a.limit
	for range 60 {
		for range 5 {
			a.step(tick{hist: healthy, saturated: true})
			b.step(tick{hist: healthy, saturated: true})
		}
		a.step(tick{hist: congested, saturated: true}) // p99 over the SLO: both cut by DownStep
		b.step(tick{hist: congested, saturated: true})
		a.step(tick{hist: healthy, saturated: false})
		b.step(tick{hist: healthy, saturated: false})
	}
	gap := b.limit - a.limit
	t.Logf("gap %.1f → %.3f after 60 cycles (limits %.1f, %.1f)", gap0, gap, a.limit, b.limit)
	if gap > 0.01*gap0 {
		t.Errorf("gap %.1f from %.1f; want it to shrink toward 0", gap, gap0)
	}
	if a.limit >= 1000 || a.limit < 50 {
		t.Errorf("limits %.1f: the cycle never exercised the law between floor and ceiling", a.limit)
	}
}
