package main

import (
	"testing"

	"github.com/agilelimiter/agilelimiter/compare/eval"
)

// -draw K with -trace in-N runs in-N/dK, the run an evaluation with -draw K
// lists under that name; it ran draw 0 while -draw was read only by the
// evaluation. A draw named twice, or a named scenario with -draw, is refused.
func TestTracedScenarioTakesTheDrawFlag(t *testing.T) {
	for _, c := range []struct {
		name     string
		draw     uint64
		want     string
		wantDraw uint64
	}{
		{"in-128", 0, "in-128", 0},
		{"in-128", 2, "in-128/d2", 2},
		{"in-128/d2", 2, "in-128/d2", 2},
		{"in-128/d3", 0, "in-128/d3", 3},
		{"out-9", 1, "out-9/d1", 1},
	} {
		sc, err := tracedScenario(c.name, c.draw)
		if err != nil {
			t.Errorf("tracedScenario(%q, %d): %v", c.name, c.draw, err)
			continue
		}
		if sc.Name != c.want || sc.Draw != c.wantDraw {
			t.Errorf("tracedScenario(%q, %d) = %s draw %d; want %s draw %d", c.name, c.draw, sc.Name, sc.Draw, c.want, c.wantDraw)
		}
	}
	named := eval.Named()[0].Name
	for _, c := range []struct {
		name string
		draw uint64
	}{{"in-128/d1", 2}, {named, 1}} {
		if _, err := tracedScenario(c.name, c.draw); err == nil {
			t.Errorf("tracedScenario(%q, %d): no error", c.name, c.draw)
		}
	}
}
