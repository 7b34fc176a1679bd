package compare_test

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
)

// The inbound comparison: a service whose latency rises past a concurrency
// knee (knee requests run at full speed; beyond it they share the cores, so
// each takes base × inFlight/knee), offered 1.5× its capacity. Every arm
// refuses at once when full; what matters is how much it admits inside the
// SLO and how many it turns away.

const (
	kneeSlots   = 10
	kneeBase    = 20 * time.Millisecond
	kneeSLO     = 100 * time.Millisecond
	kneeRun     = 10 * time.Second
	kneeOffered = 1.5 * kneeSlots / 0.020 // req/s: 1.5 × capacity (500 req/s)
)

// admitter is one inbound arm: try reports whether a request may run and
// returns the function to call with its duration when it ends.
type admitter struct {
	name string
	new  func() (try func() (done func(time.Duration), ok bool), stop func())
}

type inboundResult struct {
	offered, admitted, inside int
	p99                       time.Duration
}

func runKnee(a admitter) inboundResult {
	try, stop := a.new()
	defer stop()
	var (
		inflight atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		res      inboundResult
		wg       sync.WaitGroup
	)
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Now()
	gap := float64(time.Second) / kneeOffered
	for time.Since(start) < kneeRun {
		// Poisson arrivals at the offered rate.
		time.Sleep(time.Duration(rng.ExpFloat64() * gap))
		res.offered++
		done, ok := try()
		if !ok {
			continue
		}
		res.admitted++
		n := inflight.Add(1)
		d := time.Duration(float64(kneeBase) * max(1, float64(n)/kneeSlots))
		wg.Go(func() {
			time.Sleep(d)
			inflight.Add(-1)
			done(d)
			mu.Lock()
			lat = append(lat, d)
			if d <= kneeSLO {
				res.inside++
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(lat)
	if len(lat) > 0 {
		res.p99 = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return res
}

func semaphore(n int) admitter {
	return admitter{"semaphore-" + strconv.Itoa(n), func() (func() (func(time.Duration), bool), func()) {
		sem := make(chan struct{}, n)
		release := func(time.Duration) { <-sem }
		return func() (func(time.Duration), bool) {
			select {
			case sem <- struct{}{}:
				return release, true
			default:
				return nil, false
			}
		}, func() {}
	}}
}

func TestInboundKnee(t *testing.T) {
	arms := []admitter{
		{"agile ConcurrencyLimiter", func() (func() (func(time.Duration), bool), func()) {
			l := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200, SLOTarget: kneeSLO, Anchor: agilelimiter.AnchorSLO})
			l.Start()
			done := func(d time.Duration) { l.Release(); l.Observe(d) }
			return func() (func(time.Duration), bool) { return done, l.TryTake() }, l.Stop
		}},
		{"failsafe-go adaptivelimiter", func() (func() (func(time.Duration), bool), func()) {
			l := adaptivelimiter.NewBuilder[any]().WithLimits(1, 200, 20).Build()
			return func() (func(time.Duration), bool) {
				p, ok := l.TryAcquirePermit()
				if !ok {
					return nil, false
				}
				return func(time.Duration) { p.Record() }, true
			}, func() {}
		}},
		semaphore(kneeSlots),
		semaphore(4 * kneeSlots),
		semaphore(20 * kneeSlots),
	}
	res := map[string]inboundResult{}
	for _, a := range arms {
		synctest.Test(t, func(t *testing.T) { res[a.name] = runKnee(a) })
		r := res[a.name]
		t.Logf("%-28s admitted %5.1f%% of %d, goodput %5.1f req/s inside the SLO (%5.1f%% of admitted), p99 %v",
			a.name, 100*float64(r.admitted)/float64(r.offered), r.offered,
			float64(r.inside)/kneeRun.Seconds(), 100*float64(r.inside)/float64(max(r.admitted, 1)), r.p99.Round(time.Millisecond))
	}
	agile, wide := res["agile ConcurrencyLimiter"], res["semaphore-"+strconv.Itoa(20*kneeSlots)]
	if float64(agile.inside) < 0.8*float64(res["semaphore-"+strconv.Itoa(kneeSlots)].inside) {
		t.Errorf("ConcurrencyLimiter served %d inside the SLO, far below a semaphore at the knee (%d)", agile.inside, res["semaphore-"+strconv.Itoa(kneeSlots)].inside)
	}
	// Measured today: 89% of admitted inside the SLO with a 278 ms p99, while
	// failsafe-go's adaptivelimiter keeps 100% inside (p99 58 ms) at the same
	// admission share. The gap is the cold start (doubling to MaxLimit before
	// the latency shows the knee) and the probe overshoot, as in the outbound
	// matrix. This floor catches a regression; it is not the goal.
	if share := float64(agile.inside) / float64(max(agile.admitted, 1)); share < 0.85 {
		t.Errorf("ConcurrencyLimiter: %.1f%% of admitted inside the SLO, below the recorded 85%%", 100*share)
	}
	if wide.inside >= agile.inside {
		t.Errorf("a semaphore 20× past the knee (%d inside) should lose to the adaptive limit (%d)", wide.inside, agile.inside)
	}
}
