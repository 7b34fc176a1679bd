package agilelimiter_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// A level shift is not a queue. The dependency's latency steps from 20 to
// 50 ms with its capacity unchanged. The window law reads the 30 ms as a
// queue and narrows the window, but the floor is measured again at the next
// floor period of the clock (every 5 s), where a queue of the limiter's own
// would have drained and this one does not: the floor is re-learnt and the
// rate restored within 10 s, under either anchor (the anchor only places
// refusals). The step comes 2.5 s after a floor period, not on one.
func TestLevelShiftIsNotAQueue(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, anchor agilelimiter.Anchor) (before, lowest float64, back time.Duration) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 500, SLOTarget: 200 * time.Millisecond, Anchor: anchor})
			lim.Start()
			defer lim.Stop()
			var rates []float64
			time.Sleep(2500 * time.Millisecond)
			before = levelShift(lim, 15*time.Second, func(int) { rates = append(rates, lim.Rate()) })
			lowest, back = before, -1
			for i, r := range rates {
				lowest = math.Min(lowest, r)
				if back < 0 && lowest < before && r >= 0.8*before {
					back = time.Duration(i) * tick
				}
			}
			t.Logf("%v: %.1f req/s at 20 ms, lowest %.1f after the step to 50 ms, back to ≥ 80%% %v after it; floor now %v",
				anchor, before, lowest, back, lim.Stats().Baseline)
		})
		return before, lowest, back
	}
	for _, anchor := range []agilelimiter.Anchor{agilelimiter.AnchorBaseline, agilelimiter.AnchorSLO} {
		t.Run(anchor.String(), func(t *testing.T) {
			before, lowest, back := run(t, anchor)
			if before != 500 {
				t.Errorf("rate %.1f before the step; want the ceiling, 500", before)
			}
			if lowest < before && (back < 0 || back > 10*time.Second) {
				t.Errorf("back to 80%% of %.1f req/s %v after the step (lowest %.1f); want within 10 s", before, back, lowest)
			}
		})
	}
}

// kneeRun drives a fresh ConcurrencyLimiter (MaxLimit 200, SLO 100 ms, all
// else default) with a burst of n requests at once on svc, then, if clients
// is above zero, with that many closed-loop clients for d, and returns the
// burst's refusals, the requests answered inside the SLO and those admitted
// after the burst, and the limit one second in.
func kneeRun(t *testing.T, svc *service, n, clients int, d time.Duration) (burstRefused, inside, admitted int64, limitAt1s int) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200, SLOTarget: 100 * time.Millisecond})
	lim.Start()
	defer lim.Stop()
	var wg sync.WaitGroup
	var refused atomic.Int64
	for range n {
		wg.Go(func() {
			if lim.Do(svc.handle) == agilelimiter.ErrOverloaded {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	if clients == 0 {
		return refused.Load(), 0, 0, lim.Limit()
	}
	var in, adm atomic.Int64
	stop := make(chan struct{})
	timed := func() error {
		start := time.Now()
		err := svc.handle()
		adm.Add(1)
		if time.Since(start) <= 100*time.Millisecond {
			in.Add(1)
		}
		return err
	}
	sw := startClients(clients, lim, timed, 10*time.Millisecond)
	time.Sleep(time.Second)
	limitAt1s = lim.Limit()
	time.Sleep(d - time.Second)
	close(stop)
	if bad := sw.stop(); bad > 0 {
		t.Errorf("%d admissions saw in-flight above the limit", bad)
	}
	return refused.Load(), in.Load(), adm.Load(), limitAt1s
}

// A service that just started and whose handler serves a burst of 100
// concurrent requests inside the SLO gets them all: the limit starts at half
// the ceiling. A service whose knee is far lower, hit by the same burst and
// then by 300 clients, is brought to its knee within a second, and keeps
// ≥ 95% inside the SLO at ≥ 0.85 of the best fixed limit's goodput
// (2000 req/s at 20 in flight) over 30 s.
func TestColdBurst(t *testing.T) {
	t.Parallel()
	t.Run("fast service", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			refused, _, _, _ := kneeRun(t, &service{knee: 1000, base: 10 * time.Millisecond}, 100, 0, 0)
			if refused != 0 {
				t.Errorf("a cold burst of 100 on a service that takes it: %d refused, want 0", refused)
			}
		})
	})
	t.Run("knee at 20", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const run = 30 * time.Second
			svc := &service{knee: 20, base: 10 * time.Millisecond}
			_, inside, admitted, at1s := kneeRun(t, svc, 100, 300, run)
			goodput := float64(inside) / run.Seconds()
			share := float64(inside) / float64(max(admitted, 1))
			t.Logf("knee 20: limit %d one second in; %.1f%% inside the SLO, goodput %.0f req/s (%.2f of the best fixed limit's 2000)",
				at1s, 100*share, goodput, goodput/2000)
			if at1s > 40 {
				t.Errorf("limit %d one second after the burst; want at most twice the knee", at1s)
			}
			if share < 0.95 || goodput < 0.85*2000 {
				t.Errorf("%.1f%% inside, goodput %.0f req/s; want ≥ 95%% and ≥ %.0f", 100*share, goodput, 0.85*2000)
			}
		})
	})
}

