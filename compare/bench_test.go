package compare_test

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/failsafe-go/failsafe-go/adaptivelimiter"
	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// Hot-path cost of each limiter when it is not the binding constraint: the
// rate or the limit is so high that nobody waits, so what is measured is the
// bookkeeping every call pays. Each group has a naive baseline in the same
// run; BenchmarkRatios prints every contender as a ratio of it.

func noop() error { return nil }

// Outbound: a pacer in front of a call.

type contender struct {
	name string
	new  func() func() // returns one call through the limiter
}

var outbound = []contender{
	{"direct", func() func() { return func() { _ = noop() } }},
	{"agilelimiter.Do", func() func() {
		l := agilelimiter.New(agilelimiter.Config{MaxRate: 1e9, InitialRate: 1e9})
		return func() { _ = l.Do(noop) }
	}},
	{"x/time/rate.Wait", func() func() {
		l := rate.NewLimiter(rate.Limit(1e9), 1e6)
		ctx := context.Background()
		return func() { _ = l.Wait(ctx); _ = noop() }
	}},
	{"uber/ratelimit.Take", func() func() {
		l := ratelimit.New(1e9)
		return func() { l.Take(); _ = noop() }
	}},
}

// Inbound: a concurrency cap around a handler.

var inbound = []contender{
	{"chan-semaphore", func() func() {
		sem := make(chan struct{}, 1<<20)
		return func() {
			select {
			case sem <- struct{}{}:
				_ = noop()
				<-sem
			default:
			}
		}
	}},
	{"ConcurrencyLimiter.Do", func() func() {
		l := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
		return func() { _ = l.Do(noop) }
	}},
	{"failsafe-go/adaptivelimiter", func() func() {
		l := adaptivelimiter.NewBuilder[any]().WithLimits(1, 1<<20, 1<<20).Build()
		return func() {
			if p, ok := l.TryAcquirePermit(); ok {
				_ = noop()
				p.Record()
			}
		}
	}},
}

func serial(c contender) func(*testing.B) {
	return func(b *testing.B) {
		call := c.new()
		b.ReportAllocs()
		for b.Loop() {
			call()
		}
	}
}

func parallel(c contender) func(*testing.B) {
	return func(b *testing.B) {
		call := c.new()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call()
			}
		})
	}
}

func BenchmarkOutbound(b *testing.B) {
	for _, c := range outbound {
		b.Run("serial/"+c.name, serial(c))
		b.Run("parallel/"+c.name, parallel(c))
	}
}

func BenchmarkInbound(b *testing.B) {
	for _, c := range inbound {
		b.Run("serial/"+c.name, serial(c))
		b.Run("parallel/"+c.name, parallel(c))
	}
}

// TestPeerRatios runs every contender through testing.Benchmark and logs its
// ns/op and allocs/op as a ratio of its group's baseline (the direct call, the
// channel semaphore), all measured in the same run. It asserts nothing about
// speed and runs only when benchmarks were asked for:
//
//	go test -run PeerRatios -bench . -v ./compare
//
// (testing.Benchmark cannot run inside a benchmark: it would wait on the lock
// the running benchmark holds.)
func TestPeerRatios(t *testing.T) {
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		t.Skip("run with -bench to measure")
	}
	var out strings.Builder
	for _, g := range []struct {
		name string
		cs   []contender
	}{{"outbound", outbound}, {"inbound", inbound}} {
		for _, mode := range []struct {
			name string
			f    func(contender) func(*testing.B)
		}{{"serial", serial}, {"parallel", parallel}} {
			base := testing.Benchmark(mode.f(g.cs[0]))
			for _, c := range g.cs {
				r := testing.Benchmark(mode.f(c))
				fmt.Fprintf(&out, "%-8s %-8s %-28s %8.1f ns/op %7.2f× %-15s %d allocs/op\n",
					g.name, mode.name, c.name, nsPerOp(r), nsPerOp(r)/max(nsPerOp(base), 1e-9), g.cs[0].name, r.AllocsPerOp())
			}
		}
	}
	t.Log("\n" + out.String())
}

func nsPerOp(r testing.BenchmarkResult) float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}
