package agileredis_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	agileredis "github.com/agilelimiter/agilelimiter/redis"
	"github.com/redis/go-redis/v9"
)

// These tests run in real time (sockets do not work in a synctest bubble):
// each lasts a few seconds and asserts with tolerances a loaded two-core
// machine keeps.

// instance is one service instance: its gate and the limiter it gates.
type instance struct {
	gate *agileredis.Gate
	lim  *agilelimiter.Limiter
}

// newInstances makes n instances sharing the quota key at rate, each with
// a client of its own and a Limiter of cfg with the gate in it.
func newInstances(t *testing.T, addr, key string, rate float64, n int, cfg agilelimiter.Config) []instance {
	t.Helper()
	var out []instance
	for range n {
		g, err := agileredis.New(agileredis.Config{Client: newClient(t, addr), Key: key, Rate: rate, Instances: n})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = g.Close() })
		c := cfg
		c.Gate = g
		out = append(out, instance{g, agilelimiter.New(c)})
	}
	return out
}

// hammer runs callers goroutines per instance calling call in a tight loop
// for d, recording each admission, and returns the admissions of each.
func hammer(insts []instance, callers int, d time.Duration, call func(ctx context.Context, i instance) error) [][]time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	recs := make([]recorder, len(insts))
	var wg sync.WaitGroup
	for k, in := range insts {
		for range callers {
			wg.Go(func() {
				for ctx.Err() == nil {
					err := call(ctx, in)
					if err == nil {
						recs[k].add(time.Now())
					} else if errors.Is(err, agilelimiter.ErrDeadline) {
						return // no slot is left before the run's end
					}
				}
			})
		}
	}
	wg.Wait()
	out := make([][]time.Time, len(insts))
	for k := range recs {
		out[k] = recs[k].all()
	}
	return out
}

func take(ctx context.Context, in instance) error {
	_, err := in.lim.TakeContext(ctx)
	return err
}

// Four limiters of MaxRate 100 share a quota of 200 calls a second: their
// callers in tight loops together never get more than 200 in any one-second
// window (5% allowed over), and get close to it.
func TestSharedQuota(t *testing.T) {
	addr := redisAddr(t)
	const quota, n, run = 200.0, 4, 3 * time.Second
	// InitialRate at MaxRate: the limiters are not started (nothing is
	// measured here), so their buckets stay at 100/s and the gate binds.
	insts := newInstances(t, addr, uniqueKey(t), quota, n, agilelimiter.Config{MaxRate: 100, InitialRate: 100})
	start := time.Now()
	per := hammer(insts, 8, run, take)
	elapsed := time.Since(start)

	var all []time.Time
	for k, ts := range per {
		all = append(all, ts...)
		t.Logf("instance %d: %d admissions (%.0f/s), gate %+v", k, len(ts), float64(len(ts))/elapsed.Seconds(), insts[k].gate.Stats())
	}
	most, at := maxInWindow(all, time.Second)
	t.Logf("%d admissions in %v (%.0f/s); the most in any 1 s window: %d (from +%v), quota %v",
		len(all), elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds(), most, at.Sub(start).Round(time.Millisecond), quota)
	if most > allowed(quota) {
		t.Errorf("%d admissions in one 1 s window; the quota is %v (5%% allowed over: %d)", most, quota, allowed(quota))
	}
	if got := float64(len(all)) / elapsed.Seconds(); got < 0.85*quota {
		t.Errorf("together %.0f admissions/s; want at least 85%% of the quota %v", got, quota)
	}
	for k, ts := range per {
		if got := float64(len(ts)) / elapsed.Seconds(); got < 0.5*quota/n {
			t.Errorf("instance %d got %.0f/s; want at least half its fair share %v", k, got, quota/n)
		}
		if st := insts[k].gate.Stats(); st.Outages != 0 {
			t.Errorf("instance %d saw %d outages: %+v", k, st.Outages, st)
		}
	}
}