// Three limiters share one dependency (20 ms, 300 req/s), each behind 64
// closed-loop callers, started 7 s apart as in TestFairShares. None of them
// can tell the others' queue from a dependency that got slower: a floor
// re-anchored on the latency one limiter's cut left behind ratcheted up with
// every cut (20 → 170 ms within 20 s, then 654 ms with every limiter idle
// far above its share). The shared queue must stay a queue: over the last
// 30 s the median round trip is within the window AnchorBaseline keeps,
// twice the unloaded latency (20 ms outside the server and 3.3 ms in it),
// every floor is the unloaded latency, and the shares are fair. Until the
// thirty-third session the bar was twice the 20 ms alone and 5% for the
// pace's slack, 42 ms; the law then met it with no margin (over 100 runs a
// median of 40.2 ms, 41.6 at most: the order in which the bubble runs
// goroutines at one instant moves it), and since Vegas keeps √n of each
// limiter's calls in service queued, three limiters keep more than one
// would (40.1–42.9 ms over 300 runs, 41.9 at the 95th percentile).
func TestSharedQueueIsNotALevelShift(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		_, call := dependency(300, 20*time.Millisecond)
		var (
			mu      sync.Mutex
			measure bool
			lat     []time.Duration
		)
		timed := func() error {
			start := time.Now()
			err := call()
			mu.Lock()
			if measure {
				lat = append(lat, time.Since(start))
			}
			mu.Unlock()
			return err
		}
		const window = 30 * time.Second
		rates, lims := sharing(window, func(lim *agilelimiter.Limiter) { _ = lim.Do(timed) }, func(on bool) {
			mu.Lock()
			measure = on
			mu.Unlock()
		})
		slices.Sort(lat)
		median := lat[len(lat)/2]
		j := jain(rates...)
		t.Logf("last %v: median round trip %v, rates %.1f %.1f %.1f req/s, Jain %.3f; floors %v %v %v",
			window, median, rates[0], rates[1], rates[2], j, lims[0].Stats().Baseline, lims[1].Stats().Baseline, lims[2].Stats().Baseline)
		if j < 0.95 {
			t.Errorf("Jain fairness %.3f; want ≥ 0.95", j)
		}
		if window := 2 * (20*time.Millisecond + time.Second/300); median > window {
			t.Errorf("median round trip %v; want inside the window, %v", median, window)
		}
		for i, l := range lims {
			if b := l.Stats().Baseline; b > 30*time.Millisecond {
				t.Errorf("limiter %d: floor %v; want the unloaded 20 ms, not the shared queue", i, b)
			}
		}
	})
}

