package eval

import (
	"math"
	"sync"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// failsafeGuardedArm is the name of FailsafeGuarded's arm.
const failsafeGuardedArm = "failsafe-go-p99"

// The guard FailsafeGuarded puts over failsafe-go is the law's own SLO test
// and cut, with its values (core's sloShareOver, sloZ and congestionCut): a
// p99 SLO lets guardShare of the answers past it, and a period whose answers
// past it are more than that share plus guardZ binomial standard deviations
// cuts the cap to guardCut of what was in flight. It judges every
// guardPeriod of answers (the law's rounds are about as long) and regrows
// the cap by one call each period without a breach, lifting it once it is
// above what failsafe-go itself allows.
const (
	guardShare  = 0.01
	guardZ      = 3.09
	guardCut    = 0.7
	guardPeriod = 100 * time.Millisecond
)

// FailsafeGuarded returns an arm for failsafe-go's adaptivelimiter, built as
// Failsafe builds it, behind the p99 guard the law keeps (SPEC §3): a cap on
// the requests in flight that the SLO's binomial test cuts and that regrows a
// call at a time. It is not one of the default arms (InboundArms); run it
// with -arms. It is a yardstick for the parity target: where failsafe-go's
// goodput comes from answers past the p99 the SLO sets, failsafe-go held to
// that p99 loses it too, so how often the guarded arm gets failsafe-go's own
// goodput says how much of the target a law that keeps the p99 can reach at
// all with failsafe-go's way of moving its limit.
func FailsafeGuarded() InboundArm {
	return InboundArm{Name: failsafeGuardedArm, New: func(sc *Scenario) Admitter {
		return &guarded{
			l:     newFailsafe(sc),
			slo:   sc.SLO,
			cap:   math.Inf(1),
			since: time.Now(),
		}
	}}
}

// AllArms returns DefaultArms and the arms evaluated only when named
// (FailsafeGuarded, KnownStart): the set a list of names picks from.
func AllArms() Arms {
	a := DefaultArms()
	a.Inbound = append(a.Inbound, FailsafeGuarded(), KnownStart())
	return a
}

// guarded is FailsafeGuarded's admitter.
type guarded struct {
	l   adaptivelimiter.AdaptiveLimiter[any]
	slo time.Duration

	mu       sync.Mutex
	cap      float64   // requests allowed in flight by the guard (+Inf: none)
	inflight int       // requests admitted and not done
	n, over  int       // answers this period, and answers past the SLO
	since    time.Time // the period's start
}

func (g *guarded) TryTake() (Permit, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if float64(g.inflight) >= g.cap {
		return nil, false
	}
	p, ok := g.l.TryAcquirePermit()
	if !ok {
		return nil, false
	}
	g.inflight++
	return guardedPermit{g, p}, true
}

func (g *guarded) Stop() {}

type guardedPermit struct {
	g *guarded
	p adaptivelimiter.Permit
}

// Done records the request with failsafe-go, as Failsafe's permit does, and
// with the guard: an answer past the SLO, or a refusal, counts against it.
func (p guardedPermit) Done(o agilelimiter.Outcome, d time.Duration) {
	p.p.Record()
	g := p.g
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight--
	if g.slo == 0 {
		return // no SLO, no guard: failsafe-go alone
	}
	g.n++
	if d > g.slo || o == agilelimiter.Unreachable {
		g.over++
	}
	now := time.Now()
	if now.Sub(g.since) < guardPeriod {
		return
	}
	n := float64(g.n)
	if g.over >= 2 && float64(g.over) > n*guardShare+guardZ*math.Sqrt(n*guardShare*(1-guardShare)) {
		g.cap = math.Max(1, guardCut*math.Min(g.cap, float64(g.inflight+1)))
	} else if !math.IsInf(g.cap, 1) {
		g.cap++
		if g.cap > float64(g.l.Limit()) {
			g.cap = math.Inf(1)
		}
	}
	g.n, g.over, g.since = 0, 0, now
}
