//go:build agilelimiter_model

package agilelimiter

import (
	"testing"
	"time"
)

// The latency a slot sees: 1000 calls of 50 µs and 30 of 20 ms hold the
// slots 50 ms and 600 ms of every second, so half the slot-time is spent in
// 20 ms calls although 97% of the calls took 50 µs.
func TestWeightedMedianIsTheSlotsLatency(t *testing.T) {
	var h histogram
	for range 1000 {
		h.record(50 * time.Microsecond)
	}
	for range 30 {
		h.record(20 * time.Millisecond)
	}
	var s snapshot
	h.drain(&s)
	if got := s.quantile(0.5, 0, 0); got > 100*time.Microsecond {
		t.Fatalf("plain median %v; the test needs the cheap calls to dominate it", got)
	}
	if got := s.weightedMedian(); got < 19*time.Millisecond || got > 21*time.Millisecond {
		t.Errorf("weighted median %v; want about 20ms", got)
	}
	var sum snapshot
	sum.add(&s)
	sum.add(&s)
	if sum.n != 2*s.n || sum.weightedMedian() != s.weightedMedian() {
		t.Errorf("add: n %d, weighted median %v; want %d and %v", sum.n, sum.weightedMedian(), 2*s.n, s.weightedMedian())
	}
	if got := (&snapshot{}).weightedMedian(); got != 0 {
		t.Errorf("empty snapshot: %v, want 0", got)
	}
}
