package agilelimiter

import (
	"testing"
	"time"
)

// Helpers for the step tables of the controller: they state the evidence of
// a tick instead of running a clock.

func settingsFor(t *testing.T, c Config) settings {
	t.Helper()
	s, err := c.settings()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// samples returns a tick with n samples of d.
func samples(n int, d time.Duration) *snapshot {
	var h histogram
	for range n {
		h.record(d)
	}
	s := new(snapshot)
	h.drain(s)
	return s
}

func mix(n1 int, d1 time.Duration, n2 int, d2 time.Duration) *snapshot {
	var h histogram
	for range n1 {
		h.record(d1)
	}
	for range n2 {
		h.record(d2)
	}
	s := new(snapshot)
	h.drain(s)
	return s
}
