//go:build agilelimiter_model

package agilelimiter

import (
	"math"
	"testing"
	"time"
)

// The model law as a table: each row is one tick's evidence and what the law
// must do with it. Latencies are read at histogram resolution, so expected
// limits that depend on a latency ratio are computed from the buckets.

// at is the latency the histogram reads for d.
func at(d time.Duration) float64 { return float64(histValue(histIndex(d))) }

func TestModelStepTable(t *testing.T) {
	ms := time.Millisecond
	type step struct {
		hist      *snapshot
		unreach   uint64
		saturated bool
		done      float64 // calls that came back during the tick
		sent      float64 // slots granted per second (a rate limit)
		want      float64 // the limit after the tick
		dec       decision
	}
	// mid/latency for a floor of 20 ms (AnchorBaseline: high 40, mid 30).
	towardMid := func(latency time.Duration) float64 { return (at(20*ms) + 2*at(20*ms)) / 2 / at(latency) }
	queueCut := 150 * towardMid(60*ms)
	// late is a tick in which one answer was sent before the last move.
	late := mix(9, 20*ms, 1, 60*ms)
	for _, tc := range []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"slow start doubles once the last doubling reaches the answers", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 10, 100, 200, decSlowStart},
			{late, 0, true, 10, 100, 200, decSettle}, // a 60 ms answer was sent before the doubling
			{samples(10, 20*ms), 0, true, 20, 200, 400, decSlowStart},
			// Answers of 20 ms against a tick of 100: most of the tick's
			// were sent after the doubling, and it judges it.
			{samples(10, 20*ms), 0, true, 40, 400, 800, decSlowStart},
		}},
		{"a limit demand did not reach learns nothing", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, false, 10, 100, 100, decIdle},
		}},
		{"a blind tick changes nothing", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(0, 0), 0, true, 0, 100, 100, decBlind},
		}},
		{"Unavailable with nothing to put it above is a no-op", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(0, 0), 50, true, 50, 100, 100, decBlind},
		}},
		{"refusals halve the limit, down to the floor", Config{MinRate: 5, MaxRate: 30, InitialRate: 20, SLOTarget: 50 * ms}, []step{
			{samples(10, 10*ms), 0, true, 2, 20, 30, decSlowStart}, // the ceiling holds
			{samples(0, 0), 3, true, 3, 30, 15, decRefused},
			{samples(0, 0), 3, true, 3, 15, 7.5, decRefused},
			{samples(0, 0), 3, true, 3, 7.5, 5, decRefused}, // the floor holds
		}},
		{"a queue is cut toward the window's middle, from what got through", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(10, 20*ms), 0, true, 10, 100, 200, decSlowStart},
			{late, 0, true, 10, 100, 200, decSettle},
			// 60 ms is past the window (40 ms); 200 granted, 150 came back.
			{samples(10, 60*ms), 0, true, 15, 200, queueCut, decQueue},
			{samples(10, 60*ms), 0, true, 15, queueCut, queueCut, decSettle}, // queued before the cut
			// Lower: the cut drained a queue. The first congestion also put
			// the floor in doubt: measure it at a quarter of the load...
			{samples(10, 25*ms), 0, true, 8, queueCut, queueCut / 4, decFloorProbe},
			{samples(10, 25*ms), 0, true, 2, queueCut / 4, queueCut / 4, decSettle},
			// ...and go back.
			{samples(10, 20*ms), 0, true, 2, queueCut / 4, queueCut, decFloor},
		}},
		{"a cut that leaves latency where it was is a level shift", Config{MaxRate: 1000, InitialRate: 500}, []step{
			{samples(10, 20*ms), 0, true, 50, 500, 1000, decSlowStart},
			{late, 0, true, 50, 500, 1000, decSettle},
			{samples(10, 50*ms), 0, true, 100, 1000, 1000 * towardMid(50*ms), decQueue},
			{samples(10, 50*ms), 0, true, 100, 600, 1000 * towardMid(50*ms), decSettle},
			// Everything sent comes back, at the same latency: not a queue
			// of this limiter's. A level shift, or the queue of others that
			// share the resource: the floor is measured at a quarter of the
			// load (of the limit now, not before the cut: the limit before
			// may have been far past the knee)...
			{samples(10, 50*ms), 0, true, 60, 600, 1000 * towardMid(50*ms) / 4, decShift},
			{samples(10, 50*ms), 0, true, 60, 150, 1000 * towardMid(50*ms) / 4, decSettle},
			// ...where it is still 50 ms: the new floor, and the limit
			// goes back where it was.
			{samples(10, 50*ms), 0, true, 15, 150, 1000, decFloor},
			{samples(10, 50*ms), 0, true, 100, 1000, 1000, decSettle}, // the new window is 100 ms
		}},
		{"a cut whose queue still drains waits", Config{MaxRate: 1000, InitialRate: 500}, []step{
			{samples(10, 20*ms), 0, true, 50, 500, 1000, decSlowStart},
			{late, 0, true, 50, 500, 1000, decSettle},
			{samples(10, 100*ms), 0, true, 100, 1000, 500, decQueue},
			{samples(10, 100*ms), 0, true, 100, 500, 500, decSettle},
			{samples(10, 70*ms), 0, true, 50, 500, 500, decDrain}, // falling, past the window
		}},
		{"p99 over the SLO cuts by SLO/p99", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 50 * ms}, []step{
			{samples(10, 10*ms), 0, true, 10, 0, 200, decSlowStart},
			{mix(9, 10*ms, 1, 60*ms), 0, true, 10, 0, 200, decSettle},
			{mix(95, 10*ms, 5, 90*ms), 0, true, 20, 0, 200 * float64(50*ms) / at(90*ms), decSLO},
		}},
		{"one slow answer among ten is no evidence that more than 1% are slow", Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 50 * ms}, []step{
			{samples(10, 10*ms), 0, true, 10, 0, 200, decSlowStart},
			{mix(9, 10*ms, 1, 60*ms), 0, true, 10, 0, 200, decSettle},
			{mix(9, 10*ms, 1, 90*ms), 0, true, 20, 0, 400, decSlowStart},
		}},
		{"more in flight than twice what the window holds at capacity is drained from what comes back", Config{MaxRate: 1000, InitialRate: 500}, []step{
			// An epoch: the floor is 20 ms, and 500/s got through.
			{samples(64, 20*ms), 0, true, 50, 500, 1000, decSlowStart},
			// 100 sent, 10 back: 90 in flight, past 2 × 500/s × 40 ms.
			{samples(10, 20*ms), 0, true, 10, 1000, 50, decBacklog},
		}},
		{"before an epoch has measured the capacity, the backlog is read against what is sent", Config{MaxRate: 1000, InitialRate: 500, MinRate: 5}, []step{
			// A first round: 20 ms, a guess at the floor; no capacity yet.
			{samples(10, 20*ms), 0, true, 50, 500, 1000, decSlowStart},
			// 100 sent, nothing back: 100 in flight, past 2 × 1000/s × 40 ms
			// (calls out twice as long as the window).
			{samples(0, 0), 0, true, 0, 1000, 5, decBacklog},
		}},
		{"the first epoch replaces the first round's guess at the floor, up or down", Config{MaxRate: 1000, InitialRate: 100}, []step{
			// Eight cheap calls fill the first round: a guess of 1 ms.
			{samples(8, 1*ms), 0, true, 10, 100, 200, decSlowStart},
			// The epoch is mostly 20 ms calls: its median is the floor,
			// and 20 ms is no queue (against the guess it was 20 times
			// the floor, and would have been cut).
			{samples(60, 20*ms), 0, true, 20, 200, 400, decSlowStart},
		}},
		{"a probe that gets more through stays and doubles the next, up to the most that got through; one that does not is undone; in the window's upper half the step goes down", Config{MaxRate: 10000, InitialRate: 1000}, []step{
			// An epoch's worth of answers at 20 ms: the floor; 3000/s got
			// through.
			{samples(64, 20*ms), 0, true, 300, 1000, 2000, decSlowStart},
			{late, 0, true, 300, 2000, 2000, decSettle},
			// 26 ms ends slow start (a quarter above the floor): back to
			// 0.9 of the knee.
			{samples(10, 26*ms), 0, true, 200, 2000, 2700, decReturn},
			{samples(10, 26*ms), 0, true, 270, 2700, 2700, decSettle},
			// Below mid: one step up of 1% of the ceiling.
			{samples(10, 26*ms), 0, true, 270, 2700, 2800, decProbe},
			{samples(10, 26*ms), 0, true, 280, 2800, 2800, decSettle},
			// 2800 came back: paid, and the next step is twice as big...
			{samples(10, 26*ms), 0, true, 280, 2800, 3000, decProbe},
			{samples(10, 26*ms), 0, true, 300, 3000, 3000, decSettle},
			// ...but not past the most that got through (3000): one step.
			{samples(10, 26*ms), 0, true, 300, 3000, 3100, decProbe},
			{samples(10, 26*ms), 0, true, 300, 3100, 3100, decSettle},
			{samples(10, 26*ms), 0, true, 300, 3100, 3000, decKnee}, // still 3000: undone
			{samples(10, 35*ms), 0, true, 300, 3000, 3000, decSettle},
			// 35 ms is in the window's upper half (above 30): down.
			{samples(10, 35*ms), 0, true, 300, 3000, 2900, decTrim},
			{samples(10, 35*ms), 0, true, 290, 2900, 2900, decSettle},
			// The step down cost all of its share: undone.
			{samples(10, 35*ms), 0, true, 290, 2900, 3000, decFull},
		}},
		{"a step too small to judge is judged with the next, from where the first began", Config{MaxRate: 1000, InitialRate: 100}, []step{
			{samples(64, 20*ms), 0, true, 10, 100, 200, decSlowStart},
			{late, 0, true, 20, 200, 200, decSettle},
			{samples(10, 26*ms), 0, true, 20, 200, 210, decProbe},
			{samples(10, 26*ms), 0, true, 20, 210, 210, decSettle},
			// 10/s more for a tenth of a second is one call: no judge;
			// the next step adds to it.
			{samples(10, 26*ms), 0, true, 20, 210, 220, decProbe},
			{samples(10, 26*ms), 0, true, 20, 220, 220, decSettle},
			// 200 → 220 is worth two calls, and nothing more came back:
			// both steps undone.
			{samples(10, 26*ms), 0, true, 20, 220, 200, decKnee},
		}},
		{"a round of fewer than eight answers gathers, once growth is no longer known to be safe", Config{MaxRate: 10000, InitialRate: 500}, []step{
			{samples(64, 20*ms), 0, true, 50, 500, 1000, decSlowStart},
			{late, 0, true, 100, 1000, 1000, decSettle},
			{samples(10, 60*ms), 0, true, 100, 1000, 1000 * towardMid(60*ms), decQueue},
			{samples(3, 20*ms), 0, true, 50, 500, 1000 * towardMid(60*ms), decSettle},
			// Answers sent after the cut, but three: no round yet.
			{samples(3, 20*ms), 0, true, 50, 500, 1000 * towardMid(60*ms), decGather},
		}},
		{"at the ceiling there is nothing above to probe", Config{MaxRate: 1000, InitialRate: 1000}, []step{
			{samples(64, 20*ms), 0, true, 100, 1000, 1000, decSlowStart},
			{samples(10, 26*ms), 0, true, 100, 1000, 1000, decCeiling},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newController(settingsFor(t, tc.cfg))
			for i, st := range tc.steps {
				got := c.step(tick{
					hist: st.hist, unreachable: st.unreach, saturated: st.saturated,
					dt: DefaultTickInterval, completions: st.done, admitted: st.sent,
				})
				if math.Abs(got-st.want) > 0.01*st.want || c.view.decision != st.dec {
					t.Fatalf("step %d: limit %.3f (%v); want %.3f (%v); view %+v", i, got, c.view.decision, st.want, st.dec, c.view)
				}
			}
		})
	}
}

