package agilelimiter_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// service is a simulated inbound handler whose latency rises once more than
// knee requests run at once: base while under the knee, then growing with the
// square of the overload, as a CPU- or pool-bound service does.
type service struct {
	knee    int
	base    time.Duration
	running atomic.Int64
	peak    atomic.Int64
}

func (s *service) handle() error {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	d := s.base
	if k := float64(n) / float64(s.knee); k > 1 {
		d = time.Duration(float64(d) * k * k)
	}
	time.Sleep(d)
	return nil
}

// swarm is n clients calling do(fn) in a loop until stop, each backing off
// for retry after an error (a refusal, or fn's own).
type swarm struct {
	done chan struct{}
	wg   sync.WaitGroup
	bad  atomic.Int64 // admissions that saw in-flight above the limit
}

func (s *swarm) start(n int, do func(func() error) error, fn func() error, retry time.Duration) *swarm {
	s.done = make(chan struct{})
	for range n {
		s.wg.Go(func() {
			for {
				select {
				case <-s.done:
					return
				default:
				}
				if do(fn) != nil {
					time.Sleep(retry)
				}
			}
		})
	}
	return s
}

// startClients starts n clients of lim, each checking at every admission
// that in-flight is within the limit.
func startClients(n int, lim *agilelimiter.ConcurrencyLimiter, fn func() error, retry time.Duration) *swarm {
	s := &swarm{}
	checked := func(fn func() error) error {
		before := lim.Limit()
		return lim.Do(func() error {
			if in, after := lim.InFlight(), lim.Limit(); in > max(before, after) {
				s.bad.Add(1)
			}
			return fn()
		})
	}
	return s.start(n, checked, fn, retry)
}

// stop ends the clients, waits for them and returns the bad admissions.
func (s *swarm) stop() int64 {
	close(s.done)
	s.wg.Wait()
	return s.bad.Load()
}

// 300 clients retrying after a 429 against a service whose knee is at 20
// requests: the limit settles near the knee (between 0.6N and 3N) and in-flight
// never exceeds the limit.
func TestConcurrencySettlesNearKnee(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const knee = 20
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 500, InitialLimit: 5})
		lim.Start()
		defer lim.Stop()
		svc := &service{knee: knee, base: 10 * time.Millisecond}
		sw := startClients(300, lim, svc.handle, 20*time.Millisecond)
		time.Sleep(20 * time.Second)
		var sum, n, lo, hi int
		lo = 1 << 30
		sampleEvery(10*time.Second, func(int) {
			l := lim.Limit()
			sum += l
			n++
			lo, hi = min(lo, l), max(hi, l)
		})
		avg := float64(sum) / float64(n)
		st := lim.Stats()
		t.Logf("limit over the last 10s: avg %.1f, range [%d, %d]; service peak %d; admitted %d, refused %d; baseline %v high %v p50 %v",
			avg, lo, hi, svc.peak.Load(), st.Admitted, st.RejectedOverload, st.Baseline, st.High, st.P50)
		if avg < 0.6*knee || avg > 3*knee {
			t.Errorf("average limit %.1f; want between %d and %d", avg, knee*6/10, 3*knee)
		}
		if n := sw.bad.Load(); n > 0 {
			t.Errorf("%d admissions saw in-flight above the limit", n)
		}
		if st.RejectedOverload == 0 {
			t.Error("no refusals: the test never pushed the limit")
		}
		sw.stop()
	})
}

// With spare capacity and enough demand the limit grows to the ceiling.
func TestConcurrencyGrowsWithDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 200, InitialLimit: 4})
		lim.Start()
		defer lim.Stop()
		svc := &service{knee: 1 << 20, base: 10 * time.Millisecond}
		sw := startClients(400, lim, svc.handle, 5*time.Millisecond)
		time.Sleep(5 * time.Second)
		t.Logf("limit after 5s: %d (from 4, ceiling 200)", lim.Limit())
		if lim.Limit() != 200 {
			t.Errorf("limit %d; want the ceiling 200", lim.Limit())
		}
		sw.stop()
	})
}

// A limit that is not used up learns nothing about the region above it:
// three concurrent requests against a limit of 20 for 20 s leave it at 20.
func TestConcurrencyNoGrowthWhileUnused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 100, InitialLimit: 20})
		lim.Start()
		defer lim.Stop()
		svc := &service{knee: 1 << 20, base: 10 * time.Millisecond}
		sw := startClients(3, lim, svc.handle, 5*time.Millisecond)
		highest := 0
		sampleEvery(20*time.Second, func(int) { highest = max(highest, lim.Limit()) })
		st := lim.Stats()
		t.Logf("highest limit %d over 20s with 3 concurrent; last decision %q, peak in flight %d", highest, st.Decision, st.PeakInFlight)
		if highest != 20 {
			t.Errorf("limit rose to %d with demand of 3; want it to stay at 20", highest)
		}
		if st.Decision != "idle" || st.PeakInFlight != 3 {
			t.Errorf("decision %q peak %d; want idle and 3", st.Decision, st.PeakInFlight)
		}
		sw.stop()
	})
}

