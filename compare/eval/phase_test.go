package eval

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

// refuseAll is an admitter that refuses every request.
type refuseAll struct{}

func (refuseAll) TryTake() (Permit, bool) { return nil, false }
func (refuseAll) Stop()                   {}

// A draw's run starts its own phase into the limiters' floor-probe cycle,
// the scenario's own draw on the cycle itself: otherwise every run meets its
// first floor probe at the same instant of its trace, the instant most
// favourable to the law of eight measured, which a deployment does not keep.
func TestADrawStartsAtItsPhase(t *testing.T) {
	sc := Scenario{
		Name: "phase", Seed: 5, Duration: time.Second, SLO: time.Second,
		Law: FIFOLogNormal, Servers: 1, Sigma: 0.3, Capacity0: 100, Net: time.Millisecond,
		Routes: []Route{{Share: 1, Cost: 1}}, Rate: 10, Load: 0.1, MaxLimit: 4,
		DeadlineMin: time.Second, DeadlineMax: time.Second,
	}
	for _, draw := range []uint64{0, 1, 2} {
		sc.Draw = draw
		want := sim.PhaseOf(draw)
		if draw == 0 && want != 0 {
			t.Fatalf("the scenario's own draw starts %v into the cycle; want on it", want)
		}
		for _, dir := range []Direction{Inbound, Outbound} {
			sc.Direction = dir
			var at time.Duration
			// Each arm notes when the run built it: when its scenario
			// started, measured from the bubble's first instant.
			synctest.Test(t, func(*testing.T) {
				start := time.Now()
				if dir == Inbound {
					RunInbound(&sc, InboundArm{Name: "note", New: func(*Scenario) Admitter {
						at = time.Since(start)
						return refuseAll{}
					}})
				} else {
					RunOutbound(&sc, OutboundArm{Name: "note", New: func(s *Scenario) Pacer {
						at = time.Since(start)
						return fixed(s.Rate).New(s)
					}})
				}
			})
			if at != want {
				t.Errorf("draw %d %v: the run started %v into the cycle; want %v", draw, dir, at, want)
			}
		}
	}
}