// A probe of a semaphore moves it by at least one slot: 1% of a ceiling of
// five is no change at all, and the limit would sit at one slot for good.
func TestModelProbeMovesASlot(t *testing.T) {
	s, err := ConcurrencyConfig{MaxLimit: 5, InitialLimit: 1}.settings()
	if err != nil {
		t.Fatal(err)
	}
	c := newController(s)
	c.cold = false
	c.floor = float64(100 * time.Millisecond)
	// A round of eight answers at the floor, demand at the limit in most
	// ticks of it (a few calls a second leave some ticks empty).
	var got float64
	for i := range 4 {
		got = c.step(tick{hist: samples(2, 100*time.Millisecond), saturated: i != 1, dt: DefaultTickInterval, completions: 2})
	}
	if got != 2 || c.view.decision != decProbe {
		t.Fatalf("limit %v (%v); want 2 (probe)", got, c.view.decision)
	}
}

// The first round's median is only a guess at the floor: the first epoch
// replaces it, up or down, unless the epoch's median is past what the SLO
// allows the window (0.8 × SLO): then the epoch was gathered past the knee.
func TestModelFirstEpochReplacesTheGuess(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name             string
		epoch, wantFloor time.Duration
	}{
		{"an epoch slower than the guess, inside the SLO", 20 * ms, 20 * ms},
		{"an epoch past 0.8 × SLO", 90 * ms, 1 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newController(settingsFor(t, Config{MaxRate: 1000, InitialRate: 100, SLOTarget: 100 * ms}))
			c.step(tick{hist: samples(8, 1*ms), saturated: true, dt: DefaultTickInterval, completions: 10, admitted: 100})
			c.step(tick{hist: samples(60, tc.epoch), saturated: true, dt: DefaultTickInterval, completions: 20, admitted: 200})
			if got := time.Duration(c.floor); math.Abs(float64(got-tc.wantFloor)) > 0.05*float64(tc.wantFloor) {
				t.Errorf("floor %v; want about %v", got, tc.wantFloor)
			}
		})
	}
}