// A batch's slots are handed out 1/Rate apart, never at once: 30 callers on
// a gate reserving 25 slots a call get at most Rate·0.2 (+2) slots in any
// 200 ms.
func TestBatchIsPaced(t *testing.T) {
	addr := redisAddr(t)
	g, err := agileredis.New(agileredis.Config{Client: newClient(t, addr), Key: uniqueKey(t), Rate: 50, Batch: 25, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	// The gate's first reservation dials and loads the script; on a busy
	// machine it can come back past even its stretched Timeout, a blip in
	// which the gate paces locally until the answer comes (one run in about
	// twenty-five: 1 call, 30 fallback grants). The callers are to meet a
	// gate on Redis: one call through it first.
	for warm := time.Now(); g.Stats().Granted == 0; {
		if time.Since(warm) > 5*time.Second {
			t.Fatalf("no grant from Redis in 5 s: %+v", g.Stats())
		}
		wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
		_ = g.Acquire(wctx, time.Time{})
		wcancel()
	}
	st0 := g.Stats()
	ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
	defer cancel()
	var rec recorder
	var wg sync.WaitGroup
	// The 30 callers start together: created one by one on a loaded
	// machine, they arrived over several Redis round trips, and each
	// reservation saw only a few of them waiting (6 calls, where 3 is usual).
	start := make(chan struct{})
	for range 30 {
		wg.Go(func() {
			<-start
			if g.Acquire(ctx, time.Time{}) == nil {
				rec.add(time.Now())
			}
		})
	}
	time.Sleep(20 * time.Millisecond)
	close(start)
	wg.Wait()
	ts := rec.all()
	most, _ := maxInWindow(ts, 200*time.Millisecond)
	st := g.Stats()
	t.Logf("%d granted, the most in 200 ms: %d; %+v", len(ts), most, st)
	if most > 12 {
		t.Errorf("%d calls in one 200 ms window from a gate at 50/s; want at most 12 (10 and jitter)", most)
	}
	if reserved, calls := st.Reserved-st0.Reserved, st.RedisCalls-st0.RedisCalls; reserved < 25 || calls > 5 {
		t.Errorf("reserved %d slots in %d calls; want batches of 25 (30 callers waiting)", reserved, calls)
	}
}

// A call whose turn would come after its cutoff is refused at once with
// ErrDeadline and reserves nothing; a caller whose context ends while it
// waits gets ctx.Err().
func TestDeadline(t *testing.T) {
	addr := redisAddr(t)
	client := newClient(t, addr)
	key := uniqueKey(t)
	g, err := agileredis.New(agileredis.Config{Client: client, Key: key, Rate: 1, Instances: 1}) // a slot a second
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx := context.Background()
	if err := g.Acquire(ctx, time.Time{}); err != nil {
		t.Fatalf("first Acquire: %v", err)
	}
	tat := func() float64 {
		v, err := client.Get(ctx, key).Float64()
		if err != nil {
			t.Fatalf("GET %s: %v", key, err)
		}
		return v
	}
	before := tat()

	// The next slot is a second away: a cutoff in 100 ms cannot be met.
	if err := g.Acquire(ctx, time.Now().Add(100*time.Millisecond)); !errors.Is(err, agilelimiter.ErrDeadline) {
		t.Fatalf("Acquire with a cutoff before the next slot: %v; want ErrDeadline", err)
	}
	// A second gate, which has seen nothing, asks Redis, which refuses.
	g2, err := agileredis.New(agileredis.Config{Client: client, Key: key, Rate: 1, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if err := g2.Acquire(ctx, time.Now().Add(100*time.Millisecond)); !errors.Is(err, agilelimiter.ErrDeadline) {
		t.Fatalf("second gate, Acquire with a cutoff before the next slot: %v; want ErrDeadline", err)
	}
	if after := tat(); after != before {
		t.Errorf("the refused calls moved the quota's TAT by %.0f µs; want no reservation", after-before)
	}
	if st := g2.Stats(); st.Refused != 1 || st.Reserved != 0 || st.RedisCalls != 1 {
		t.Errorf("second gate: %+v; want one call to Redis, refused, nothing reserved", st)
	}
	if ttl := client.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 2*time.Second+100*time.Millisecond {
		t.Errorf("key TTL %v; want the reservation's end (≤ 1 s away) plus a second", ttl)
	}

	// No cutoff, but a context that ends first.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := g.Acquire(cctx, time.Time{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with a context ending before the slot: %v; want context.DeadlineExceeded", err)
	}
}

// Each limiter adapts below its share of the quota when the dependency is
// slower than that share: the adaptive limit binds, not the gate. Each
// instance is admitted well below its share, and the dependency's queue
// stays short: a limiter pinned at the share would let its 16 callers queue
// there (32 calls ahead of a server of 60/s: about 500 ms each).
func TestAdaptsBelowShare(t *testing.T) {
	addr := redisAddr(t)
	const quota, n = 200.0, 2
	share := quota / n
	// One dependency both instances call: 60 calls a second in all, 30 each,
	// well below the gate's share of 100; the limiters would go to 200.
	dep := agiletest.NewQueue(60, 5*time.Millisecond, 0)
	insts := newInstances(t, addr, uniqueKey(t), quota, n, agilelimiter.Config{MaxRate: 200})
	for _, in := range insts {
		in.lim.Start()
		defer in.lim.Stop()
	}
	start := time.Now()
	settled := start.Add(2 * time.Second) // judge the last two seconds
	var mu sync.Mutex
	var latencies []time.Duration
	per := hammer(insts, 16, 4*time.Second, func(ctx context.Context, in instance) error {
		return in.lim.DoContext(ctx, func(ctx context.Context) error {
			begin := time.Now()
			err := dep.Call(ctx)
			if err == nil && begin.After(settled) {
				mu.Lock()
				latencies = append(latencies, time.Since(begin))
				mu.Unlock()
			}
			return err
		})
	})
	total := 0.0
	for k, ts := range per {
		got := float64(countIn(ts, settled, settled.Add(2*time.Second))) / 2
		total += got
		st := insts[k].lim.Stats()
		t.Logf("instance %d: %.0f admitted/s in the last 2 s; limit %.0f, rate %.0f, decision %s; gate %+v",
			k, got, st.Limit, st.Rate, st.Decision, insts[k].gate.Stats())
		if got > 0.75*share {
			t.Errorf("instance %d: %.0f admitted/s; want well below its share of the quota, %v", k, got, share)
		}
	}
	slices.Sort(latencies)
	p50 := latencies[len(latencies)/2]
	t.Logf("the dependency's p50 latency in the last 2 s: %v over %d calls", p50, len(latencies))
	if p50 > 250*time.Millisecond {
		t.Errorf("the dependency's p50 latency %v; want its queue kept short by the limiters (well under 500 ms)", p50)
	}
	if total < 0.4*60 {
		t.Errorf("%.0f admitted/s in all against a dependency serving 60; want the limiters not to starve it", total)
	}
}

// Redis calls a second: one instance at 1000 calls a second with the
// default batch (20 slots), and four sharing 1000 (batches of 5). The
// figures are quoted in docs/redis.md.
func TestRedisCallsPerSecond(t *testing.T) {
	addr := redisAddr(t)
	for _, n := range []int{1, 4} {
		t.Run(strconv.Itoa(n)+"instances", func(t *testing.T) {
			const quota, run = 1000.0, 2 * time.Second
			key := uniqueKey(t)
			var gates []*agileredis.Gate
			for range n {
				g, err := agileredis.New(agileredis.Config{Client: newClient(t, addr), Key: key, Rate: quota, Instances: n})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				gates = append(gates, g)
			}
			ctx, cancel := context.WithTimeout(context.Background(), run)
			defer cancel()
			var wg sync.WaitGroup
			for _, g := range gates {
				for range 32 {
					wg.Go(func() {
						for g.Acquire(ctx, time.Time{}) == nil {
						}
					})
				}
			}
			wg.Wait()
			var calls, granted uint64
			for _, g := range gates {
				st := g.Stats()
				calls += st.RedisCalls
				granted += st.Granted
			}
			batch := gates[0].Stats().Batch
			t.Logf("%d instance(s) at %v calls/s, Batch %d: %.0f granted/s, %.0f Redis calls/s (%.3f a call)",
				n, quota, batch, float64(granted)/run.Seconds(), float64(calls)/run.Seconds(), float64(calls)/float64(granted))
			if float64(granted) < 0.7*quota*run.Seconds() {
				t.Errorf("%d granted in %v; want at least 70%% of %v/s", granted, run, quota)
			}
			if want := 2 * float64(granted) / float64(batch); float64(calls) > want {
				t.Errorf("%d Redis calls for %d grants; want no more than twice one per batch of %d (%.0f)", calls, granted, batch, want)
			}
		})
	}
}

// A quiet instance reserves what it uses: one caller at a time takes one
// slot a call, so the quota loses nothing to it.
func TestQuietInstanceWastesNothing(t *testing.T) {
	addr := redisAddr(t)
	g, err := agileredis.New(agileredis.Config{Client: newClient(t, addr), Key: uniqueKey(t), Rate: 1000, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for range 50 {
		if err := g.Acquire(context.Background(), time.Time{}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // 1 call every 5 ms: a fifth of the quota
	}
	if st := g.Stats(); st.Reserved > 2*st.Granted || st.Batch != 20 {
		t.Errorf("%+v; want about one slot reserved per grant from a caller using a fifth of the quota (batch 20)", st)
	}
}

func TestConfigErrors(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	ok := agileredis.Config{Client: c, Key: "k", Rate: 100}
	for _, tc := range []struct {
		field string
		edit  func(*agileredis.Config)
	}{
		{"Client", func(c *agileredis.Config) { c.Client = nil }},
		{"Key", func(c *agileredis.Config) { c.Key = "" }},
		{"Rate", func(c *agileredis.Config) { c.Rate = 0 }},
		{"Rate", func(c *agileredis.Config) { c.Rate = -1 }},
		{"Rate", func(c *agileredis.Config) { c.Rate = math.NaN() }},
		{"Rate", func(c *agileredis.Config) { c.Rate = math.Inf(1) }},
		{"Rate", func(c *agileredis.Config) { c.Rate = 2e6 }},
		{"Instances", func(c *agileredis.Config) { c.Instances = -1 }},
		{"FallbackRate", func(c *agileredis.Config) { c.FallbackRate = -1 }},
		{"FallbackRate", func(c *agileredis.Config) { c.FallbackRate = 200 }},
		{"FallbackRate", func(c *agileredis.Config) { c.FallbackRate = math.NaN() }},
		{"FallbackRate", func(c *agileredis.Config) { c.Instances, c.FallbackRate = 4, 10 }},
		{"Batch", func(c *agileredis.Config) { c.Batch = -1 }},
		{"Timeout", func(c *agileredis.Config) { c.Timeout = -time.Second }},
		{"Timeout", func(c *agileredis.Config) { c.Timeout = time.Microsecond }},
	} {
		cfg := ok
		tc.edit(&cfg)
		g, err := agileredis.New(cfg)
		if err == nil || g != nil || !strings.Contains(err.Error(), "Config."+tc.field+" ") {
			t.Errorf("New(%+v) = %v, %v; want an error naming Config.%s", cfg, g, err, tc.field)
		}
	}
	for _, tc := range []struct {
		cfg      agileredis.Config
		fallback float64
		batch    int
	}{
		{ok, 1, 2}, // unknown instances: 1 call/s; batch of Rate's 20 ms
		{agileredis.Config{Client: c, Key: "k", Rate: 100, Instances: 4}, 25, 1},
		{agileredis.Config{Client: c, Key: "k", Rate: 1000, Instances: 4}, 250, 5},
		{agileredis.Config{Client: c, Key: "k", Rate: 0.5}, 0.5, 1}, // the fallback never above the quota
		{agileredis.Config{Client: c, Key: "k", Rate: 100, FallbackRate: 7, Batch: 9}, 7, 9},
	} {
		g, err := agileredis.New(tc.cfg)
		if err != nil {
			t.Errorf("New(%+v): %v", tc.cfg, err)
			continue
		}
		if st := g.Stats(); st.FallbackRate != tc.fallback || st.Batch != tc.batch || st.Fallback {
			t.Errorf("New(Rate %v, Instances %d, FallbackRate %v, Batch %d): %+v; want FallbackRate %v, Batch %d",
				tc.cfg.Rate, tc.cfg.Instances, tc.cfg.FallbackRate, tc.cfg.Batch, st, tc.fallback, tc.batch)
		}
		_ = g.Close()
	}
}

// Close leaves no goroutine behind: neither the probe of a gate that fell
// back nor a Redis call.
func TestCloseLeavesNoGoroutine(t *testing.T) {
	addr := redisAddr(t)
	live := newClient(t, addr)
	dead := newClient(t, "127.0.0.1:1") // nothing listens on port 1
	if err := live.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	settle := func(want int) int {
		n := runtime.NumGoroutine()
		for deadline := time.Now().Add(3 * time.Second); n > want && time.Now().Before(deadline); n = runtime.NumGoroutine() {
			time.Sleep(10 * time.Millisecond)
		}
		return n
	}
	for _, tc := range []struct {
		name   string
		client *redis.Client
	}{{"live", live}, {"dead", dead}} {
		base := runtime.NumGoroutine()
		g, err := agileredis.New(agileredis.Config{Client: tc.client, Key: uniqueKey(t), Rate: 1000, Instances: 10})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for g.Acquire(ctx, time.Time{}) == nil {
				}
			})
		}
		wg.Wait()
		cancel()
		st := g.Stats()
		if tc.name == "dead" {
			// The probe runs while the gate has fallen back: the count can
			// tell a goroutine left behind from none.
			if !st.Fallback {
				t.Fatalf("%s: %+v; want the gate fallen back", tc.name, st)
			}
			if n := runtime.NumGoroutine(); n <= base {
				t.Errorf("%s: %d goroutines with the probe running, %d before; want more", tc.name, n, base)
			}
		}
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if n := settle(base); n > base {
			buf := make([]byte, 1<<16)
			t.Errorf("%s: %d goroutines after Close, %d before New:\n%s", tc.name, n, base, buf[:runtime.Stack(buf, true)])
		}
		// A closed gate still admits, at the fallback ceiling, without Redis.
		if err := g.Acquire(context.Background(), time.Time{}); err != nil || !g.Stats().Fallback {
			t.Errorf("%s: Acquire after Close: %v, %+v; want nil at the fallback ceiling", tc.name, err, g.Stats())
		}
	}
}
