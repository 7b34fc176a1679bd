package agileredis_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileredis "github.com/agilelimiter/agilelimiter/redis"
)

// syncBuffer is a log destination safe for the gate's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// outage runs callers through one limiter gated at quota (Instances 4:
// a fallback ceiling of quota/4) against srv, calls disrupt once the gate
// has run on Redis for a second, then heal once the fallback has run for
// 1.5 s, and checks: the fallback within a Timeout or so, pacing at the
// fallback ceiling, no caller past its deadline, the return to the quota
// within a couple of seconds, and one log line each way.
func outage(t *testing.T, srv *server, disrupt, heal func() error) {
	const quota, callTimeout = 200.0, 250 * time.Millisecond
	var logs syncBuffer
	g, err := agileredis.New(agileredis.Config{Client: newClient(t, srv.addr()), Key: uniqueKey(t), Rate: quota, Instances: 4,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 400, InitialRate: 400, Gate: g})
	fallback := g.Stats().FallbackRate // 50/s

	run, stop := context.WithCancel(context.Background())
	var rec recorder
	var late atomic.Int64 // calls that returned past their deadline
	var worst atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for run.Err() == nil {
				ctx, cancel := context.WithTimeout(run, callTimeout)
				begin := time.Now()
				_, err := lim.TakeContext(ctx)
				took := time.Since(begin)
				cancel()
				if err == nil {
					rec.add(time.Now())
				}
				if took > callTimeout+50*time.Millisecond {
					late.Add(1)
				}
				for w := worst.Load(); int64(took) > w && !worst.CompareAndSwap(w, int64(took)); w = worst.Load() {
				}
				if err != nil && !errors.Is(err, agilelimiter.ErrDeadline) && run.Err() == nil {
					time.Sleep(time.Millisecond) // a context that ended: try again
				}
			}
		})
	}
	defer func() { stop(); wg.Wait() }()

	time.Sleep(time.Second)
	if st := g.Stats(); st.Fallback || st.Granted == 0 {
		t.Fatalf("before the outage: %+v; want grants from Redis", st)
	}
	// A blip before the outage (one answer later than Timeout, on a busy
	// machine) falls back too, briefly: what the outage's fallback grants
	// is counted from here.
	granted0 := g.Stats().FallbackGranted
	down := time.Now()
	if err := disrupt(); err != nil {
		t.Fatal(err)
	}
	var toFallback, toGrant time.Duration
	for time.Since(down) < 2*time.Second {
		st := g.Stats()
		if st.Fallback && toFallback == 0 {
			toFallback = time.Since(down)
		}
		if st.FallbackGranted > granted0 {
			toGrant = time.Since(down)
			break
		}
		time.Sleep(500 * time.Microsecond)
	}
	// The first fallback grant waits for the slots already handed out
	// from the last batch: the pacer goes on after them.
	t.Logf("fell back %v after Redis went away (Timeout %v); first fallback grant after %v",
		toFallback.Round(100*time.Microsecond), agileredis.DefaultTimeout, toGrant.Round(100*time.Microsecond))
	if toFallback == 0 || toFallback > 60*time.Millisecond || toGrant == 0 || toGrant > 100*time.Millisecond {
		t.Errorf("fell back %v, first fallback grant %v after Redis went away; want within about a Timeout (%v) and 100 ms",
			toFallback, toGrant, agileredis.DefaultTimeout)
	}
	time.Sleep(1500 * time.Millisecond)
	if !g.Stats().Fallback {
		t.Errorf("Redis still away: %+v; want Fallback", g.Stats())
	}
	up := time.Now()
	fbRate := float64(countIn(rec.all(), down.Add(250*time.Millisecond), up)) / up.Sub(down.Add(250*time.Millisecond)).Seconds()
	t.Logf("admitted %.1f/s while Redis was away; fallback ceiling %v/s", fbRate, fallback)
	if fbRate < 0.7*fallback || fbRate > 1.1*fallback {
		t.Errorf("admitted %.1f/s while Redis was away; want about the fallback ceiling, %v/s", fbRate, fallback)
	}

	if err := heal(); err != nil {
		t.Fatal(err)
	}
	for g.Stats().Fallback && time.Since(up) < 5*time.Second {
		time.Sleep(5 * time.Millisecond)
	}
	back := time.Since(up)
	t.Logf("back on the quota %v after Redis returned", back.Round(time.Millisecond))
	if g.Stats().Fallback || back > 2500*time.Millisecond {
		t.Errorf("Fallback still %v %v after Redis returned; want the quota again within a couple of seconds", g.Stats().Fallback, back)
	}
	time.Sleep(2 * time.Second)
	stop()
	wg.Wait()
	// Back from an outage, the gate keeps to its fallback ceiling for a
	// ProbeInterval and two Timeouts (the others may still pace on their
	// own), then has the quota again.
	after := up.Add(back)
	ts := rec.all()
	capped := float64(countIn(ts, after.Add(100*time.Millisecond), after.Add(900*time.Millisecond))) / 0.8
	again := float64(countIn(ts, after.Add(1200*time.Millisecond), after.Add(2*time.Second))) / 0.8
	t.Logf("admitted %.0f/s in the first second back, %.0f/s after; %+v; worst wait %v", capped, again, g.Stats(), time.Duration(worst.Load()))
	if capped > 1.1*fallback {
		t.Errorf("admitted %.0f/s in the first second after Redis returned; want the fallback ceiling, %v/s, still", capped, fallback)
	}
	if again < 0.7*quota {
		t.Errorf("admitted %.0f/s after Redis returned; want the quota's %v/s again", again, quota)
	}
	if most, _ := maxInWindow(ts, time.Second); most > allowed(quota) {
		t.Errorf("%d admissions in a 1 s window; quota %v", most, quota)
	}
	if n := late.Load(); n > 0 {
		t.Errorf("%d calls returned more than 50 ms past their deadline (worst %v)", n, time.Duration(worst.Load()))
	}
	out := logs.String()
	if strings.Count(out, "level=WARN") != 1 || strings.Count(out, "does not answer") != 1 ||
		strings.Count(out, "level=INFO") != 1 || strings.Count(out, "answers again") != 1 {
		t.Errorf("log:\n%s\nwant one Warn for the fallback and one Info for the recovery", out)
	}
	if st := g.Stats(); st.Outages != 1 {
		t.Errorf("%+v; want one outage", st)
	}
}

