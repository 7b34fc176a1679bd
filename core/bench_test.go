package agilelimiter_test

import (
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// The hot paths beside naive baselines doing the same work, so a ratio is
// read in one run: go test -run '^$' -bench . -benchmem ./core

var sink time.Duration

// chanSemaphore is the naive inbound baseline: a buffered channel, with the
// two clock reads a limiter needs to time the request.
type chanSemaphore chan struct{}

func (s chanSemaphore) do(fn func() error) error {
	select {
	case s <- struct{}{}:
	default:
		return agilelimiter.ErrOverloaded
	}
	start := time.Now()
	err := fn()
	sink = time.Since(start)
	<-s
	return err
}

func noop() error { return nil }

func BenchmarkInbound(b *testing.B) {
	b.Run("agilelimiter/serial", func(b *testing.B) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
		b.ReportAllocs()
		for b.Loop() {
			if lim.Do(noop) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("chan-semaphore/serial", func(b *testing.B) {
		s := make(chanSemaphore, 1<<20)
		b.ReportAllocs()
		for b.Loop() {
			if s.do(noop) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("agilelimiter/parallel", func(b *testing.B) {
		lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20})
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if lim.Do(noop) != nil {
					b.Error("refused")
					return
				}
			}
		})
	})
	b.Run("chan-semaphore/parallel", func(b *testing.B) {
		s := make(chanSemaphore, 1<<20)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if s.do(noop) != nil {
					b.Error("refused")
					return
				}
			}
		})
	})
}

// mutexBaseline is the naive outbound baseline: the clock reads and one
// uncontended-or-not mutex, which is what a leaky bucket minimally costs.
func BenchmarkOutbound(b *testing.B) {
	huge := agilelimiter.Config{MaxRate: 1e12, InitialRate: 1e12, MinRate: 1e12}
	b.Run("Do/serial", func(b *testing.B) {
		lim := agilelimiter.New(huge)
		b.ReportAllocs()
		for b.Loop() {
			_ = lim.Do(noop)
		}
	})
	b.Run("Take/serial", func(b *testing.B) {
		lim := agilelimiter.New(huge)
		b.ReportAllocs()
		for b.Loop() {
			lim.Take()
		}
	})
	b.Run("clock-reads/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			start := time.Now()
			_ = noop()
			sink = time.Since(start) + time.Since(start)
		}
	})
	b.Run("Do/parallel", func(b *testing.B) {
		lim := agilelimiter.New(huge)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				_ = lim.Do(noop)
			}
		})
	})
	b.Run("Take/parallel", func(b *testing.B) {
		lim := agilelimiter.New(huge)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lim.Take()
			}
		})
	})
}

// BenchmarkObserved prices Config.OnTick and Config.Logger on the hot path:
// each pair runs a started limiter (its controller ticking every
// millisecond) without and with a hook and a logger. The hook and the
// logger run once a tick on the controller's goroutine, never on a caller's,
// so the two of a pair should read the same ns/op and 0 allocs.
func BenchmarkObserved(b *testing.B) {
	logger := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var ticks atomic.Int64
	hook := func(agilelimiter.Stats) { ticks.Add(1) }
	for _, observed := range []bool{false, true} {
		name := "bare"
		var onTick func(agilelimiter.Stats)
		var log *slog.Logger
		if observed {
			name, onTick, log = "hook+logger", hook, logger
		}
		b.Run("inbound/"+name, func(b *testing.B) {
			lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1 << 20, InitialLimit: 1 << 20,
				MinLimit: 1 << 20, TickInterval: time.Millisecond, OnTick: onTick, Logger: log})
			lim.Start()
			defer lim.Stop()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = lim.Do(noop)
				}
			})
		})
		b.Run("outbound/"+name, func(b *testing.B) {
			lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1e12, InitialRate: 1e12, MinRate: 1e12,
				TickInterval: time.Millisecond, OnTick: onTick, Logger: log})
			lim.Start()
			defer lim.Stop()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_ = lim.Do(noop)
				}
			})
		})
	}
}
