package eval

import (
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// takeAll takes n permits from a, failing the test if one is refused.
func takeAll(t *testing.T, a Admitter, n int) []Permit {
	t.Helper()
	ps := make([]Permit, 0, n)
	for range n {
		p, ok := a.TryTake()
		if !ok {
			t.Fatalf("refused after %d of %d", len(ps), n)
		}
		ps = append(ps, p)
	}
	return ps
}

// A period whose answers break the p99 SLO cuts the guard's cap to 0.7 of
// what was in flight, which refuses requests failsafe-go alone admits; the
// cap regrows a call a period and is lifted once failsafe-go's own limit is
// the tighter.
func TestFailsafeGuardedCutsWhereTheSLOBreaksAndRegrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := &Scenario{MaxLimit: 40, SLO: 100 * time.Millisecond}
		g := FailsafeGuarded().New(sc)
		plain := Failsafe().New(sc)
		ps := takeAll(t, g, 20)
		pp := takeAll(t, plain, 20)
		// Six answers past the SLO in the first period: a breach.
		time.Sleep(50 * time.Millisecond)
		for i := range 5 {
			ps[i].Done(agilelimiter.Reached, 200*time.Millisecond)
			pp[i].Done(agilelimiter.Reached, 200*time.Millisecond)
		}
		time.Sleep(60 * time.Millisecond)
		ps[5].Done(agilelimiter.Reached, 200*time.Millisecond)
		pp[5].Done(agilelimiter.Reached, 200*time.Millisecond)
		// 14 in flight, cut to 0.7 × 15 = 10.5: full.
		if _, ok := g.TryTake(); ok {
			t.Fatal("the guard admitted a request after a breach, with 14 in flight under a cap of 10.5")
		}
		if _, ok := plain.TryTake(); !ok {
			t.Fatal("failsafe-go alone refused at 14 in flight: the test does not show the guard")
		}
		// Answers inside the SLO, one a period: the cap regrows a call a
		// period, so a request is admitted again once it passes what is in
		// flight.
		admitted := false
		for i := 6; i < 20 && !admitted; i++ {
			time.Sleep(guardPeriod)
			ps[i].Done(agilelimiter.Reached, 10*time.Millisecond)
			if p, ok := g.TryTake(); ok {
				admitted = true
				p.Done(agilelimiter.Reached, 10*time.Millisecond)
			}
		}
		if !admitted {
			t.Fatal("the cap did not regrow over fourteen periods inside the SLO")
		}
		gg := g.(*guarded)
		for i := 0; i < 60 && gg.cap < 1e9; i++ {
			time.Sleep(guardPeriod)
			p, ok := g.TryTake()
			if ok {
				p.Done(agilelimiter.Reached, 10*time.Millisecond)
			}
		}
		if gg.cap < 1e9 {
			t.Errorf("the cap is still %.1f after sixty clean periods; failsafe-go allows %d", gg.cap, gg.l.Limit())
		}
	})
}

// Refusals count against the SLO, as the law counts Unreachable answers.
func TestFailsafeGuardedCountsRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := FailsafeGuarded().New(&Scenario{MaxLimit: 40, SLO: time.Second})
		ps := takeAll(t, g, 10)
		time.Sleep(guardPeriod / 2)
		for _, p := range ps[:3] {
			p.Done(agilelimiter.Unreachable, time.Millisecond)
		}
		time.Sleep(guardPeriod / 2)
		ps[3].Done(agilelimiter.Unreachable, time.Millisecond)
		// Four refusals of four answers, 6 in flight: 0.7 × 7.
		if gg := g.(*guarded); gg.cap > 5 {
			t.Errorf("cap %.1f after four refusals of four answers with 6 in flight, want 4.9", gg.cap)
		}
	})
}

// Where failsafe-go keeps the p99 the guard never acts, and the arm gets
// exactly what failsafe-go gets; where failsafe-go's answers are mostly past
// the SLO, the guard keeps more of them inside.
func TestFailsafeGuardedStandsAsideUntilTheSLOBreaks(t *testing.T) {
	// Training in-16: a processor with a knee of 34 that failsafe-go keeps
	// under a third of the SLO.
	kept := Generate(Inbound, 16)
	// Training in-25: three lognormal workers under a 6% share of reports
	// past the SLO, 65 closed-loop clients; failsafe-go answers under a
	// third of its requests inside the SLO.
	past := Generate(Inbound, 25)
	var res [2][2]Result
	for i, sc := range []Scenario{kept, past} {
		synctest.Test(t, func(*testing.T) { res[i][0] = RunInbound(&sc, Failsafe()) })
		synctest.Test(t, func(*testing.T) { res[i][1] = RunInbound(&sc, FailsafeGuarded()) })
	}
	if f, g := res[0][0], res[0][1]; f.Good != g.Good || f.Sent != g.Sent || f.P99 >= kept.SLO {
		t.Errorf("%s: failsafe-go %d good of %d sent (p99 %v), guarded %d of %d: the guard acted where the SLO holds",
			kept.Name, f.Good, f.Sent, f.P99, g.Good, g.Sent)
	}
	if f, g := res[1][0], res[1][1]; f.Inside > 0.5 || g.Inside < f.Inside+0.2 {
		t.Errorf("%s: inside %.1f%% guarded against %.1f%% for failsafe-go: the guard should keep far more inside",
			past.Name, 100*g.Inside, 100*f.Inside)
	}
}
