package eval

import (
	"context"
	"math"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"golang.org/x/time/rate"
)

// burst sends n requests of mean cost at the same instant and returns each
// one's latency, in send order.
func burst(sc *Scenario, n int) []time.Duration {
	clk := newClock()
	dep := newDependency(sc)
	lat := make([]time.Duration, n)
	for i := range n {
		clk.spawn(uint64(i), func(p *proc) {
			_, lat[i], _ = dep.call(p, request{cost: 1, size: 1, netJ: 1}, time.Time{})
		})
	}
	clk.run()
	return lat
}

// FIFO with c servers: requests sent together start in send order on the
// earliest free server, so the k-th waits k/c services.
func TestFIFOServesInSendOrder(t *testing.T) {
	sc := Scenario{Law: FIFOLogNormal, Servers: 2, Capacity0: 100, Net: 5 * time.Millisecond, Routes: []Route{{Share: 1, Cost: 1}}}
	var lat []time.Duration
	synctest.Test(t, func(*testing.T) { lat = burst(&sc, 5) })
	service := 20 * time.Millisecond // 2 servers / 100 req/s
	for i, d := range lat {
		if want := time.Duration(i/2+1)*service + sc.Net; d != want {
			t.Errorf("request %d took %v, want %v", i, d, want)
		}
	}
}

// PS past a knee: the n-th request in service takes base × max(1, (n/knee)²).
func TestPSKneeLaw(t *testing.T) {
	sc := Scenario{Law: PSKnee, Knee: 4, Capacity0: 400, Routes: []Route{{Share: 1, Cost: 1}}}
	var lat []time.Duration
	synctest.Test(t, func(*testing.T) { lat = burst(&sc, 8) })
	base := 10 * time.Millisecond // knee / capacity
	for i, d := range lat {
		n := float64(i + 1)
		want := time.Duration(float64(base) * math.Max(1, (n/4)*(n/4)))
		if d != want {
			t.Errorf("request %d of 8 took %v, want %v", i+1, d, want)
		}
	}
}

// fixed paces at r req/s with x/time/rate: the load a law is checked under.
func fixed(r float64) OutboundArm {
	return OutboundArm{Name: "fixed", New: func(*Scenario) Pacer { return xratePacer{rate.NewLimiter(rate.Limit(r), 1)} }}
}

// Each law, fed at half its capacity, answers near its unloaded latency; fed
// at 1.5× it, a queue builds and latency runs away.
func TestLawsUnderLoad(t *testing.T) {
	base := Scenario{
		Name: "law", Seed: 3, Direction: Outbound, Duration: 20 * time.Second, SLO: time.Second,
		Capacity0: 200, Net: 5 * time.Millisecond, Routes: []Route{{Share: 1, Cost: 1}},
		DeadlineMin: time.Minute, DeadlineMax: time.Minute,
	}
	laws := map[string]Scenario{}
	for name, set := range map[string]func(*Scenario){
		"M/M/4":           func(sc *Scenario) { sc.Law, sc.Servers = FIFOExp, 4 },
		"lognormal×4 0.3": func(sc *Scenario) { sc.Law, sc.Servers, sc.Sigma = FIFOLogNormal, 4, 0.3 },
		"Pareto×4 2.5":    func(sc *Scenario) { sc.Law, sc.Servers, sc.Alpha = FIFOPareto, 4, 2.5 },
		"PS knee 10":      func(sc *Scenario) { sc.Law, sc.Knee = PSKnee, 10 },
	} {
		sc := base
		set(&sc)
		laws[name] = sc
	}
	for name, sc := range laws {
		unloaded := sc.UnloadedAt(0)
		var light, heavy Result
		synctest.Test(t, func(*testing.T) {
			sc.Rate = 0.5 * sc.Capacity0
			light = RunOutbound(&sc, fixed(sc.Rate))
		})
		synctest.Test(t, func(*testing.T) {
			sc.Rate = 1.5 * sc.Capacity0
			heavy = RunOutbound(&sc, fixed(sc.Rate))
		})
		t.Logf("%-16s unloaded %v: at 0.5× mean %v p99 %v; at 1.5× mean %v p99 %v", name, unloaded,
			light.Mean.Round(time.Millisecond), light.P99.Round(time.Millisecond), heavy.Mean.Round(time.Millisecond), heavy.P99.Round(time.Millisecond))
		if light.Mean > unloaded*13/10 {
			t.Errorf("%s at half its capacity: mean %v, want near the unloaded %v", name, light.Mean, unloaded)
		}
		if heavy.Mean < 10*unloaded {
			t.Errorf("%s at 1.5× its capacity: mean %v, want a queue (≥ 10× the unloaded %v)", name, heavy.Mean, unloaded)
		}
		// A third of what is sent cannot be served in time: answered over the
		// run and the deadline's drain, the rate stays under the capacity.
		span := (sc.Duration + sc.DeadlineMax).Seconds()
		if served := float64(heavy.Answered) / span; served > 1.05*sc.Capacity0 {
			t.Errorf("%s served %.0f req/s, above its capacity %.0f", name, served, sc.Capacity0)
		}
	}
}

