package sim_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/nethttp/httpclient"
)

// Seed (SPEC §7): a cache with 95% hits in front of a saturated origin. The
// aggregate latency looks healthy (the hits answer in a millisecond) while the
// origin times out; with httpclient's verdict, hits are Aborted, only the
// origin's round trips are evidence, and the origin is protected.
func TestCacheInFrontOfSaturatedOrigin(t *testing.T) {
	t.Parallel()
	sc := sim.Scenario{
		Name: "cache", Duration: 20 * time.Second, SLO: 100 * time.Millisecond, Timeout: time.Second,
		Workers: 400, MaxRate: 3000,
		Capacity: sim.Const(50.0), Base: sim.Const(20 * time.Millisecond), Jitter: 0.2,
		HitRatio: 0.95, HitLatency: time.Millisecond, Seed: 3,
	}
	aggregate := sim.Agile("aggregate, no SLO", func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MaxRate: sc.MaxRate}
	})
	aggregateSLO := sim.Agile("aggregate, AnchorSLO", sim.SLOConfig)
	verdict := sim.Agile("httpclient.DefaultVerdict, AnchorSLO", sim.SLOConfig)
	verdict.Verdict = httpclient.DefaultVerdict
	verdictBase := sim.Agile("httpclient.DefaultVerdict, no SLO", func(sc *sim.Scenario) agilelimiter.Config {
		return agilelimiter.Config{MaxRate: sc.MaxRate}
	})
	verdictBase.Verdict = httpclient.DefaultVerdict

	res := map[string]sim.Result{}
	for _, arm := range []sim.Arm{aggregate, aggregateSLO, verdict, verdictBase} {
		synctest.Test(t, func(t *testing.T) { res[arm.Name] = sim.Run(sc, arm) })
		r := res[arm.Name]
		t.Logf("%-38s pace %4.0f req/s at the end; origin: %5.1f%% answered inside the SLO, %4.1f%% of its work wasted; all calls: mean %v",
			arm.Name, r.Series[len(r.Series)-1].Rate, 100*r.OriginInside, 100*r.Wasted, r.Mean.Round(time.Millisecond))
	}
	agg, v, vb := res[aggregate.Name], res[verdict.Name], res[verdictBase.Name]
	if agg.Mean > 100*time.Millisecond || agg.OriginInside > 0.5 {
		t.Errorf("aggregate view: mean %v, origin %.0f%% inside; the seed's failure is a healthy-looking aggregate over a drowning origin",
			agg.Mean, 100*agg.OriginInside)
	}
	// With hits Aborted the origin no longer drowns. It is not held inside the
	// SLO as well as the oracle would: the controller sees one call in twenty
	// and probes and cuts on that. Over seeds 1–10 the origin answers 86% of
	// its calls inside the SLO under AnchorSLO (78% in the draw here, seed 3)
	// and 87% without an SLO (91% here). With an SLO set, the aggregate's p99
	// guard also sees the misses (5% of calls is more than 1%), so the
	// verdict matters most without an SLO, or when hits exceed 99%.
	for _, r := range []sim.Result{v, vb} {
		if r.OriginInside < 0.4 || r.Wasted > 0.2 || r.OriginInside < agg.OriginInside+0.3 {
			t.Errorf("%s: origin %.0f%% inside, %.0f%% wasted; with hits Aborted the origin should be protected", r.Arm, 100*r.OriginInside, 100*r.Wasted)
		}
	}
}
