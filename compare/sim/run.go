package sim

import (
	"context"
	"slices"
	"sync"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Result is what one arm achieved in one scenario.
type Result struct {
	Scenario, Arm string
	// Sent is the number of calls made.
	Sent int
	// Goodput is responses answered inside the SLO, per second of run.
	Goodput float64
	// Inside is the share of calls sent that were answered inside the SLO.
	// Refusals and timeouts count as outside.
	Inside float64
	// Mean and P99 are over the calls that reached the dependency (answered or
	// timed out at Timeout); refusals, which take no time, are left out.
	Mean, P99 time.Duration
	// Hits is the number of calls a cache answered; OriginInside is the share
	// of the other calls (those that went to the dependency) answered inside
	// the SLO.
	Hits         int
	OriginInside float64
	// Wasted is the share of the dependency's work spent on requests whose
	// client had already given up.
	Wasted float64
	// Series is the run sampled every SeriesStep.
	Series []Point
}

// SeriesStep is the spacing of Result.Series.
const SeriesStep = 250 * time.Millisecond

// Point is one sample of a run's time series.
type Point struct {
	T time.Duration
	// Rate is the arm's pace at T; Capacity the dependency's.
	Rate, Capacity float64
	// Sent is the calls the arm let out per second during the step: what
	// the dependency was offered, which a window law's pace (a gate that
	// refills a tick at a time) does not show at one instant.
	Sent float64
	// P99 is the p99 of calls sent during the step (0 when none reached the
	// dependency).
	P99 time.Duration
	// Goodput is the responses inside the SLO per second among calls sent
	// during the step.
	Goodput float64
}

type call struct {
	at     time.Duration
	status Status
	d      time.Duration
}

// Run drives arm through sc and returns what it achieved. It must be called
// inside a synctest bubble: it runs sc.Duration of virtual time, and leaves no
// goroutine behind.
func Run(sc Scenario, arm Arm) Result { return RunWatch(sc, arm, 0, nil) }

// RunWatch is Run that also calls watch with the gate every interval of the
// run (from the first interval on), for tests that follow a limiter tick by
// tick. watch runs on its own goroutine and must not block.
func RunWatch(sc Scenario, arm Arm, every time.Duration, watch func(t time.Duration, g Gate)) Result {
	// The run starts sc.Phase into the clock's probe cycle: nothing exists
	// yet, so the wait is only the clock's.
	time.Sleep(sc.Phase)
	dep := NewDependency(&sc)
	gate := arm.New(&sc, dep)
	var wg sync.WaitGroup
	if watch != nil && every > 0 {
		wg.Go(func() {
			for t := every; t < sc.Duration; t += every {
				time.Sleep(time.Until(dep.start.Add(t)))
				watch(t, gate)
			}
		})
	}
	// The run ends by cancellation rather than a deadline: a deadline would make
	// the project's TakeContext refuse the tail of its queue early, which other
	// arms cannot do, and count those refusals as demand.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var (
		mu    sync.Mutex
		calls []call
	)
	for range sc.Workers {
		wg.Go(func() {
			var mine []call
			for gate.Wait(ctx) == nil {
				at := time.Since(dep.start)
				st, d := dep.Call()
				mine = append(mine, call{at, st, d})
				gate.Done(outcome(arm, st, d), d)
			}
			mu.Lock()
			calls = append(calls, mine...)
			mu.Unlock()
		})
	}

	var series []Point
	steps := int(sc.Duration / SeriesStep)
	for i := range steps {
		t := time.Duration(i) * SeriesStep
		time.Sleep(time.Until(dep.start.Add(t)))
		synctest.Wait() // read the pace after whatever else happens at t (a controller tick)
		series = append(series, Point{T: t, Rate: gate.Rate(), Capacity: capacityAt(&sc, t)})
	}
	time.Sleep(time.Until(dep.start.Add(sc.Duration)))
	// The run is [0, Duration]: what the gates release at its last instant is
	// counted once everything due then has run (synctest.Wait), and what
	// they release after, as workers see the cancellation in an order the
	// scheduler picks, is not: a seed gives the same figures every time.
	synctest.Wait()
	busy, wasted := dep.Work()
	cancel()
	wg.Wait()
	gate.Stop()

	calls = slices.DeleteFunc(calls, func(c call) bool { return c.at > sc.Duration })
	r := summarize(&sc, calls, series)
	r.Arm = arm.Name
	if busy > 0 {
		r.Wasted = float64(wasted) / float64(busy)
	}
	return r
}

// outcome is what the arm's gate learns from one call.
func outcome(arm Arm, st Status, d time.Duration) agilelimiter.Outcome {
	if arm.Verdict != nil {
		resp, err := HTTPExchange(st)
		return arm.Verdict(resp, err, d)
	}
	if st == Refused {
		return agilelimiter.Unreachable
	}
	return agilelimiter.Reached // a timeout is evidence: at least that slow
}

func capacityAt(sc *Scenario, t time.Duration) float64 {
	if sc.Refuse != nil && sc.Refuse(t) {
		return 0
	}
	return sc.Capacity(t)
}

func summarize(sc *Scenario, calls []call, series []Point) Result {
	r := Result{Scenario: sc.Name, Sent: len(calls), Series: series}
	var (
		good   int
		sum    time.Duration
		reach  []time.Duration
		bucket = make([][]time.Duration, len(series))
		goodAt = make([]int, len(series))
		sentAt = make([]int, len(series))
	)
	originGood := 0
	for _, c := range calls {
		i := min(int(c.at/SeriesStep), len(series)-1)
		sentAt[i]++
		if c.status == Hit {
			r.Hits++
		} else if c.status == Answered && c.d <= sc.SLO {
			originGood++
		}
		if c.status == Answered && c.d <= sc.SLO {
			good++
			goodAt[i]++
		}
		if c.status != Refused {
			sum += c.d
			reach = append(reach, c.d)
			bucket[i] = append(bucket[i], c.d)
		}
	}
	r.Goodput = float64(good) / sc.Duration.Seconds()
	if len(calls) > 0 {
		r.Inside = float64(good) / float64(len(calls))
	}
	if origin := len(calls) - r.Hits; origin > 0 {
		r.OriginInside = float64(originGood) / float64(origin)
	}
	if len(reach) > 0 {
		r.Mean = sum / time.Duration(len(reach))
		r.P99 = Quantile(reach, 0.99)
	}
	for i := range series {
		series[i].P99 = Quantile(bucket[i], 0.99)
		series[i].Goodput = float64(goodAt[i]) / SeriesStep.Seconds()
		series[i].Sent = float64(sentAt[i]) / SeriesStep.Seconds()
	}
	return r
}

// Quantile returns the q-quantile of ds (nearest rank), sorting ds in place;
// 0 for none. compare/eval reads its runs' p99 with it too, so both
// simulators report latency the same way.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(q*float64(len(ds))+0.999999) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
