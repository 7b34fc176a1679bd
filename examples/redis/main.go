// Command redis shows three instances of a service sharing one global quota
// through Redis with agileredis: each instance's adaptive Limiter (MaxRate
// 100) asks its Gate first, and the gates keep the three together at the
// provider's 150 calls a second, however many callers each has.
//
// The dependency (agiletest.Queue) could take 400 calls a second, so the
// quota binds, not the dependency. The program starts its own redis-server
// on a free loopback port (or uses REDIS_ADDR, and then leaves it alone),
// prints each instance's sends a second every half second, and at 3 s kills
// Redis: each gate falls back within its Timeout to a local pacer at
// Rate/Instances (50 calls a second), so the three stay at the quota. At
// 5.5 s it starts Redis again: within a second every gate's probe notices,
// and after a second more at the fallback ceiling (until every instance is
// back) they share the quota through Redis again. It ends with a one-line
// summary after about 8.5 s.
//
//	go run ./examples/redis
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
	"github.com/agilelimiter/agilelimiter/examples/internal/load"
	"github.com/agilelimiter/agilelimiter/examples/internal/table"
	agileredis "github.com/agilelimiter/agilelimiter/redis"
	"github.com/redis/go-redis/v9"
)

const (
	quota     = 150.0 // the provider's quota, calls per second across the instances
	instances = 3
)

// instance is one instance of the service: its client, gate and limiter.
type instance struct {
	client *redis.Client
	gate   *agileredis.Gate
	lim    *agilelimiter.Limiter
	sent   table.Count
}

