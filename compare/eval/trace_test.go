package eval

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

func TestScenarioByName(t *testing.T) {
	named := Named()[0]
	for _, tc := range []struct {
		name string
		want Scenario
	}{
		{"out-7", Generate(Outbound, 7)},
		{"in-1003", Generate(Inbound, 1003)},
		{named.Name, named},
	} {
		got, err := ScenarioByName(tc.name)
		if err != nil || got.Name != tc.want.Name || got.About != tc.want.About {
			t.Errorf("%s: %q (%v); want %q", tc.name, got.Name, err, tc.want.Name)
		}
	}
	for _, bad := range []string{"", "out-", "out-x", "sideways-3", "out-7/d0", "out-7/dx", "out-7/d70000"} {
		if _, err := ScenarioByName(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	// A draw other than the scenario's own: the set's name for it, and
	// its randomness.
	s := TrainingSeeds
	s.Draw = 2
	want := s.Scenarios(0)[6] // out-7 on draw 2
	got, err := ScenarioByName("out-7/d2")
	if err != nil || got.Name != want.Name || got.Draw != 2 || got.About != want.About {
		t.Errorf("out-7/d2: %q draw %d (%v); want %q draw 2", got.Name, got.Draw, err, want.Name)
	}
}

// A trace has a line per controller tick, and runs the scenario as the
// evaluation does: the same result.
func TestTraceTicksWritesEveryTick(t *testing.T) {
	for _, name := range []string{"out-3", "in-5"} {
		sc, err := ScenarioByName(name)
		if err != nil {
			t.Fatal(err)
		}
		sc.Duration = 5 * time.Second
		var out bytes.Buffer
		var traced, plain Result
		synctest.Test(t, func(t *testing.T) { traced = TraceTicks(&out, &sc, 0) })
		synctest.Test(t, func(t *testing.T) {
			if sc.Direction == Inbound {
				plain = RunInbound(&sc, AgileInbound())
			} else {
				plain = RunOutbound(&sc, AgileOutbound("agile", 0))
			}
		})
		ticks := 0
		for _, l := range strings.Split(out.String(), "\n") {
			if f := strings.Fields(l); len(f) >= 9 && strings.HasSuffix(f[0], "s") && f[0] != "time" {
				ticks++
			}
		}
		// 5 s of ticks (10ms for a rate limit, 100ms for a concurrency
		// limit), and the run ends when the last call is done.
		want := 5 * time.Second / agilelimiter.DefaultTickInterval
		if sc.Direction == Outbound {
			want = 5 * time.Second / agilelimiter.DefaultRateTickInterval
		}
		if ticks < int(want)*9/10 || ticks > int(want)*8/5 {
			t.Errorf("%s: %d tick lines in a 5 s run; want about %d:\n%s", name, ticks, want, out.String())
		}
		if traced.Sent != plain.Sent || traced.Good != plain.Good {
			t.Errorf("%s: traced run sent %d, good %d; the plain one %d, %d", name, traced.Sent, traced.Good, plain.Sent, plain.Good)
		}
	}
}

// Traced from the pipe, an inbound run is KnownStart's run, and it differs
// from the default start's.
func TestTraceTicksFromThePipe(t *testing.T) {
	sc := Generate(Inbound, 11) // training in-11: a knee of 10, MaxLimit 54
	sc.Duration = 5 * time.Second
	pipe := PipeLimit(&sc)
	if pipe == sc.MaxLimit/2 {
		t.Fatalf("%s: the pipe is the default start, %d: the test tells nothing", sc.Name, pipe)
	}
	var traced, known, plain Result
	var out bytes.Buffer
	synctest.Test(t, func(*testing.T) { traced = TraceTicks(&out, &sc, pipe) })
	synctest.Test(t, func(*testing.T) { known = RunInbound(&sc, KnownStart()) })
	synctest.Test(t, func(*testing.T) { plain = RunInbound(&sc, AgileInbound()) })
	if traced.Sent != known.Sent || traced.Good != known.Good {
		t.Errorf("traced from the pipe: sent %d, good %d; KnownStart %d, %d", traced.Sent, traced.Good, known.Sent, known.Good)
	}
	if traced.Good == plain.Good && traced.Sent == plain.Sent {
		t.Errorf("traced from the pipe: the default start's run (sent %d, good %d)", plain.Sent, plain.Good)
	}
}