// AnchorBaseline's window is twice the floor, or the wait of queueCalls
// calls queued at the capacity (Little's law), whichever is more: a server
// of one worker needs a few calls waiting to stay busy. The SLO caps both.
func TestModelWindowHoldsAFewCalls(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name     string
		slo      time.Duration
		floor    time.Duration
		capacity float64 // per second
		want     time.Duration
	}{
		{"one worker: 3 calls at 10/s wait 300 ms", 0, 100 * ms, 10, 400 * ms},
		{"many workers: twice the floor is more", 0, 100 * ms, 1000, 200 * ms},
		{"the SLO caps it", time.Second, 100 * ms, 2, 800 * ms},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newController(settingsFor(t, Config{MaxRate: 1000, SLOTarget: tc.slo}))
			c.floor, c.got[0] = float64(tc.floor), tc.capacity
			if got := time.Duration(c.high()); got < tc.want*99/100 || got > tc.want*101/100 {
				t.Errorf("high %v; want %v", got, tc.want)
			}
		})
	}
}

// A paying probe doubles up to the most that got through lately, or to the
// most that ever did (decaying): after a capacity drop reset the capacity
// filter, a capacity that came back is climbed by doubling steps again.
func TestModelDoublingClimbsBackToTheMostThatGotThrough(t *testing.T) {
	const ms = time.Millisecond
	c := newController(settingsFor(t, Config{MaxRate: 1000}))
	c.floor, c.floorMean, c.cold, c.limit, c.lastStep = float64(20*ms), float64(20*ms), false, 300, 50
	c.got[0], c.most = 300, 1000 // the filter after a drop; what got through before it
	c.probe.pending, c.probe.from, c.probe.at = true, 250, 250
	e := evidence{latency: float64(21 * ms), p99: float64(21 * ms), n: 10, saturated: true, delivered: 300, sent: 300, dt: 100 * ms, ticks: 1}
	if dec := c.law(e); dec != decProbe || c.limit != 375 {
		t.Errorf("%v to %.0f; want a probe to 375 (twice the last step of 50, a quarter of the limit at most)", dec, c.limit)
	}
}

