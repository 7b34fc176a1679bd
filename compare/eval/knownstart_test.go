package eval

import (
	"testing"
	"testing/synctest"
	"time"
)

func TestPipeLimit(t *testing.T) {
	for _, c := range []struct {
		sc   Scenario
		want int
	}{
		// Eight servers, 200 req/s, a 40 ms network leg: 8 calls in service and 8 on the leg.
		{Scenario{Law: FIFOExp, Servers: 8, Capacity0: 200, Net: 40 * time.Millisecond, MaxLimit: 100}, 16},
		// A processor's knee, not its servers, is what it holds at full speed.
		{Scenario{Law: PSKnee, Servers: 3, Knee: 11, Capacity0: 73.5, Net: 3 * time.Millisecond, MaxLimit: 75}, 11},
		// Never past the ceiling the user promised, never under one call.
		{Scenario{Law: FIFOExp, Servers: 8, Capacity0: 200, Net: time.Second, MaxLimit: 50}, 50},
		{Scenario{Law: FIFOExp, Servers: 0, MaxLimit: 50}, 1},
	} {
		if got := PipeLimit(&c.sc); got != c.want {
			t.Errorf("PipeLimit(%v, %d servers, knee %d, %.1f req/s, net %v, MaxLimit %d) = %d, want %d",
				c.sc.Law, c.sc.Servers, c.sc.Knee, c.sc.Capacity0, c.sc.Net, c.sc.MaxLimit, got, c.want)
		}
	}
}

// The arm starts the limiter at the pipe, and on a processor whose knee is
// far under half MaxLimit that start gets more through than the law's.
func TestKnownStartStartsAtThePipe(t *testing.T) {
	// Training in-11: a processor with a knee of 10 and a MaxLimit of
	// 54, 138 ms a request; half MaxLimit, 27 calls, thrashes it for
	// seconds.
	sc := Generate(Inbound, 11)
	pipe := PipeLimit(&sc)
	if half := sc.MaxLimit / 2; pipe*2 > half {
		t.Fatalf("%s: pipe %d, half MaxLimit %d: the scenario no longer starts far past its pipe", sc.Name, pipe, half)
	}
	synctest.Test(t, func(t *testing.T) {
		a := KnownStart().New(&sc).(agileAdmitter)
		defer a.Stop()
		if got := a.l.Limit(); got != pipe {
			t.Errorf("limit %d before the first tick, want the pipe, %d", got, pipe)
		}
	})
	var law, known Result
	synctest.Test(t, func(*testing.T) { law = RunInbound(&sc, AgileInbound()) })
	synctest.Test(t, func(*testing.T) { known = RunInbound(&sc, KnownStart()) })
	t.Logf("%s: goodput %.1f/s from half MaxLimit, %.1f/s from the pipe", sc.Name, law.Goodput, known.Goodput)
	if known.Goodput <= law.Goodput {
		t.Errorf("%s: goodput %.1f/s started at the pipe, %.1f/s at half MaxLimit: want more from the pipe",
			sc.Name, known.Goodput, law.Goodput)
	}
}
