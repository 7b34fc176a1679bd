//go:build agilelimiter_ablate

package agilelimiter

import "testing"

func TestKnobReadsTheEnvironment(t *testing.T) {
	t.Setenv("AGILELIMITER_KNOB", "alpha=2.5,gain=x,smoothing=0.25")
	for _, c := range []struct {
		name      string
		def, want float64
	}{
		{"alpha", 1, 2.5},
		{"gain", 1.2, 1.2}, // not a number: the law's own value
		{"smoothing", 0.5, 0.25},
		{"slo-z", 3.09, 3.09}, // not set
	} {
		if got := knob(c.name, c.def); got != c.want {
			t.Errorf("knob(%q, %v) = %v; want %v", c.name, c.def, got, c.want)
		}
	}
}
