package sim_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/agilelimiter/agilelimiter/compare/sim"
)

func TestProbe(t *testing.T) {
	for _, sc := range sim.Matrix() {
		for _, arm := range sim.Arms() {
			synctest.Test(t, func(t *testing.T) {
				st := time.Now()
				_ = st
				r := sim.Run(sc, arm)
				t.Logf("%-18s %-15s sent=%5d good=%6.1f/s inside=%5.1f%% mean=%6v p99=%6v wasted=%4.1f%%", r.Scenario, r.Arm, r.Sent, r.Goodput, 100*r.Inside, r.Mean.Round(time.Millisecond), r.P99.Round(time.Millisecond), 100*r.Wasted)
			})
		}
	}
}
