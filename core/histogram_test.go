package agilelimiter

import (
	"math"
	"testing"
	"time"
)

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Millisecond)
	}
	var s snapshot
	h.drain(&s)
	for _, tc := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {0.01, 10 * time.Millisecond}} {
		got := s.quantile(tc.q, 0, 0)
		if rel := math.Abs(float64(got-tc.want)) / float64(tc.want); rel > 1.0/32+0.002 {
			t.Errorf("q%.2f = %v; want %v within 1/32", tc.q, got, tc.want)
		}
	}
	if s.n != 1000 {
		t.Errorf("n = %d", s.n)
	}
	// Synthetic samples sit above everything.
	if got := s.quantile(0.5, 2000, time.Hour); got != time.Hour {
		t.Errorf("with 2000 synthetic samples p50 = %v; want the synthetic value", got)
	}
	// drain reset the histogram.
	h.drain(&s)
	if s.n != 0 || s.quantile(0.5, 0, 0) != 0 {
		t.Errorf("after drain: n %d", s.n)
	}
	// Extremes do not panic and stay ordered.
	for _, d := range []time.Duration{-5, 0, 1, 15, 16, 17, 1<<40 + 1, math.MaxInt64} {
		i := histIndex(d)
		if i < 0 || i >= histBuckets {
			t.Fatalf("histIndex(%d) = %d out of range", d, i)
		}
	}
	for d := time.Duration(1); d < 1<<40; d = d*3/2 + 1 {
		if v := histValue(histIndex(d)); math.Abs(float64(v-d))/float64(d) > 1.0/16 {
			t.Fatalf("bucket of %v reads %v", d, v)
		}
	}
}

// A sample recorded into a bucket drain has just read as empty is not lost:
// it is in the next drain.
func TestDrainSkipsEmptyBucketsAndLosesNothing(t *testing.T) {
	var h histogram
	var s snapshot
	h.record(5 * time.Millisecond)
	h.drain(&s)
	if s.n != 1 {
		t.Fatalf("first drain: %d samples; want 1", s.n)
	}
	h.drain(&s)
	if s.n != 0 || s.counts[histIndex(5*time.Millisecond)] != 0 {
		t.Fatalf("second drain: %d samples; want none (the bucket was zeroed)", s.n)
	}
	h.record(5 * time.Millisecond)
	h.record(time.Second)
	h.drain(&s)
	if s.n != 2 || s.counts[histIndex(time.Second)] != 1 {
		t.Errorf("third drain: %d samples; want the two recorded since", s.n)
	}
}

// BenchmarkDrain prices a tick's drain of a histogram: empty (an idle
// limiter's tick, every bucket read and none swapped) against one where every
// bucket holds a sample (each swapped, as every bucket was before empty ones
// were skipped). Compare the two as a ratio, in one run.
func BenchmarkDrain(b *testing.B) {
	var s snapshot
	b.Run("empty", func(b *testing.B) {
		var h histogram
		for b.Loop() {
			h.drain(&s)
		}
	})
	b.Run("every-bucket", func(b *testing.B) {
		var h histogram
		for b.Loop() {
			for i := range h.counts {
				h.counts[i].Store(1)
			}
			h.drain(&s)
		}
	})
}
