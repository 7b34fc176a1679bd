package eval

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// A limiter's path replayed through a fixed schedule gets what the limiter
// got: the path is the whole of what the controller did to the run.
func TestAPathReplayedGetsWhatTheLimiterGot(t *testing.T) {
	sc := Generate(Inbound, 159) // a processor past its knee, no refusals
	sc.Duration = 5 * time.Second
	var law, recorded, replayed Result
	var path []LimitAt
	synctest.Test(t, func(t *testing.T) { law = RunInbound(&sc, AgileInbound()) })
	synctest.Test(t, func(t *testing.T) { recorded, path = RecordPath(&sc) })
	synctest.Test(t, func(t *testing.T) { replayed = RunInbound(&sc, Scheduled("path", path)) })
	if recorded.Good != law.Good || recorded.Sent != law.Sent {
		t.Fatalf("recording the path changed the run: %d of %d good, against %d of %d", recorded.Good, recorded.Sent, law.Good, law.Sent)
	}
	if len(path) < 40 {
		t.Fatalf("a path of %d steps over 5 s of 100 ms ticks", len(path))
	}
	if replayed.Good != law.Good || replayed.Sent != law.Sent {
		t.Fatalf("the replayed path got %d of %d good, the limiter %d of %d", replayed.Good, replayed.Sent, law.Good, law.Sent)
	}
	// A different path gets something else: the replay reads its path.
	var steady Result
	synctest.Test(t, func(t *testing.T) { steady = RunInbound(&sc, Scheduled("steady", HeldAtMean(path, sc.Duration))) })
	if steady.Good == law.Good {
		t.Fatalf("the path's mean held steady got exactly what the path got (%d)", law.Good)
	}
}

func TestPathVariants(t *testing.T) {
	ms := time.Millisecond
	path := []LimitAt{
		{0, 40, "initial"}, {100 * ms, 20, "window"}, {200 * ms, 12, "floor-probe"},
		{300 * ms, 12, "settle"}, {400 * ms, 24, "floor"}, {500 * ms, 30, "window"},
	}
	np := WithoutProbes(path)
	want := []int{40, 20, 20, 20, 24, 30}
	for i, p := range np {
		if p.Limit != want[i] || p.At != path[i].At {
			t.Errorf("without probes, step %d: %d at %v, want %d at %v", i, p.Limit, p.At, want[i], path[i].At)
		}
	}
	if path[2].Limit != 12 {
		t.Errorf("WithoutProbes changed its argument")
	}
	// 40·0.1 + 20·0.1 + 12·0.2 + 24·0.1 + 30·0.5 = 25.8 over 1 s.
	if s := HeldAtMean(path, time.Second); len(s) != 1 || s[0].Limit != 26 || s[0].At != 0 {
		t.Errorf("HeldAtMean = %+v, want 26 from 0", s)
	}
	// The first 250 ms as they were, then (12·0.15 + 24·0.1 + 30·0.5) / 0.75
	// = 25.6 held.
	after := HeldAfter(path, 250*ms, time.Second)
	wantAfter := []LimitAt{path[0], path[1], path[2], {250 * ms, 26, "steady"}}
	if !slices.Equal(after, wantAfter) {
		t.Errorf("HeldAfter = %+v, want %+v", after, wantAfter)
	}
	if s := HeldAfter(path, 0, time.Second); !slices.Equal(s, HeldAtMean(path, time.Second)) {
		t.Errorf("HeldAfter from 0 = %+v, want HeldAtMean's %+v", s, HeldAtMean(path, time.Second))
	}
	sched := &schedule{path: path}
	for _, c := range []struct {
		at   time.Duration
		want int64
	}{{0, 40}, {99 * ms, 40}, {100 * ms, 20}, {250 * ms, 12}, {10 * time.Second, 30}} {
		synctest.Test(t, func(t *testing.T) {
			sched.begin = time.Now()
			time.Sleep(c.at)
			if got := sched.limit(); got != c.want {
				t.Errorf("limit at %v = %d, want %d", c.at, got, c.want)
			}
		})
	}
}
