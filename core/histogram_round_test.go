package agilelimiter

import (
	"testing"
	"time"
)

// A round's figures: 1000 calls of 50 µs and 30 of 20 ms. The median is a
// cheap call's latency; the mean carries the dear calls' share (Little's law
// needs it); snapshots add up count by count.
func TestSnapshotMedianMeanAdd(t *testing.T) {
	var h histogram
	for range 1000 {
		h.record(50 * time.Microsecond)
	}
	for range 30 {
		h.record(20 * time.Millisecond)
	}
	var s snapshot
	h.drain(&s)
	if got := s.median(); got < 45*time.Microsecond || got > 55*time.Microsecond {
		t.Errorf("median %v; want about 50µs", got)
	}
	want := (1000*50*time.Microsecond + 30*20*time.Millisecond) / 1030
	if got := s.mean(); got < want*9/10 || got > want*11/10 {
		t.Errorf("mean %v; want about %v", got, want)
	}
	if got := s.above(time.Millisecond); got != 30 {
		t.Errorf("above 1ms: %d; want 30", got)
	}
	var sum snapshot
	sum.add(&s)
	sum.add(&s)
	if sum.n != 2*s.n || sum.median() != s.median() || sum.mean() != s.mean() {
		t.Errorf("add: n %d, median %v, mean %v; want %d, %v, %v", sum.n, sum.median(), sum.mean(), 2*s.n, s.median(), s.mean())
	}
	if got := (&snapshot{}).mean(); got != 0 {
		t.Errorf("empty snapshot: mean %v, want 0", got)
	}
}
