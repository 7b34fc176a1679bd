package main

import "testing"

func TestVariantSplitsRulesFromThresholds(t *testing.T) {
	for _, c := range []struct{ entry, off, knobs, label string }{
		{"gate", "gate", "", "no gate"},
		{"alpha=2", "", "alpha=2", "alpha=2"},
		{"gate+floor-probe+alpha=2+gain=1.35", "gate,floor-probe", "alpha=2,gain=1.35", "no gate+no floor-probe+alpha=2+gain=1.35"},
	} {
		off, knobs, label := variant(c.entry)
		if off != c.off || knobs != c.knobs || label != c.label {
			t.Errorf("variant(%q) = %q, %q, %q; want %q, %q, %q", c.entry, off, knobs, label, c.off, c.knobs, c.label)
		}
	}
}
