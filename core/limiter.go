package agilelimiter

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"time"
)

// Limiter paces calls out to one dependency. A leaky bucket grants one slot
// every 1/rate seconds, with no burst; a controller started by [Limiter.Start]
// reads the round trips of admitted calls every TickInterval and moves the rate
// inside [MinRate, MaxRate]. Until Start is called the rate stays at InitialRate.
//
// Most callers want [Limiter.Do] (or [Do], [Limiter.DoContext]): it waits for a
// slot, times fn from the moment the slot is granted, and feeds the result to the
// controller through Config.Classify. [Limiter.Take] with [Limiter.Observe] or
// [Limiter.Unavailable] is the manual path for what Do cannot time.
//
// A Limiter is safe for concurrent use. Create it with [New].
type Limiter struct {
	brain
	b bucket

	rate        atomic.Uint64 // float64 bits of the current rate
	admitted    atomic.Uint64
	rejDeadline atomic.Uint64
	canceled    atomic.Uint64
	waits       histogram // non-zero waits; zero waits are admitted minus these
	waitP99     atomic.Int64
	reserve     atomic.Int64 // the round trip a call needs: max(p99, fast) at the last tick

	// per-tick bookkeeping, under brain.mu
	lastAdmitted, lastRejected uint64
	waitSnap                   snapshot
}

// New returns a Limiter for c. It panics with a message naming the field if c
// is invalid (see [Config.Validate]). Call [Limiter.Start] to run the controller
// and [Limiter.Stop] when done with it.
func New(c Config) *Limiter {
	s, err := c.settings()
	if err != nil {
		panic(err)
	}
	l := &Limiter{}
	l.brain.init(s)
	l.perSecond = true
	l.b.init(s.initial, s.min, s.max, s.gate)
	l.rate.Store(math.Float64bits(s.initial))
	return l
}

// Start runs the controller in one goroutine, ticking every TickInterval. It
// is idempotent; after Stop it may be called again.
func (l *Limiter) Start() { l.brain.start(l) }

// Stop ends the controller and waits for its goroutine to return; the rate
// stays where it was. Callers waiting in Take are not released early: they get
// their slots at the current rate, which alone paces them from then on (no
// tick is left to count the window's room). Stop is idempotent.
func (l *Limiter) Stop() {
	l.brain.halt()
	l.b.setQuota(math.Inf(1))
}

// Take blocks until the caller's slot and returns the instant it was granted
// (the send time to measure a round trip from). Use
// it with Observe or Unavailable for calls Do cannot time; prefer TakeContext
// when the caller has a deadline.
func (l *Limiter) Take() time.Time {
	t, w, _ := l.b.take(context.Background(), 0)
	l.admit(w)
	return t
}

// TakeContext is Take honouring ctx. When the caller would have to wait and
// its slot would come after the context's deadline, less a round trip (the
// last round's P99, and at least SLOTarget when one is set: a call started
// later would likely time out, wasting the dependency's work on a truncated
// sample), it returns
// at once [ErrDeadline]; it returns ErrDeadline too if the rate fell while it
// waited and that point passed. When ctx ends while waiting it returns
// promptly with ctx.Err(). In every such case no slot is consumed. A slot that
// is free now is always taken, whatever the deadline.
func (l *Limiter) TakeContext(ctx context.Context) (time.Time, error) {
	t, w, err := l.b.take(ctx, time.Duration(l.reserve.Load()))
	if err != nil {
		if err == ErrDeadline {
			l.rejDeadline.Add(1)
		} else {
			l.canceled.Add(1)
		}
		return t, err
	}
	l.admit(w)
	return t, nil
}

func (l *Limiter) admit(wait time.Duration) {
	l.admitted.Add(1)
	if wait > 0 {
		l.waits.record(wait)
	}
}

// Do waits for a slot, runs fn and feeds the controller fn's round trip: the
// clock starts when the slot is granted, so the wait in the bucket is never
// part of a sample. A non-nil error goes through Config.Classify; an error that
// is context.Canceled is dropped. Do returns fn's error.
func (l *Limiter) Do(fn func() error) error {
	start := l.Take() // the instant the slot was granted: one clock read saved
	err := fn()
	l.finish(false, err, time.Since(start))
	return err
}

// DoContext is Do honouring ctx: it returns the TakeContext error without
// running fn when no slot can be had in time. A call whose ctx was cancelled
// by the time fn fails is dropped; a deadline that expired is a timeout and
// counts.
func (l *Limiter) DoContext(ctx context.Context, fn func(context.Context) error) error {
	start, err := l.TakeContext(ctx)
	if err != nil {
		return err
	}
	err = fn(ctx)
	l.finish(err != nil && errors.Is(ctx.Err(), context.Canceled), err, time.Since(start))
	return err
}

