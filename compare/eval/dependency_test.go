package eval

import (
	"context"
	"math"
	"math/rand/v2"
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

// psScenario is a processor-sharing server alone: knee k, base 10 ms (so
// capacity k/base), no round trip.
func psScenario(k int) Scenario {
	return Scenario{Law: PSKnee, Knee: k, Capacity0: float64(k) / 0.010, Routes: []Route{{Share: 1, Cost: 1}}}
}

// near reports whether d is within 1 µs of want: departures are rounded up
// to the nanosecond, a few times over.
func near(d, want time.Duration) bool { return (d - want).Abs() <= time.Microsecond }

// At a steady n in service, each request takes base × max(1, (n/knee)²):
// n requests sent together all leave together.
func TestPSKneeLaw(t *testing.T) {
	sc := psScenario(4)
	base := 10 * time.Millisecond
	for _, n := range []int{1, 4, 5, 6, 8, 12} {
		var lat []time.Duration
		synctest.Test(t, func(*testing.T) { lat = burst(&sc, n) })
		want := time.Duration(float64(base) * math.Max(1, float64(n*n)/16))
		for i, d := range lat {
			if !near(d, want) {
				t.Errorf("%d in service: request %d took %v, want %v", n, i+1, d, want)
			}
		}
	}
}

// When n changes, every request's speed changes at once and the work done
// is kept: past a knee of 1, two requests of 10 and 30 ms share the server at
// a quarter speed each until the first leaves at 40 ms; the second, with
// 20 ms of work left, then runs alone and leaves at 60 ms (not at 4 × 30 ms,
// as a latency fixed at its arrival would have it).
func TestPSKneeReshares(t *testing.T) {
	sc := psScenario(1)
	var short, long time.Duration
	synctest.Test(t, func(*testing.T) {
		clk := newClock()
		dep := newDependency(&sc)
		clk.spawn(0, func(p *proc) { _, short, _ = dep.call(p, request{cost: 1, size: 1}, time.Time{}) })
		clk.spawn(1, func(p *proc) { _, long, _ = dep.call(p, request{cost: 3, size: 1}, time.Time{}) })
		clk.run()
	})
	if !near(short, 40*time.Millisecond) || !near(long, 60*time.Millisecond) {
		t.Errorf("10 and 30 ms of work past a knee of 1 took %v and %v, want 40ms and 60ms", short, long)
	}
}

// A caller that times out leaves its request in service: it still slows
// the others until its work is done, and its work is counted.
func TestPSKneeTimedOutKeepsItsPlace(t *testing.T) {
	sc := psScenario(1)
	var st status
	var waited, spent, other time.Duration
	synctest.Test(t, func(*testing.T) {
		clk := newClock()
		dep := newDependency(&sc)
		clk.spawn(0, func(p *proc) {
			st, waited, spent = dep.call(p, request{cost: 1, size: 1}, time.Now().Add(5*time.Millisecond))
		})
		clk.spawn(1, func(p *proc) { _, other, _ = dep.call(p, request{cost: 1, size: 1}, time.Time{}) })
		clk.run()
	})
	if st != timedOut || waited != 5*time.Millisecond || spent != 10*time.Millisecond {
		t.Errorf("a caller with a 5 ms deadline: %v after %v, %v of work; want timed out after 5ms, 10ms", st, waited, spent)
	}
	if !near(other, 40*time.Millisecond) {
		t.Errorf("the other request took %v, want 40ms: the abandoned one shares the server to its end", other)
	}
}

// A capacity step applies at its instant, with nothing arriving or leaving:
// 100 ms of work, capacity doubled at 50 ms, leaves at 75 ms.
func TestPSKneeFollowsCapacity(t *testing.T) {
	sc := psScenario(1)
	sc.Trace = Trace{Kind: Step, At: 50 * time.Millisecond, Factor: 2}
	var lat time.Duration
	synctest.Test(t, func(*testing.T) {
		clk := newClock()
		dep := newDependency(&sc)
		clk.spawn(0, func(p *proc) { _, lat, _ = dep.call(p, request{cost: 10, size: 1}, time.Time{}) })
		clk.run()
	})
	if !near(lat, 75*time.Millisecond) {
		t.Errorf("100 ms of work, capacity ×2 at 50 ms: took %v, want 75ms", lat)
	}
}

// runClients runs clients that each send a request of mean cost, wait for
// the answer, think for an exponential time of mean think, and send again
// while active(i, now) holds; client i starts at a uniform instant in the
// first 10 ms. It returns every answer: when it was sent, and how long it
// took.
func runClients(sc *Scenario, clients int, think time.Duration, active func(i int, t time.Duration) bool) []answer {
	clk := newClock()
	dep := newDependency(sc)
	answers := make([][]answer, clients)
	for i := range clients {
		clk.spawn(uint64(i), func(p *proc) {
			rng := rand.New(rand.NewPCG(1, uint64(i)))
			p.sleep(time.Duration(rng.Float64() * float64(10*time.Millisecond)))
			for t := time.Since(dep.start); active(i, t); t = time.Since(dep.start) {
				_, d, _ := dep.call(p, request{cost: 1, size: 1}, time.Time{})
				answers[i] = append(answers[i], answer{t, d})
				p.sleep(time.Duration(rng.ExpFloat64() * float64(think)))
			}
		})
	}
	clk.run()
	var all []answer
	for _, a := range answers {
		all = append(all, a...)
	}
	return all
}

type answer struct{ sent, took time.Duration }

// Past the knee the server thrashes: n clients sending back to back keep n
// in service, and it answers capacity × knee/n (below the knee, n/base).
func TestPSKneeThrashes(t *testing.T) {
	const knee = 10
	sc := psScenario(knee)
	from, to := time.Second, 5*time.Second // the steady state
	for _, n := range []int{5, 10, 20, 40} {
		var all []answer
		synctest.Test(t, func(*testing.T) {
			all = runClients(&sc, n, 0, func(_ int, t time.Duration) bool { return t < to+time.Second })
		})
		done := 0
		for _, a := range all {
			if end := a.sent + a.took; end >= from && end < to {
				done++
			}
		}
		got := float64(done) / (to - from).Seconds()
		want := sc.Capacity0 * math.Min(float64(n)/knee, knee/float64(n))
		t.Logf("%d clients: %.0f req/s", n, got)
		if math.Abs(got-want) > 0.02*want {
			t.Errorf("%d clients back to back, knee %d: %.0f answers/s, want %.0f", n, knee, got, want)
		}
	}
}

// The server recovers when the load falls. 60 clients that think 10 ms
// offer 3× its capacity at the unloaded latency; they keep ~58 requests in
// service, each taking ~34× base. At 1 s, 50 of them stop: the 10 left offer
// 0.5×. The requests still in service speed up as the others leave, and
// within a fraction of a second every answer takes base again. (With each
// latency fixed at arrival, the light clients' next requests would have
// been admitted at n ≈ 58 and taken 34× base too.)
//
// The load falls as closed-loop clients stop, not as a slower open loop:
// past 2 × knee the server answers less than half its capacity, so an open
// loop at 0.5× would only fill it further (see the second part).
func TestPSKneeRecovers(t *testing.T) {
	const knee = 10
	sc := psScenario(knee)
	base := 10 * time.Millisecond
	drop, end := time.Second, 5*time.Second
	var all []answer
	synctest.Test(t, func(*testing.T) {
		all = runClients(&sc, 60, base, func(i int, t time.Duration) bool {
			return t < drop || i < 10 && t < end
		})
	})
	var heavy []time.Duration
	recovered := time.Duration(0) // sent after the last slow answer
	for _, a := range all {
		if a.sent >= drop/2 && a.sent < drop {
			heavy = append(heavy, a.took)
		}
		if a.took > base*11/10 {
			recovered = max(recovered, a.sent)
		}
	}
	if m := meanOf(heavy); m < 10*base {
		t.Errorf("3× the capacity: mean latency %v, want the server overloaded (≥ %v)", m, 10*base)
	}
	t.Logf("overloaded: mean %v; the last slow request sent %v after the drop", meanOf(heavy), recovered-drop)
	if recovered-drop > time.Second {
		t.Errorf("the last request slower than 1.1 × base was sent %v after the load fell, want within 1s", recovered-drop)
	}

	// The same overload from an open loop, then an open loop at 0.5×: n
	// only grows.
	var late []time.Duration
	synctest.Test(t, func(*testing.T) {
		clk := newClock()
		dep := newDependency(&sc)
		clk.spawn(0, func(p *proc) {
			id := uint64(1)
			for at := time.Duration(0); at < 3*time.Second; id++ {
				rate := 3 * sc.Capacity0
				if at >= drop {
					rate = sc.Capacity0 / 2
				}
				at += time.Duration(float64(time.Second) / rate)
				p.sleepUntil(dep.start.Add(at))
				clk.spawn(id, func(p *proc) {
					_, d, _ := dep.call(p, request{cost: 1, size: 1}, time.Now().Add(10*time.Second))
					if at > 2*time.Second {
						late = append(late, d)
					}
				})
			}
		})
		clk.run()
	})
	if m := meanOf(late); m < 100*base {
		t.Errorf("an open loop at 0.5× after the overload: mean latency %v, want it still collapsed (≥ %v)", m, 100*base)
	}
}

func meanOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// fixed paces at r req/s with x/time/rate: the load a law is checked under.
func fixed(r float64) OutboundArm {
	return OutboundArm{Name: "fixed", New: func(*Scenario) Pacer { return xratePacer{rate.NewLimiter(rate.Limit(r), 1)} }}
}

// Each law, fed at half its capacity, answers near its unloaded latency; fed
// at 1.5× it, a queue builds and latency runs away.
func TestLawsUnderLoad(t *testing.T) {
	t.Parallel()
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
	scs := []Scenario{Generate(Outbound, 1004), Generate(Outbound, 1036), Generate(Inbound, 1021), Generate(Inbound, 1016),
		Generate(Outbound, 1010), Generate(Inbound, 1018)} // processor sharing: an outage, a flap
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