// A lull is not a breach. Forty closed-loop clients keep a ConcurrencyLimiter
// busy on a 10 ms handler; two requests that take 3 s go in just before the
// traffic stops. Once they are older than the SLO they are all that is in
// flight, two of two past it, but nobody is waiting for a slot and nothing
// new goes in: the window is not what their lateness answers, and it must
// still be there when the traffic comes back (a cut read from them alone took
// a window of 78 to one call in development in-142).
func TestALullWithSlowCallsOutKeepsTheWindow(t *testing.T) {
	t.Parallel()
	call := func(d time.Duration) func() error {
		return func() error { time.Sleep(d); return nil }
	}
	// lull runs 40 closed-loop clients through do for 10 s, then the two
	// slow calls, then stops the clients, and returns the limit before the
	// lull, 2 s into it, and what was in flight then.
	lull := func(do func(func() error) error, limit func() float64, inFlight func() int) (before, during float64, out int) {
		clients := (&swarm{}).start(40, do, call(10*time.Millisecond), 5*time.Millisecond)
		time.Sleep(10 * time.Second)
		var slow sync.WaitGroup
		for range 2 {
			slow.Go(func() { _ = do(call(3 * time.Second)) })
		}
		time.Sleep(5 * time.Millisecond)
		clients.stop()
		before = limit()
		time.Sleep(2 * time.Second) // the two are 2 s past the SLO, and still out
		during, out = limit(), inFlight()
		slow.Wait()
		return before, during, out
	}
	t.Run("ConcurrencyLimiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200, SLOTarget: 100 * time.Millisecond})
			lim.Start()
			defer lim.Stop()
			before, during, out := lull(lim.Do, func() float64 { return float64(lim.Limit()) }, lim.InFlight)
			t.Logf("limit %.0f with the traffic, %.0f in the lull with %d calls out past the SLO", before, during, out)
			if out != 2 {
				t.Fatalf("%d calls in flight in the lull; want the two slow ones", out)
			}
			if before < 20 || during < before/2 {
				t.Errorf("limit %.0f in the lull, %.0f before it; want at least 20 before and half of it after", during, before)
			}
		})
	})
	t.Run("Limiter", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 10000, SLOTarget: 100 * time.Millisecond})
			lim.Start()
			defer lim.Stop()
			var out atomic.Int64
			do := func(fn func() error) error {
				return lim.Do(func() error { out.Add(1); defer out.Add(-1); return fn() })
			}
			before, during, n := lull(do, lim.Rate, func() int { return int(out.Load()) })
			t.Logf("rate %.0f/s with the traffic, %.0f/s in the lull with %d calls out past the SLO", before, during, n)
			if n != 2 {
				t.Fatalf("%d calls in flight in the lull; want the two slow ones", n)
			}
			if before < 1000 || during < before/2 {
				t.Errorf("rate %.0f/s in the lull, %.0f/s before it; want at least 1000 before and half of it after", during, before)
			}
		})
	})
}

// After an outage the window is one call, in startup, and the first call the
// dependency takes back is slow: a report, or a request that waited out the
// outage. It holds the only slot, and no answer can come to restart the ack
// clock while it does (development in-119: 8 s at one call, four workers
// idle, every other request refused). Once it is the whole window and older
// than the SLO, with callers waiting, one more call goes out, and the
// service is back within a second, not when the slow call ends.
func TestAnOutagesFirstSlowCallDoesNotHoldTheWindow(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
			MaxLimit: 50, SLOTarget: 100 * time.Millisecond, Classify: classifyRefused,
		})
		lim.Start()
		defer lim.Stop()
		var down, slowNext atomic.Bool
		var fast atomic.Int64
		resource := func() error {
			switch {
			case down.Load():
				time.Sleep(time.Millisecond)
				return agiletest.ErrRefused
			case slowNext.CompareAndSwap(true, false):
				time.Sleep(5 * time.Second)
			default:
				time.Sleep(20 * time.Millisecond)
				fast.Add(1)
			}
			return nil
		}
		clients := (&swarm{}).start(30, lim.Do, resource, 5*time.Millisecond)
		defer clients.stop()
		time.Sleep(5 * time.Second)
		down.Store(true)
		time.Sleep(2 * time.Second)
		slowNext.Store(true)
		down.Store(false)
		time.Sleep(500 * time.Millisecond)
		n0 := fast.Load()
		time.Sleep(2 * time.Second)
		served, limit := fast.Load()-n0, lim.Limit()
		t.Logf("after the outage, %d fast calls answered from 0.5 s to 2.5 s; limit %d, %d in flight", served, limit, lim.InFlight())
		// 30 clients at 20 ms a call: 1,500 a second once the window
		// holds them all; none while the slow call holds a window of one.
		if served < 1000 || limit < 30 {
			t.Errorf("%d fast calls answered in the 2 s after the outage, limit %d; want at least 1000, and 30", served, limit)
		}
	})
}

// A resource that gets slower holds as many calls as before. Twenty
// workers in front of a FIFO queue take 20 ms a request, then 50 ms for 2 s
// (a capacity of 1000 → 400 a second, the workers unchanged), and so on in
// turn for 80 s, under 80 closed-loop clients: the window that kept the
// workers busy is still the one that does. Vegas reads the slower calls as
// a queue and narrows; once a narrower window has left the wait, the law
// holds, and then widens the window again above the wait it accepted. In
// the second half of the slow phases the limit must be back near where the
// fast phases hold it: 0.84–0.93 of it over runs, against 0.69–0.74 when
// it was held at the window the narrowing left (AGILELIMITER_ABLATE=accept).
// The runs differ by the order of calls that arrive at one instant.
func TestASlowerResourceGetsItsWindowBack(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100, SLOTarget: 300 * time.Millisecond})
		lim.Start()
		defer lim.Stop()
		var (
			mu   sync.Mutex
			fifo = agiletest.NewFIFO(20)
			slow bool
		)
		call := func() error {
			mu.Lock()
			d := 20 * time.Millisecond
			if slow {
				d = 50 * time.Millisecond
			}
			_, end := fifo.Admit(time.Now(), func(time.Time) time.Duration { return d })
			mu.Unlock()
			time.Sleep(time.Until(end))
			return nil
		}
		clients := (&swarm{}).start(80, lim.Do, call, 5*time.Millisecond)
		defer clients.stop()
		var sum [2]float64 // the limits sampled in fast and in slow phases
		var n [2]int
		for phase := range 40 {
			mu.Lock()
			slow = phase%2 == 1
			mu.Unlock()
			for i := range 20 {
				time.Sleep(100 * time.Millisecond)
				if phase < 2 || i < 10 {
					continue // startup, and each phase's first second
				}
				sum[phase%2] += float64(lim.Limit())
				n[phase%2]++
			}
		}
		f, s := sum[0]/float64(n[0]), sum[1]/float64(n[1])
		t.Logf("limit in the fast phases %.1f, in the slow ones %.1f (%.2f of it)", f, s, s/f)
		if s < 0.8*f {
			t.Errorf("limit %.1f in the second half of the slow phases, %.2f of the fast phases' %.1f; want ≥ 0.8: the workers are the same", s, s/f, f)
		}
	})
}