// Do is [Limiter.Do] for a call that returns a value.
func Do[T any](l *Limiter, fn func() (T, error)) (T, error) {
	start := l.Take()
	v, err := fn()
	l.finish(false, err, time.Since(start))
	return v, err
}

// Observe records the round trip of one call admitted by Take. Measure from
// the moment Take returned, never including the wait. Observe is lock-free.
func (l *Limiter) Observe(d time.Duration) { l.brain.observe(d) }

// Unavailable records one call admitted by Take that never reached the
// dependency or was refused for lack of capacity; see [Unreachable]. Call it
// instead of Observe for that attempt, never both.
func (l *Limiter) Unavailable() { l.brain.unavailable() }

// Record feeds the controller one attempt's outcome: Reached observes d,
// Unreachable counts as Unavailable, Aborted records nothing. It is how the
// HTTP adapters report a verdict.
func (l *Limiter) Record(o Outcome, d time.Duration) { l.brain.record(o, d) }

// PauseUntil lets no call out before t: the dependency asked for a pause
// (429 or 503 with Retry-After; httpclient and agileresty call it for you).
// Callers keep waiting for their slots, and a TakeContext caller whose
// deadline, less a round trip, comes before t is refused at once with
// ErrDeadline, whether it was waiting already or arrives during the pause.
// A t earlier than a pause in force changes nothing: a later, shorter
// Retry-After does not shorten an earlier, longer one. A pause is capped at
// 24 hours from now, as ParseRetryAfter caps the header. The controller reads
// nothing during a pause (no answers are not blindness, and a queue of
// callers is not demand the dependency can take); when it ends the window
// restarts at its floor and startup doubles it back once answers come, as
// after an outage, and the bucket lets the waiting callers out one slot
// apart, never in the same instant.
func (l *Limiter) PauseUntil(t time.Time) {
	if limit := time.Now().Add(maxRetryAfter); t.After(limit) {
		t = limit
	}
	l.b.pauseUntil(t)
}

// Rate returns the rate calls are let out at now, in requests per second:
// the rate the window carries at the latency seen (Stats.Limit), more while
// the window has room to refill (never past MaxRate), less while it is full
// (never below MinRate), and 0 during a pause (PauseUntil). It changes every
// tick; Stats.Limit is the steadier figure to chart.
func (l *Limiter) Rate() float64 { return math.Float64frombits(l.rate.Load()) }

// Stats returns the controller's view after the last tick and the live
// counters.
func (l *Limiter) Stats() Stats {
	var st Stats
	l.brain.view(&st)
	l.live(&st)
	return st
}

// live implements actuator.
func (l *Limiter) live(st *Stats) {
	st.Rate = l.Rate()
	st.Admitted = l.admitted.Load()
	st.RejectedDeadline = l.rejDeadline.Load()
	st.Canceled = l.canceled.Load()
	st.Waiting = int(l.b.queued.Load())
	st.WaitP99 = time.Duration(l.waitP99.Load())
	st.PausedUntil = l.b.pausedUntil(time.Now())
}

// load implements actuator: demand reached the rate when the bucket granted
// at least 80% of the tick's slots, refused someone for a deadline, or has
// callers queued now.
func (l *Limiter) load(rate float64, dt time.Duration) (bool, float64) {
	adm, rej := l.admitted.Load(), l.rejDeadline.Load()
	dAdm, dRej := adm-l.lastAdmitted, rej-l.lastRejected
	l.lastAdmitted, l.lastRejected = adm, rej

	l.waits.drain(&l.waitSnap)
	if zeros := dAdm - min(dAdm, l.waitSnap.n); zeros > 0 {
		l.waitSnap.counts[0] += zeros
		l.waitSnap.n += zeros
	}
	l.waitP99.Store(int64(l.waitSnap.quantile(0.99, 0, 0)))

	saturated := float64(dAdm) >= 0.8*rate*dt.Seconds() || dRej > 0 || l.b.queued.Load() > 0
	return saturated, float64(dAdm) / dt.Seconds()
}

// held implements actuator: a rate limit does not know what is in flight
// (a call taken is not released); the controller counts it.
func (l *Limiter) held() float64 { return -1 }

// paused implements actuator.
func (l *Limiter) paused(now time.Time) bool { return !l.b.pausedUntil(now).IsZero() }

// apply implements actuator. During a pause the bucket keeps the pace for
// when it ends, and Rate says what goes out now: nothing.
func (l *Limiter) apply(rate float64, paused bool) {
	l.reserve.Store(int64(l.ctl.reserve()))
	l.b.setRate(rate, l.ctl.quota)
	if paused {
		rate = 0
	}
	l.rate.Store(math.Float64bits(rate))
}