var errShed = errors.New("pool exhausted")

// shedding returns a limiter at 100 of MaxLimit 200 whose Classify reads
// errShed, a handler's instant failure for lack of capacity, as Unreachable.
func shedding(minLimit int) *agilelimiter.ConcurrencyLimiter {
	return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MinLimit: minLimit, MaxLimit: 200, InitialLimit: 100, SLOTarget: 100 * time.Millisecond,
		Classify: func(err error) agilelimiter.Outcome {
			if errors.Is(err, errShed) {
				return agilelimiter.Unreachable
			}
			return agilelimiter.Reached
		},
	})
}

// Handlers that fail instantly because a pool ran dry, classified
// Unreachable, drive the limit to MinLimit instead of reading as a fast,
// healthy service.
func TestConcurrencyInstantFailuresBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := shedding(2)
		lim.Start()
		defer lim.Stop()
		sw := startClients(150, lim, func() error { return errShed }, 10*time.Millisecond)
		time.Sleep(3 * time.Second)
		t.Logf("limit after 3s of instant failures: %d (from 100)", lim.Limit())
		if lim.Limit() != 2 {
			t.Errorf("limit %d; want MinLimit 2", lim.Limit())
		}
		sw.stop()
	})
}

// A refusal comes back at once, so a slot it freed at once would let an
// outage be hit at the refusal's own pace however low the limit: each request
// the service refused keeps its slot until the next tick. After the limit has
// backed off to MinLimit, the shedding handler sees at most MinLimit requests
// a tick (150 clients retrying every 10 ms sent it 29,818 in two seconds with
// slots freed at once).
func TestConcurrencyRefusalsKeepTheirSlotsUntilTheTick(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const minLimit = 2
		lim := shedding(minLimit)
		lim.Start()
		defer lim.Stop()
		var shed atomic.Int64
		sw := startClients(150, lim, func() error { shed.Add(1); return errShed }, 10*time.Millisecond)
		time.Sleep(time.Second)
		before := shed.Load()
		const window = 2 * time.Second
		time.Sleep(window)
		got, most := shed.Load()-before, int64(minLimit)*int64(window/agilelimiter.DefaultTickInterval+1)
		t.Logf("%d refused requests admitted in %v at limit %d (at most %d)", got, window, lim.Limit(), most)
		if got > most {
			t.Errorf("%d refused requests admitted in %v; want at most %d (MinLimit a tick)", got, window, most)
		}
		if got == 0 {
			t.Errorf("no request admitted in %v: the limiter must keep probing", window)
		}
		if bad := sw.stop(); bad > 0 {
			t.Errorf("%d admissions above the limit", bad)
		}
	})
}

// A slot kept for a refusal comes back at the next tick, or at Stop; a
// limiter whose controller does not run keeps none, since nothing would give
// it back. Unavailable, Record and Do keep it alike.
func TestConcurrencyKeptSlotsComeBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		newLim := func() *agilelimiter.ConcurrencyLimiter {
			return agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
				MinLimit: 1, MaxLimit: 1, InitialLimit: 1,
				Classify: func(error) agilelimiter.Outcome { return agilelimiter.Unreachable },
			})
		}
		refuse := map[string]func(*agilelimiter.ConcurrencyLimiter){
			"Unavailable": func(l *agilelimiter.ConcurrencyLimiter) {
				l.TryTake()
				l.Unavailable()
				l.Release()
			},
			"Record": func(l *agilelimiter.ConcurrencyLimiter) {
				l.TryTake()
				l.Record(agilelimiter.Unreachable, time.Millisecond)
				l.Release()
			},
			"Do": func(l *agilelimiter.ConcurrencyLimiter) { _ = l.Do(func() error { return errShed }) },
		}
		for name, refuse := range refuse {
			idle := newLim()
			refuse(idle)
			if idle.InFlight() != 0 {
				t.Errorf("%s, controller not started: %d in flight; want 0", name, idle.InFlight())
			}

			lim := newLim()
			lim.Start()
			refuse(lim)
			if lim.InFlight() != 1 || lim.TryTake() {
				t.Errorf("%s: %d in flight after the refusal; want its slot kept (1) and the next request refused", name, lim.InFlight())
			}
			time.Sleep(agilelimiter.DefaultTickInterval)
			synctest.Wait()
			if lim.InFlight() != 0 || !lim.TryTake() {
				t.Errorf("%s: %d in flight after a tick; want the kept slot back", name, lim.InFlight())
			} else {
				lim.Release()
			}
			refuse(lim)
			lim.Stop()
			if lim.InFlight() != 0 {
				t.Errorf("%s: %d in flight after Stop; want the kept slot back", name, lim.InFlight())
			}
			refuse(lim)
			if lim.InFlight() != 0 {
				t.Errorf("%s after Stop: %d in flight; want none kept", name, lim.InFlight())
			}
		}
	})
}