// A service whose dear route is past the SLO on its own is not cut for it.
// Eight workers take 33 ms a call on average (exponential), and one call in
// sixteen is a report 57 times dearer, 1.9 s, three times the 630 ms SLO:
// about 4% of the answers are past the SLO at any window, and at 36 calls a
// second (two thirds of the capacity) about one call in five waits for a
// worker (Erlang's C). The law learns that tail, and judges each round
// against it by its exact binomial tail. By the normal bound, two answers of
// eight past the SLO over a tail of 2–3% read as a breach, which a round
// within the tail shows 10–22 times in a thousand, and the window was cut
// every few seconds. Over 16 seeds of the arrivals and costs, after the first
// 5 s, the median seed must refuse at most 6% of the requests and the twelfth
// at most 10% (3.9% and 5.8% with the exact tail, 9.1% and 15.3% without;
// AGILELIMITER_ABLATE=exact-tail). The worst seed still refuses 17% (25%
// without): there a round closed at half a second on reports alone reads
// seconds of queue, and Vegas halves a window of ten; the SLO test and the
// floor probe take it lower (docs/controller-rewrite.md, forty-ninth session).
func TestADearRouteOfItsOwnIsNotCutFor(t *testing.T) {
	t.Parallel()
	const (
		seeds = 16
		slo   = 630 * time.Millisecond
		run   = 40 * time.Second
		warm  = 5 * time.Second
	)
	shares := make([]float64, seeds)
	for seed := range uint64(seeds) {
		synctest.Test(t, func(t *testing.T) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 51, SLOTarget: slo})
			lim.Start()
			defer lim.Stop()
			// Every request's cost and the gap before the next are drawn
			// here, in arrival order, so that the order in which the bubble
			// runs goroutines that wake at one instant does not change them.
			rng := rand.New(rand.NewPCG(seed, 2))
			exp := func(mean time.Duration) time.Duration {
				return time.Duration(rng.ExpFloat64() * float64(mean))
			}
			workers := make(chan struct{}, 8)
			var offered, refused, inside atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for time.Since(start) < run {
				d := exp(33 * time.Millisecond)
				if rng.Float64() < 1.0/16 {
					d *= 57
				}
				counted := time.Since(start) >= warm
				wg.Go(func() {
					t0 := time.Now()
					err := lim.Do(func() error {
						workers <- struct{}{}
						time.Sleep(d)
						<-workers
						return nil
					})
					if !counted {
						return
					}
					offered.Add(1)
					if err != nil {
						refused.Add(1)
					} else if time.Since(t0) <= slo {
						inside.Add(1)
					}
				})
				time.Sleep(exp(time.Second / 36))
			}
			wg.Wait()
			shares[seed] = float64(refused.Load()) / float64(offered.Load())
			t.Logf("seed %d: %d of %d requests refused after the first %v, %d answered inside the SLO; limit %d",
				seed, refused.Load(), offered.Load(), warm, inside.Load(), lim.Limit())
		})
	}
	slices.Sort(shares)
	median, upper := (shares[seeds/2-1]+shares[seeds/2])/2, shares[seeds*3/4-1]
	t.Logf("refused: median %.1f%%, twelfth of 16 seeds %.1f%%, worst %.1f%%", 100*median, 100*upper, 100*shares[seeds-1])
	if median > 0.06 || upper > 0.10 {
		t.Errorf("refused a median %.1f%% of the requests, %.1f%% on the twelfth of 16 seeds; want at most 6%% and 10%%", 100*median, 100*upper)
	}
}