// Redis killed mid-run, then started again on the same port.
func TestRedisKilled(t *testing.T) {
	t.Parallel() // its own server: nothing shared with the other tests
	srv := ownServer(t)
	outage(t, srv, func() error { srv.kill(); return nil }, srv.restart)
}

// Four instances sharing a quota lose Redis together and get it back: the
// quota holds throughout, 5% allowed over in any one-second window. While
// Redis is away each paces at Rate/Instances, so together at the quota;
// when it returns, the instances notice at different instants (each probes
// once a second), and the first back keeps to its fallback ceiling until
// the others are back too, instead of taking the whole quota while they
// still pace on their own.
func TestFleetOutage(t *testing.T) {
	t.Parallel() // its own server: nothing shared with the other tests
	srv := ownServer(t)
	const quota, n = 200.0, 4
	insts := newInstances(t, srv.addr(), uniqueKey(t), quota, n, agilelimiter.Config{MaxRate: 200, InitialRate: 200})
	var phases sync.Map
	mark := func(name string) { phases.Store(name, time.Now()) }
	go func() {
		time.Sleep(time.Second)
		mark("kill")
		srv.kill()
		time.Sleep(1500 * time.Millisecond)
		mark("restart")
		if err := srv.restart(); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	per := hammer(insts, 8, 5*time.Second, take)
	var all []time.Time
	for _, ts := range per {
		all = append(all, ts...)
	}
	at := func(name string) time.Time { v, _ := phases.Load(name); tm, _ := v.(time.Time); return tm }
	kill, restart := at("kill"), at("restart")
	most, from := maxInWindow(all, time.Second)
	during := float64(countIn(all, kill.Add(250*time.Millisecond), restart)) / restart.Sub(kill.Add(250*time.Millisecond)).Seconds()
	t.Logf("the most in any 1 s window: %d (from +%v; Redis killed at +%v, restarted at +%v); %.0f/s while away",
		most, from.Sub(start).Round(time.Millisecond), kill.Sub(start).Round(time.Millisecond), restart.Sub(start).Round(time.Millisecond), during)
	for k, in := range insts {
		st := in.gate.Stats()
		t.Logf("instance %d: %+v", k, st)
		if st.Fallback || st.Outages != 1 {
			t.Errorf("instance %d: %+v; want one outage, over", k, st)
		}
	}
	if most > allowed(quota) {
		t.Errorf("%d admissions in one 1 s window; the quota is %v (5%% allowed over: %d)", most, quota, allowed(quota))
	}
	if during < 0.7*quota {
		t.Errorf("%.0f admissions/s while Redis was away; want about the quota, %v, from the fallback ceilings", during, quota)
	}
}