// The oracle paces at its share of the capacity trace, a refusal costs no
// capacity, and the probe runs at 1 req/s while the dependency refuses.
func TestOraclePacesTheTrace(t *testing.T) {
	sc := Scenario{
		Name: "trace", Seed: 5, Direction: Outbound, Duration: 20 * time.Second, SLO: time.Second,
		Law: FIFOLogNormal, Servers: 1, Sigma: 0.3, Capacity0: 100, Net: time.Millisecond,
		Trace:  Trace{Kind: Outage, At: 10 * time.Second, Until: 15 * time.Second},
		Routes: []Route{{Share: 1, Cost: 1}}, Rate: 300, Load: 3,
		DeadlineMin: 10 * time.Second, DeadlineMax: 10 * time.Second,
	}
	var r Result
	synctest.Test(t, func(*testing.T) { r = RunOutbound(&sc, Oracle(0.8)) })
	// 15 s at 80 req/s, and 5 probes.
	if want := 15*80 + 5; math.Abs(float64(r.Sent-want)) > 3 {
		t.Errorf("the oracle sent %d, want about %d", r.Sent, want)
	}
	if r.Refused < 4 || r.Refused > 6 {
		t.Errorf("%d calls refused during the 5 s outage, want a probe a second", r.Refused)
	}
}

// Every run is a function of its seed: the same scenario and arm give the
// same result, whatever runs beside it (here: every run of the test at once,
// in parallel bubbles, twice).
func TestRunsAreDeterministic(t *testing.T) {
	scs := []Scenario{Generate(Outbound, 1004), Generate(Outbound, 1036), Generate(Inbound, 1021), Generate(Inbound, 1016)}
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6} { // find a closed-loop one
		if sc := Generate(Inbound, seed); sc.Clients > 0 && sc.cost() < 100000 {
			scs = append(scs, sc)
			break
		}
	}
	runAll := func() []Result {
		res := make([]Result, 2*len(scs))
		var jobs []func()
		for i := range scs {
			sc := &scs[i]
			if sc.Direction == Outbound {
				jobs = append(jobs,
					func() { res[2*i] = RunOutbound(sc, AgileOutbound("agile", agilelimiter.AnchorBaseline)) },
					func() { res[2*i+1] = RunOutbound(sc, Oracle(0.9)) })
			} else {
				jobs = append(jobs,
					func() { res[2*i] = RunInbound(sc, AgileInbound()) },
					func() { res[2*i+1] = RunInbound(sc, Failsafe()) })
			}
		}
		Bubbles(t)(jobs)
		return res
	}
	a, b := runAll(), runAll()
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("%s/%s differs between two runs:\n%+v\n%+v", a[i].Scenario, a[i].Arm, a[i], b[i])
		}
		if a[i].Sent == 0 {
			t.Errorf("%s/%s sent nothing", a[i].Scenario, a[i].Arm)
		}
	}
}

// The oracle is the best of its sweep: at least every fixed share alone,
// run separately, and the best fixed limit inbound.
func TestOracleIsBestOfSweep(t *testing.T) {
	scs := []Scenario{Generate(Outbound, 1036), Generate(Inbound, 1021)}
	rep := Evaluate(scs, Arms{}, Bubbles(t))
	out, in := rep.Outbound.Rows[0], rep.Inbound.Rows[0]
	for _, s := range OracleShares {
		var r Result
		synctest.Test(t, func(*testing.T) { r = RunOutbound(&scs[0], Oracle(s)) })
		if r.Goodput > out.Oracle.Goodput {
			t.Errorf("share %.2f alone: goodput %.2f, above the oracle's %.2f", s, r.Goodput, out.Oracle.Goodput)
		}
	}
	for _, n := range OracleLimits(&scs[1]) {
		var r Result
		synctest.Test(t, func(*testing.T) { r = RunInbound(&scs[1], Semaphore(n)) })
		if r.Goodput > in.Oracle.Goodput {
			t.Errorf("limit %d alone: goodput %.2f, above the oracle's %.2f", n, r.Goodput, in.Oracle.Goodput)
		}
	}
	if out.Oracle.Goodput == 0 || in.Oracle.Goodput == 0 {
		t.Errorf("an oracle with no goodput: %+v %+v", out.Oracle, in.Oracle)
	}
}

// An arm built on a pacer that refuses everything sends nothing and has no
// goodput; its refusals all count as limited.
func TestRefusingArm(t *testing.T) {
	sc := Generate(Outbound, 1036)
	never := OutboundArm{Name: "never", New: func(*Scenario) Pacer { return refuser{} }}
	var r Result
	synctest.Test(t, func(*testing.T) { r = RunOutbound(&sc, never) })
	if r.Sent != 0 || r.Goodput != 0 || r.Limited != r.Offered || r.LimitedShare != 1 {
		t.Errorf("a pacer that refuses everything: %+v", r)
	}
}

type refuser struct{}

func (refuser) Take(context.Context) error                 { return context.DeadlineExceeded }
func (refuser) Record(agilelimiter.Outcome, time.Duration) {}
func (refuser) Stop()                                      {}
