package eval

import (
	"math"
	"reflect"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// The same seed and direction always draw the same scenario.
func TestGenerateIsDeterministic(t *testing.T) {
	for _, s := range []Seeds{TrainingSeeds, ValidationSeeds} {
		a, b := s.Scenarios(0), s.Scenarios(0)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: two draws of the same seeds differ", s.Name)
		}
		if names := s.Names(0); len(names) != len(a) {
			t.Fatalf("%s: %d names for %d scenarios", s.Name, len(names), len(a))
		} else {
			for i := range a {
				if a[i].Name != names[i] {
					t.Errorf("%s: scenario %d is %s, Names says %s", s.Name, i, a[i].Name, names[i])
				}
			}
		}
	}
	if a, b := Generate(Outbound, 7), Generate(Inbound, 7); a.Law == b.Law && a.Capacity0 == b.Capacity0 {
		t.Errorf("out-7 and in-7 drew the same resource: the directions should draw from different streams")
	}
}

// No two seed sets share a seed, and the training and validation sets are
// as large as the report says.
func TestSeedSetsAreApart(t *testing.T) {
	sets := []Seeds{TrainingSeeds, DevelopmentSeeds, ValidationSeeds, HoldoutSeeds}
	for i, a := range sets {
		for _, b := range sets[i+1:] {
			names := b.Names(0)
			for _, n := range a.Names(0) {
				if slices.Contains(names, n) {
					t.Errorf("%s is in both %s and %s", n, a.Name, b.Name)
				}
			}
		}
		if got, err := SeedSet(a.Name); err != nil || got != a {
			t.Errorf("SeedSet(%q) = %+v, %v; want the set itself", a.Name, got, err)
		}
	}
	for _, s := range []Seeds{TrainingSeeds, ValidationSeeds} {
		if s.Outbound < 40 || s.Inbound < 30 {
			t.Errorf("%s: %d outbound and %d inbound scenarios, want at least 40 and 30", s.Name, s.Outbound, s.Inbound)
		}
	}
	if _, err := SeedSet("testing"); err == nil {
		t.Error("SeedSet accepted an unknown name")
	}
}

// Every drawn parameter falls in its range, over many seeds.
func TestGenerateRanges(t *testing.T) {
	kinds := map[TraceKind]int{}
	laws := map[Law]int{}
	closed := 0
	for seed := uint64(1); seed <= 400; seed++ {
		for _, dir := range []Direction{Outbound, Inbound} {
			sc := Generate(dir, seed)
			kinds[sc.Trace.Kind]++
			laws[sc.Law]++
			checkRanges(t, &sc)
			if sc.Clients > 0 {
				closed++
			}
		}
	}
	for k := range TraceKind(drawnKinds) {
		if kinds[k] == 0 {
			t.Errorf("no scenario drew the trace %s", k)
		}
	}
	if kinds[Dip] != 0 {
		t.Errorf("the generator drew %d dips, a kind kept for the named scenarios", kinds[Dip])
	}
	for l := FIFOExp; l <= PSKnee; l++ {
		if laws[l] == 0 {
			t.Errorf("no scenario drew the law %s", l)
		}
	}
	if closed == 0 {
		t.Error("no inbound scenario drew closed-loop clients")
	}
}

