package agilelimiter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// brain is what both limiters share around the controller: the sample
// histogram, the Unavailable counter, the tick loop and the last tick's view.
// The hot path touches only atomics here; mu guards the controller and the
// lifecycle, and is taken once a tick and by Stats.
type brain struct {
	s           settings
	perSecond   bool // the limit is a rate: delivered throughput is in its units
	hist        histogram
	unreachable atomic.Uint64
	// hold, if set, is called for each Unavailable call: a semaphore keeps
	// the refused request's slot until the next tick (ConcurrencyLimiter.hold).
	hold func()
	// aborted counts reported calls that carry no sample (Aborted, or
	// cancelled in Do): they took a slot and came back, so a rate limit counts
	// them in what got through.
	aborted atomic.Uint64

	mu        sync.Mutex
	ctl       *controller
	snap      snapshot
	last      time.Time
	ticks     uint64
	decisions DecisionCounts
	delivered float64 // calls back per second in the last tick
	measured  uint64  // samples and Unavailable calls since New
	stop      chan struct{}
	stopped   chan struct{}
	report    reporter // under the tick loop only: Logger's state
}

// tick is one tick's evidence, as the brain hands it to the controller.
type tick struct {
	hist        *snapshot // real samples
	unreachable uint64    // Unavailable calls
	saturated   bool      // demand reached the limit during the tick
	paused      bool      // the resource asked for a pause that is in force
	delivered   float64   // calls reported back per second, for a rate limit; 0 if unknown
	admitted    float64   // slots granted per second, for a rate limit; 0 if unknown
	dt          time.Duration
	now         time.Time // when the tick ran
	// completions counts the calls that came back during the tick, for
	// either limiter: samples, Unavailable calls and Aborted answers.
	completions float64
	// held is how many calls are in flight at the tick, if the actuator
	// knows it (a semaphore); −1 if not (a rate limit counts its own).
	held float64
}

// actuator is the half of a limiter the brain drives once a tick.
type actuator interface {
	// load reports whether demand reached limit since the last tick, dt ago,
	// and how many slots per second were granted (0 if the actuator does not
	// pace in time), and resets the per-tick gauges it reads.
	load(limit float64, dt time.Duration) (saturated bool, admitted float64)
	// apply pushes the new limit to the actuator; paused is the tick's
	// reading of paused.
	apply(limit float64, paused bool)
	// live fills the actuator's live counters and gauges into st.
	live(st *Stats)
	// held returns how many calls are in flight now, or −1 if the
	// actuator does not know.
	held() float64
	// paused reports whether a pause the resource asked for is in force at
	// now (see Limiter.PauseUntil).
	paused(now time.Time) bool
}

func (b *brain) init(s settings) {
	b.s = s
	b.ctl = newController(s)
	b.report.init(s)
}

// observe records one round trip.
func (b *brain) observe(d time.Duration) { b.hist.record(d) }

// unavailable records one call that never reached the resource.
func (b *brain) unavailable() {
	b.unreachable.Add(1)
	if b.hold != nil {
		b.hold()
	}
}

// record applies an outcome to one duration.
func (b *brain) record(o Outcome, d time.Duration) {
	switch o {
	case Reached:
		b.hist.record(d)
	case Unreachable:
		b.unavailable()
	default:
		b.aborted.Add(1) // it came back, but carries no sample
	}
}

// finish feeds the controller the result of one call made through Do. A call
// whose caller cancelled it (canceled, or an error that is context.Canceled)
// is a truncated measurement and is dropped before Classify runs; a deadline
// that expired is a timeout, and counts.
func (b *brain) finish(canceled bool, err error, d time.Duration) {
	if err == nil {
		b.hist.record(d)
		return
	}
	if canceled || errors.Is(err, context.Canceled) {
		b.aborted.Add(1)
		return
	}
	o := Reached
	if b.s.classify != nil {
		o = b.s.classify(err)
	}
	b.record(o, d)
}

// start runs the tick loop for a until stop. It is idempotent.
func (b *brain) start(a actuator) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stop != nil {
		return
	}
	b.stop, b.stopped = make(chan struct{}), make(chan struct{})
	b.last = time.Now()
	go b.run(a, b.stop, b.stopped)
}

// halt ends the tick loop and waits for its goroutine to return. It is
// idempotent.
func (b *brain) halt() {
	b.mu.Lock()
	stop, stopped := b.stop, b.stopped
	b.stop, b.stopped = nil, nil
	b.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-stopped
}

func (b *brain) run(a actuator, stop <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	t := time.NewTicker(b.s.tick)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			b.tick(a, now)
		}
	}
}

// tick runs the controller once and pushes its limit to a. With OnTick or
// Logger set it then builds the tick's Stats and hands them over, outside
// the lock, so a hook may call back into the limiter.
func (b *brain) tick(a actuator, now time.Time) {
	b.mu.Lock()
	dt := now.Sub(b.last)
	b.last = now
	b.hist.drain(&b.snap)
	in := tick{hist: &b.snap, unreachable: b.unreachable.Swap(0), dt: dt, now: now}
	aborted := b.aborted.Swap(0)
	in.completions = float64(b.snap.n + in.unreachable + aborted)
	in.saturated, in.admitted = a.load(b.ctl.limit, dt)
	in.paused = a.paused(now)
	in.held = a.held()
	// A rate limit compares what it sends with what comes back only while
	// most answers are samples. When most carry none (cache hits, cheap 4xx
	// routed as Aborted), the samples describe a minority of the calls paced:
	// the controller then gets the samples' own throughput and no send rate.
	if b.perSecond && dt > 0 {
		if aborted <= b.snap.n {
			in.delivered = float64(b.snap.n+aborted) / dt.Seconds()
		} else {
			in.delivered, in.admitted = float64(b.snap.n)/dt.Seconds(), 0
		}
	}
	b.ctl.step(in)
	a.apply(b.ctl.pace(in), in.paused)
	b.ticks++
	b.decisions.n[b.ctl.view.decision]++
	b.measured += b.snap.n + in.unreachable
	if dt > 0 {
		b.delivered = in.completions / dt.Seconds()
	}
	watched := b.s.onTick != nil || b.s.logger != nil
	var st Stats
	if watched {
		b.viewLocked(&st)
	}
	b.mu.Unlock()
	if !watched {
		return
	}
	a.live(&st)
	if b.s.onTick != nil {
		b.s.onTick(st)
	}
	if b.s.logger != nil {
		b.report.tick(&st, now)
	}
}

// view fills the controller's part of st. The caller fills the rest.
func (b *brain) view(st *Stats) {
	b.mu.Lock()
	b.viewLocked(st)
	b.mu.Unlock()
}

func (b *brain) viewLocked(st *Stats) {
	b.ctl.fill(st)
	st.Limit = b.ctl.limit
	st.Ticks = b.ticks
	st.Decisions = b.decisions
	st.Delivered = b.delivered
	st.Measured = b.measured
	st.Min, st.Max = b.s.min, b.s.max
}
