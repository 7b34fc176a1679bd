package agileredis_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileredis "github.com/agilelimiter/agilelimiter/redis"
)

// The environment of a helper process: TestProcesses re-executes this test
// binary as several instances of a service, each a process of its own.
const (
	envHelper = "AGILEREDIS_HELPER" // "1" in a helper
	envAddr   = "AGILEREDIS_HELPER_ADDR"
	envKey    = "AGILEREDIS_HELPER_KEY"
	envStart  = "AGILEREDIS_HELPER_START" // Unix nanoseconds: when to begin
	envRun    = "AGILEREDIS_HELPER_RUN"   // how long to run, a time.Duration
	envRate   = "AGILEREDIS_HELPER_RATE"
	envCount  = "AGILEREDIS_HELPER_COUNT" // the processes sharing the quota
)

// Three processes, each one Limiter of MaxRate 100 behind its own gate,
// share a quota of 150 calls a second: their merged admissions (the
// machine's wall clock, which they share) never exceed it by more than 5%
// in any one-second window, and together get close to it.
func TestProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three processes for three seconds")
	}
	addr := redisAddr(t)
	const procs, quota, run = 3, 150.0, 3 * time.Second
	key := uniqueKey(t)
	start := time.Now().Add(500 * time.Millisecond) // after every process has started
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, procs)
	errs := make([]error, procs)
	for i := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v=false")
		cmd.Env = append(os.Environ(), envHelper+"=1", envAddr+"="+addr, envKey+"="+key,
			envStart+"="+strconv.FormatInt(start.UnixNano(), 10), envRun+"="+run.String(),
			envRate+"="+strconv.FormatFloat(quota, 'g', -1, 64), envCount+"="+strconv.Itoa(procs))
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	wg.Wait()
	var all []time.Time
	for i := range procs {
		if errs[i] != nil {
			t.Fatalf("process %d: %v\n%s", i, errs[i], outs[i].String())
		}
		var n int
		sc := bufio.NewScanner(&outs[i])
		for sc.Scan() {
			line := sc.Text()
			if ns, ok := strings.CutPrefix(line, "admit "); ok {
				v, err := strconv.ParseInt(ns, 10, 64)
				if err != nil {
					t.Fatalf("process %d: %q: %v", i, line, err)
				}
				all = append(all, time.Unix(0, v))
				n++
			} else if strings.HasPrefix(line, "stats ") {
				t.Logf("process %d: %d admissions; %s", i, n, line)
			}
		}
		if n == 0 {
			t.Errorf("process %d admitted nothing:\n%s", i, outs[i].String())
		}
	}
	most, at := maxInWindow(all, time.Second)
	rate := float64(len(all)) / run.Seconds()
	t.Logf("%d processes: %d admissions in %v (%.0f/s); the most in any 1 s window: %d (from +%v), quota %v",
		procs, len(all), run, rate, most, at.Sub(start).Round(time.Millisecond), quota)
	if most > allowed(quota) {
		t.Errorf("%d admissions in one 1 s window; the quota is %v (5%% allowed over: %d)", most, quota, allowed(quota))
	}
	if rate < 0.85*quota {
		t.Errorf("together %.0f admissions/s; want at least 85%% of the quota %v", rate, quota)
	}
}

// TestHelperProcess is one instance of TestProcesses; it does nothing in a
// normal run.
func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) != "1" {
		return
	}
	start, _ := strconv.ParseInt(os.Getenv(envStart), 10, 64)
	run, _ := time.ParseDuration(os.Getenv(envRun))
	rate, _ := strconv.ParseFloat(os.Getenv(envRate), 64)
	count, _ := strconv.Atoi(os.Getenv(envCount))
	g, err := agileredis.New(agileredis.Config{Client: newClient(t, os.Getenv(envAddr)), Key: os.Getenv(envKey), Rate: rate, Instances: count})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, InitialRate: 100, Gate: g})
	time.Sleep(time.Until(time.Unix(0, start)))
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	var rec recorder
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := lim.TakeContext(ctx)
				if err == nil {
					rec.add(time.Now())
				} else if errors.Is(err, agilelimiter.ErrDeadline) {
					return // no slot is left before the run's end
				}
			}
		})
	}
	wg.Wait()
	w := bufio.NewWriter(os.Stdout)
	for _, ts := range rec.all() {
		fmt.Fprintf(w, "admit %d\n", ts.UnixNano())
	}
	fmt.Fprintf(w, "stats %+v\n", g.Stats())
	_ = w.Flush()
}