// quiet drops go-redis's own log lines (failed dials while Redis is down):
// the gates say what matters, once.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	redis.SetLogger(quiet{})
	addr, srv := os.Getenv("REDIS_ADDR"), (*server)(nil)
	if addr == "" {
		var err error
		if srv, err = startServer(); err != nil {
			fmt.Fprintf(os.Stderr, "examples/redis needs a Redis: set REDIS_ADDR=host:port, or install redis-server "+
				"(Debian: apt-get install redis-server) so that it can start one (%v)\n", err)
			os.Exit(1)
		}
		defer srv.stop()
		addr = srv.addr()
	}

	// The gates' log lines, without timestamps, between the table's rows.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	dep := agiletest.NewQueue(400, 5*time.Millisecond, 0) // room for more than the quota
	insts := make([]*instance, instances)
	for i := range insts {
		// One client, gate and limiter per instance, as separate processes
		// would have.
		client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
		gate, err := agileredis.New(agileredis.Config{
			Client:    client,
			Key:       "agilelimiter:example:redis",
			Rate:      quota,
			Instances: instances, // while Redis is down: 150/3 = 50 calls/s each
			Logger:    logger.With("instance", string(rune('a'+i))),
		})
		if err != nil {
			panic(err)
		}
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, Gate: gate})
		lim.Start()
		insts[i] = &instance{client: client, gate: gate, lim: lim}
	}

	var mu sync.Mutex
	var sends []time.Time
	ctx, stop := context.WithCancel(context.Background())
	wait := load.Loop(ctx, instances*8, func(w int) {
		in := insts[w%instances]
		call, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := in.lim.DoContext(call, dep.Call); err == nil {
			in.sent.Inc()
			mu.Lock()
			sends = append(sends, time.Now())
			mu.Unlock()
		}
	})

	// The outage, with a server of our own: killed at 3 s, started again
	// at 5.5 s. back is when every gate is on the quota again.
	start := time.Now()
	var redisUp atomic.Bool
	redisUp.Store(true)
	var killed, restarted, back atomic.Int64
	rows := 8
	if srv != nil {
		rows = 17
		go func() {
			time.Sleep(3 * time.Second)
			srv.stop()
			redisUp.Store(false)
			killed.Store(int64(time.Since(start)))
			time.Sleep(2500 * time.Millisecond)
			if err := srv.start(); err != nil {
				fmt.Fprintln(os.Stderr, "restarting redis-server:", err)
				return
			}
			redisUp.Store(true)
			restarted.Store(int64(time.Since(start)))
			for onQuota := 0; onQuota < instances; time.Sleep(5 * time.Millisecond) {
				onQuota = 0
				for _, in := range insts {
					if !in.gate.Stats().Fallback {
						onQuota++
					}
				}
			}
			back.Store(int64(time.Since(start)))
		}()
	} else {
		fmt.Println("REDIS_ADDR is set: this Redis is not ours to stop, so the run shows no outage")
	}

	var lastCalls uint64
	lastAt := time.Now()
	fmt.Printf("quota %.0f calls/s shared by %d instances (Limiter MaxRate 100 each); a dependency of 400 calls/s; Redis at %s\n",
		quota, instances, addr)
	table.New(os.Stdout,
		table.PerSecond("a", "sent/s", &insts[0].sent),
		table.PerSecond("b", "sent/s", &insts[1].sent),
		table.PerSecond("c", "sent/s", &insts[2].sent),
		table.Value("total", "sent/s", func() float64 {
			mu.Lock()
			defer mu.Unlock()
			now := time.Now()
			return float64(countSince(sends, now.Add(-500*time.Millisecond))) / 0.5
		}),
		table.Value("quota", "calls/s", func() float64 { return quota }),
		table.Text("redis", func() string {
			if redisUp.Load() {
				return "up"
			}
			return "down"
		}),
		table.Text("gates", func() string {
			n := 0
			for _, in := range insts {
				if in.gate.Stats().Fallback {
					n++
				}
			}
			if n == 0 {
				return "on the quota"
			}
			return fmt.Sprintf("%d pacing alone", n)
		}),
		table.Value("redis calls", "calls/s", func() float64 {
			var calls uint64
			for _, in := range insts {
				calls += in.gate.Stats().RedisCalls
			}
			now := time.Now()
			rate := float64(calls-lastCalls) / now.Sub(lastAt).Seconds()
			lastCalls, lastAt = calls, now
			return rate
		}),
	).Every(500*time.Millisecond, rows)
	stop()
	wait()
	elapsed := time.Since(start)
	for _, in := range insts {
		in.lim.Stop()
		_ = in.gate.Close()
		_ = in.client.Close()
	}

	mu.Lock()
	defer mu.Unlock()
	most := mostInWindow(sends, time.Second)
	allowed := 1.05 * quota
	summary := fmt.Sprintf("quota %.0f calls/s: %d instances sent %d calls in %.1f s; the most in any 1 s window %d (5%% over allowed: %d)",
		quota, instances, len(sends), elapsed.Seconds(), most, int(allowed))
	if k, r, b := time.Duration(killed.Load()), time.Duration(restarted.Load()), time.Duration(back.Load()); k > 0 && r > 0 {
		down := float64(countBetween(sends, start.Add(k+250*time.Millisecond), start.Add(r))) / (r - k - 250*time.Millisecond).Seconds()
		summary += fmt.Sprintf("; %.0f calls/s while Redis was down", down)
		if b > 0 {
			summary += fmt.Sprintf("; every gate back on the quota %.2f s after the restart", (b - r).Seconds())
		}
	}
	fmt.Println(summary)
}

// countSince counts the instants of ts at or after from.
func countSince(ts []time.Time, from time.Time) int {
	return countBetween(ts, from, time.Now().Add(time.Hour))
}

// countBetween counts the instants of ts in [from, to).
func countBetween(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && t.Before(to) {
			n++
		}
	}
	return n
}

// mostInWindow is the most instants of ts in any window of length w.
func mostInWindow(ts []time.Time, w time.Duration) int {
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	most, j := 0, 0
	for i := range ts {
		for j < len(ts) && ts[j].Sub(ts[i]) < w {
			j++
		}
		most = max(most, j-i)
	}
	return most
}
