//go:build unix

package agileredis_test

import (
	"context"
	"log/slog"
	"sync"
	"syscall"
	"testing"
	"time"

	agileredis "github.com/agilelimiter/agilelimiter/redis"
)

// Redis stops answering (SIGSTOP) mid-run, then resumes (SIGCONT). The
// client keeps its default options, so a call on the wire waits for its
// ReadTimeout (5 s): the gate's own Timeout is what sends it to the fallback.
func TestRedisHangs(t *testing.T) {
	t.Parallel() // its own server: nothing shared with the other tests
	srv := ownServer(t)
	outage(t, srv,
		func() error { return srv.signal(syscall.SIGSTOP) },
		func() error { return srv.signal(syscall.SIGCONT) })
}

// Redis pauses for 150 ms, shorter than a ProbeInterval: the gate's
// callers pace locally from Timeout on, and the late answer, when Redis
// resumes, returns the gate to the quota at once. A blip: no outage, no
// log line.
func TestRedisBlip(t *testing.T) {
	t.Parallel() // its own server: nothing shared with the other tests
	srv := ownServer(t)
	var logs syncBuffer
	g, err := agileredis.New(agileredis.Config{Client: newClient(t, srv.addr()), Key: uniqueKey(t), Rate: 200, Instances: 4,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for g.Acquire(ctx, time.Time{}) == nil {
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	time.Sleep(300 * time.Millisecond)
	if err := srv.signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	paused := g.Stats()
	if err := srv.signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	for g.Stats().Fallback && time.Since(resumed) < time.Second {
		time.Sleep(time.Millisecond)
	}
	back := time.Since(resumed)
	time.Sleep(200 * time.Millisecond)
	st := g.Stats()
	t.Logf("paused: %+v; back on the quota %v after Redis resumed; %+v", paused, back.Round(100*time.Microsecond), st)
	if !paused.Fallback || paused.FallbackGranted == 0 {
		t.Errorf("while Redis was paused: %+v; want pacing locally", paused)
	}
	if st.Fallback || back > 200*time.Millisecond || st.Fallbacks != 1 || st.Outages != 0 {
		t.Errorf("%+v, back after %v; want one fallback, no outage, and the quota again as soon as Redis answered", st, back)
	}
	if out := logs.String(); out != "" {
		t.Errorf("log:\n%s\nwant nothing logged for a blip", out)
	}
}