func checkRanges(t *testing.T, sc *Scenario) {
	t.Helper()
	bad := func(what string, v any) { t.Errorf("%s: %s out of range: %v (%s)", sc.Name, what, v, sc.About) }
	in := func(what string, v, lo, hi float64) {
		// 1e-6: durations are truncated to whole nanoseconds.
		if v < lo*(1-1e-6)-1e-9 || v > hi*(1+1e-6)+1e-9 || math.IsNaN(v) {
			bad(what, v)
		}
	}
	if sc.Name == "" || sc.About == "" {
		bad("name or description", sc.Name)
	}
	in("capacity", sc.Capacity0, minCapacity, maxCapacity)
	switch sc.Law {
	case PSKnee:
		in("knee", float64(sc.Knee), minKnee, maxKnee)
		in("PS base", sc.serviceMean(0).Seconds(), 0, maxService.Seconds())
	default:
		in("servers", float64(sc.Servers), minServers, maxServers)
		if sc.Servers > 1 {
			in("service", sc.serviceMean(0).Seconds(), 0, maxService.Seconds())
		}
		if sc.Law == FIFOLogNormal {
			in("sigma", sc.Sigma, minSigma, maxSigma)
		}
		if sc.Law == FIFOPareto {
			in("alpha", sc.Alpha, minAlpha, maxAlpha)
		}
	}
	in("net", float64(sc.Net), float64(minNet), float64(maxNet))
	in("net jitter", sc.NetJitter, 0, maxNetJitter)
	in("duration", float64(sc.Duration), float64(shortestDuration), float64(maxDuration))
	if sc.SLO != minSLO {
		in("SLO / unloaded", float64(sc.SLO)/float64(sc.UnloadedAt(0)), minSLOFactor, maxSLOFactor)
	}
	if sc.SLO < minSLO {
		bad("SLO", sc.SLO)
	}
	if sc.Clients == 0 {
		in("load", sc.Load, minLoad, maxLoad)
		in("rate", sc.Rate, sc.Load*sc.Capacity0*(1-1e-9), sc.Load*sc.Capacity0*(1+1e-9))
	} else {
		in("clients", float64(sc.Clients), minClients, maxClients)
		if sc.Think > 0 {
			in("closed-loop load", sc.Load, minLoad*0.999, maxLoad*1.001)
		}
		if sc.BackoffMin != minBackoff || sc.BackoffMax != maxBackoff {
			bad("backoff", [2]time.Duration{sc.BackoffMin, sc.BackoffMax})
		}
	}
	share, mean := 0.0, 0.0
	for _, r := range sc.Routes {
		share += r.Share
		mean += r.Share * r.Cost
	}
	in("route shares", share, 1, 1)
	in("mean route cost", mean, 1, 1)
	if n := len(sc.Routes); n > 1 {
		for i := 1; i < n; i++ {
			in("cost ratio of neighbouring routes", sc.Routes[i].Cost/sc.Routes[i-1].Cost, min(minCheap, minDear), max(maxCheap, maxDear))
		}
	}
	tr := sc.Trace
	switch tr.Kind {
	case Step, Ramp:
		if tr.Factor < 1 {
			in("capacity fall", tr.Factor, minDown, maxDown)
		} else {
			in("capacity rise", tr.Factor, minUp, maxUp)
		}
		in("change instant", float64(tr.At), 0, float64(sc.Duration))
	case Flap:
		in("flap factor", tr.Factor, minDown, maxDown)
		in("flap period", float64(tr.Period), float64(minFlap), float64(maxFlap))
	case Outage:
		in("outage", float64(tr.Until-tr.At), float64(minOutage), float64(maxOutage))
		in("outage start", float64(tr.At), 0, float64(sc.Duration))
	case Diurnal:
		in("diurnal amplitude", tr.Amp, minAmp, maxAmp)
	case LevelShift:
		if tr.Factor < 1 {
			in("level shift down", 1/tr.Factor, minShiftUp, maxShiftUp)
		} else {
			in("level shift up", tr.Factor, minShiftUp, maxShiftUp)
		}
		if sc.Capacity(0) != sc.Capacity(sc.Duration-1) {
			bad("capacity under a level shift", sc.Capacity(sc.Duration-1))
		}
	case SlowBursts:
		in("bursts", float64(len(tr.Bursts)), 1, maxBursts)
		for _, w := range tr.Bursts {
			in("burst", float64(w.To-w.From), float64(minBurst), float64(maxBurst))
		}
		in("slow share", tr.SlowShare, minSlowShare, maxSlowShare)
		in("slow cost", tr.SlowCost, minSlowCost, maxSlowCost)
	}
	switch sc.Direction {
	case Outbound:
		in("MaxRate / peak capacity", sc.MaxRate/sc.PeakCapacity(), minMaxRate, maxMaxRate)
		if sc.DeadlineMin != sc.DeadlineMax {
			in("shortest deadline / SLO", float64(sc.DeadlineMin)/float64(sc.SLO), minDeadlineFactor, minDeadlineFactor)
			in("longest deadline / SLO", float64(sc.DeadlineMax)/float64(sc.SLO), maxDeadlineFactor, maxDeadlineFactor)
		} else if sc.DeadlineMin != max(fixedTimeout, 2*sc.SLO) {
			bad("fixed timeout", sc.DeadlineMin)
		}
	case Inbound:
		knee := math.Max(float64(max(sc.Servers, sc.Knee)), sc.concurrency())
		in("MaxLimit / knee", float64(sc.MaxLimit)/knee, minMaxLimit, maxMaxLimit+1/knee+1)
		if sc.MaxLimit < 2 {
			bad("MaxLimit", sc.MaxLimit)
		}
	}
}

// A draw is the same scenario with other luck: the same parameters and
// names that say the draw, arrivals that differ, and the same draw twice is
// the same run.
func TestDrawIsTheSameScenarioWithOtherLuck(t *testing.T) {
	t.Parallel()
	s := ValidationSeeds
	s.Draw = 2
	own, other := ValidationSeeds.Scenarios(2), s.Scenarios(2)
	names := s.Names(2)
	for i := range own {
		if own[i].About != other[i].About || other[i].Draw != 2 {
			t.Errorf("%s: draw 2 is %q (draw %d); want the scenario %q", own[i].Name, other[i].About, other[i].Draw, own[i].About)
		}
		if want := own[i].Name + "/d2"; other[i].Name != want || names[i] != want {
			t.Errorf("draw 2 of %s is named %s, Names says %s; want %s", own[i].Name, other[i].Name, names[i], want)
		}
	}
	run := func(sc Scenario) Result {
		sc.Duration = 2 * time.Second // luck shows in the first arrivals
		var r Result
		synctest.Test(t, func(*testing.T) {
			if sc.Direction == Inbound {
				r = RunInbound(&sc, Semaphore(sc.MaxLimit))
			} else {
				r = RunOutbound(&sc, XRate())
			}
		})
		return r
	}
	for i := range own {
		a, again, b := run(own[i]), run(own[i]), run(other[i])
		if a.Sent != again.Sent || a.Good != again.Good {
			t.Errorf("%s: the same draw ran twice sent %d and %d", own[i].Name, a.Sent, again.Sent)
		}
		if a.Sent == b.Sent && a.Good == b.Good {
			t.Errorf("%s: draws 0 and 2 sent %d and answered %d alike: the draw moved no randomness", own[i].Name, a.Sent, a.Good)
		}
	}
}
