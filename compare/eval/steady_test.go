package eval

import (
	"math"
	"testing"
	"testing/synctest"
	"time"
)

// fixedAt is a sweep point that held n calls in flight on average over a
// 10 s run (100 ms a call) and got g answers a second inside the SLO.
func fixedAt(n, g float64) Result {
	return Result{Mean: 100 * time.Millisecond, Answered: int(n * 100), Goodput: g}
}

func TestInFlightIsLittlesLaw(t *testing.T) {
	r := Result{Mean: 250 * time.Millisecond, Answered: 300, TimedOut: 100, Refused: 50}
	// 400 calls out for 250 ms each over 20 s: 5 in flight on average; the
	// refusals' round trip is left out.
	if got := r.InFlight(20); math.Abs(got-5) > 1e-9 {
		t.Fatalf("InFlight = %v, want 5", got)
	}
	if got := r.InFlight(0); got != 0 {
		t.Fatalf("InFlight over no time = %v, want 0", got)
	}
}

// sweptRow is a 10 s run's row whose sweep held 2, 4, 8 and 16 calls in
// flight for 20, 60, 100 and 50 answers a second; the oracle is the 8.
func sweptRow() Row {
	r := Row{
		Scenario: Scenario{Duration: 10 * time.Second},
		Sweep:    []Result{fixedAt(2, 20), fixedAt(4, 60), fixedAt(8, 100), fixedAt(16, 50)},
	}
	r.Oracle = r.Sweep[2]
	return r
}

func TestSteadyIsTheFixedPolicyAsDeep(t *testing.T) {
	r := sweptRow()
	for _, tc := range []struct {
		in, want float64
	}{
		{1, 10},   // below the shallowest: from none at none in flight
		{2, 20},   // a sweep point itself
		{3, 40},   // halfway between 2 and 4
		{6, 80},   // halfway between 4 and 8
		{12, 75},  // past the best, where deeper gets less
		{20, 50},  // beyond the deepest: its goodput
		{8, 100},  // the oracle's own depth
		{0, 0},    // nothing in flight, nothing through
		{16, 50},  // the deepest point
		{4.4, 64}, // a tenth of the way from 4 to 8
	} {
		c := Cell{Result: fixedAt(tc.in, 0)}
		if got := r.Steady(c); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Steady at %v in flight = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := (&Row{Scenario: r.Scenario}).Steady(Cell{Result: fixedAt(3, 0)}); !math.IsNaN(got) {
		t.Errorf("Steady without a sweep = %v, want NaN", got)
	}
}

func TestDepthTimesMotionIsOfOracle(t *testing.T) {
	r := sweptRow()
	// As deep as a fixed 6 (80/s), with 72/s: the depth loses a fifth, the
	// motion a tenth.
	c := Cell{Result: fixedAt(6, 72)}
	r.judgeCell(&c)
	depth, motion := r.DepthAndMotion(c)
	if math.Abs(depth-0.8) > 1e-9 || math.Abs(motion-0.9) > 1e-9 {
		t.Fatalf("depth, motion = %v, %v; want 0.8, 0.9", depth, motion)
	}
	if math.Abs(depth*motion-c.OfOracle) > 1e-9 {
		t.Fatalf("depth × motion = %v, of oracle %v", depth*motion, c.OfOracle)
	}
	if d, m := r.DepthAndMotion(Cell{Result: fixedAt(0, 0)}); !math.IsNaN(d) || !math.IsNaN(m) {
		t.Fatalf("at no depth: %v, %v; want NaN (no fixed policy got anything through)", d, m)
	}
}

// A fixed limit run as an arm is one of the sweep's points: its motion is
// exactly 1 and its depth its own share of the oracle, on a real run.
func TestAFixedLimitHasNoMotion(t *testing.T) {
	sc := Generate(Inbound, 3)
	sc.Duration = 3 * time.Second
	r := Row{Scenario: sc}
	for _, n := range OracleLimits(&sc) {
		r.Params = append(r.Params, float64(n))
	}
	r.Sweep = make([]Result, len(r.Params))
	for i, n := range r.Params {
		synctest.Test(t, func(t *testing.T) { r.Sweep[i] = RunInbound(&sc, Semaphore(int(n))) })
	}
	r.judge()
	for i, s := range r.Sweep {
		if s.Goodput == 0 {
			continue
		}
		c := Cell{Result: s}
		r.judgeCell(&c)
		depth, motion := r.DepthAndMotion(c)
		if math.Abs(motion-1) > 1e-9 || math.Abs(depth-c.OfOracle) > 1e-9 {
			t.Errorf("semaphore-%v: depth %v motion %v, want depth %v and motion 1", r.Params[i], depth, motion, c.OfOracle)
		}
	}
}