// A rate limit paces at its limit while the calls in flight stay within
// cwndGain × what the window holds at capacity (capacity × high, scaled to
// the floor's mean: Little's law). Past it, it sends only what keeps them
// there, down to MinRate when nothing came back, and its limit, the law's,
// does not move. A semaphore's limit is already a count in flight.
func TestModelPaceHoldsInFlightToTheWindow(t *testing.T) {
	const ms = time.Millisecond
	// floor 20 ms (mean 30 ms), capacity 500/s: the window (40 ms) holds
	// 500 × 40 ms × 30/20 = 30 calls at capacity, and the gate 45.
	const cwnd = 45.0
	for _, tc := range []struct {
		name           string
		inflight, done float64 // calls out before the tick, and back in it
		want           float64
	}{
		{"within the gate: the limit", 5, 50, 800},
		{"at it: what comes back in a tick", cwnd, 30, 300},
		{"past it by what came back: nothing but MinRate", cwnd + 30, 30, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newController(settingsFor(t, Config{MinRate: 1, MaxRate: 1000}))
			c.floor, c.floorMean, c.limit, c.got[0] = float64(20*ms), float64(30*ms), 800, 500
			c.inflight = tc.inflight
			in := tick{hist: samples(0, 0), dt: 100 * ms, completions: tc.done}
			if got := c.pace(in); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("pace %.2f; want %.2f", got, tc.want)
			}
			if c.limit != 800 {
				t.Errorf("limit moved to %.0f; the gate must leave it", c.limit)
			}
		})
	}
	t.Run("a semaphore is not gated", func(t *testing.T) {
		s, err := ConcurrencyConfig{MaxLimit: 100, InitialLimit: 50}.settings()
		if err != nil {
			t.Fatal(err)
		}
		c := newController(s)
		c.floor, c.floorMean, c.got[0], c.inflight = float64(20*ms), float64(30*ms), 500, 1000
		if got := c.pace(tick{hist: samples(0, 0), dt: 100 * ms}); got != 50 {
			t.Errorf("pace %.2f; want the limit, 50", got)
		}
	})
}