// A Release without a matching TryTake panics and leaves the capacity as it
// was; Do pairs its own.
func TestUnpairedRelease(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: 2, MaxLimit: 2, InitialLimit: 2})
	func() {
		defer func() {
			r := recover()
			if r == nil {
				t.Fatal("unpaired Release did not panic")
			}
			t.Logf("panic: %v", r)
		}()
		lim.Release()
	}()
	if lim.InFlight() != 0 {
		t.Errorf("in flight %d after the bad Release; want 0", lim.InFlight())
	}
	got := 0
	for lim.TryTake() {
		got++
		if got > 10 {
			break
		}
	}
	if got != 2 {
		t.Errorf("%d slots after an unpaired Release; want 2 (capacity must not rise)", got)
	}
	if err := lim.Do(func() error { return nil }); !errors.Is(err, agilelimiter.ErrOverloaded) {
		t.Errorf("Do at the limit = %v; want ErrOverloaded", err)
	}
	lim.Release()
	lim.Release()
	if lim.InFlight() != 0 {
		t.Errorf("in flight %d", lim.InFlight())
	}
}

// Do releases the slot when fn panics, and the panic propagates.
func TestConcurrencyDoPanic(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1, MinLimit: 1})
	func() {
		defer func() {
			if r := recover(); r != "boom" {
				t.Fatalf("recovered %v; want the handler's own panic value", r)
			}
		}()
		_ = lim.Do(func() error { panic("boom") })
	}()
	if lim.InFlight() != 0 {
		t.Fatalf("in flight %d after a panic; want 0", lim.InFlight())
	}
	if err := lim.Do(func() error { return nil }); err != nil {
		t.Errorf("Do after the panic = %v", err)
	}
}

// The ceiling holds whatever the latencies do: chaos latencies with the
// controller pushed to grow, 500 clients, and the service never sees more
// than MaxLimit at once. A client refused tries again 5 ms later: 100,000
// tries a second against a limit that turns over a few hundred times a
// second keeps it at the ceiling (peak 50 of 50), as a retry of 1 ms did at
// five times the test's cost under -race (27 s against 4 s).
func TestConcurrencyCeilingUnderChaos(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const maxLimit = 50
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: maxLimit, InitialLimit: 10})
		lim.Start()
		defer lim.Stop()
		var mu sync.Mutex
		seed := uint64(7)
		var running, peak atomic.Int64
		chaos := func() error {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			mu.Lock()
			seed = seed*6364136223846793005 + 1442695040888963407
			d := time.Duration(seed>>33%300) * time.Millisecond
			mu.Unlock()
			time.Sleep(d)
			return nil
		}
		sw := startClients(500, lim, chaos, 5*time.Millisecond)
		time.Sleep(20 * time.Second)
		bad := sw.stop()
		t.Logf("peak concurrency %d, ceiling %d", peak.Load(), maxLimit)
		if peak.Load() > maxLimit {
			t.Errorf("peak %d above MaxLimit %d", peak.Load(), maxLimit)
		}
		if peak.Load() < maxLimit/2 {
			t.Errorf("peak %d: the test never pushed toward the ceiling", peak.Load())
		}
		if bad > 0 {
			t.Errorf("%d admissions above the limit", bad)
		}
	})
}

// When the limit shrinks below what is in flight nothing is cancelled: new
// requests are refused until the work drains below the new limit.
func TestConcurrencyShrinkDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10, InitialLimit: 10, SLOTarget: 50 * time.Millisecond})
		lim.Start()
		defer lim.Stop()
		release := make(chan struct{})
		var wg sync.WaitGroup
		for range 10 {
			if !lim.TryTake() {
				t.Fatal("TryTake under the limit failed")
			}
			wg.Go(func() {
				<-release
				lim.Observe(time.Second) // far above the SLO
				lim.Release()
			})
		}
		close(release)
		wg.Wait()
		for range 10 {
			lim.Observe(time.Second)
		}
		if !lim.TryTake() {
			t.Fatal("slot not free after the release")
		}
		// A round closes after a round trip of answers, or half a second: all
		// of them past the SLO cut the limit to 0.7 of the 10 in flight.
		time.Sleep(600 * time.Millisecond)
		if lim.Limit() != 7 {
			t.Fatalf("limit %d after a round above the SLO; want 7", lim.Limit())
		}
		for range 6 {
			if !lim.TryTake() {
				t.Fatal("TryTake under the new limit failed")
			}
		}
		if lim.TryTake() {
			t.Error("admitted an 8th request at a limit of 7")
		}
		for range 7 {
			lim.Release()
		}
	})
}
