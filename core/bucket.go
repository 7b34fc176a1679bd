package agilelimiter

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// bucket is the outbound actuator: a leaky bucket that grants one slot every
// interval, with no burst. Callers that must wait queue in FIFO order; only the
// head of the queue holds a timer, for the next slot computed from the current
// interval. So a rate change applies at once to everyone already waiting: the
// head re-arms its timer at the new spacing, and nobody was booked ahead at the
// old one.
//
// The controller also sets a quota each tick: how many calls the window has
// room for until the next tick. A rate alone would let one more out
// whenever the first slot was due at once; once the quota is spent the
// bucket waits for the next tick, or MinRate's spacing, whichever is first.
//
// A caller that finds no queue and a slot already due takes it without
// allocating, waiting or touching a timer: that is the path Do takes whenever
// the limiter is not the binding constraint.
type bucket struct {
	mu            sync.Mutex
	interval      time.Duration // current spacing between slots
	minInterval   time.Duration // 1/MaxRate rounded up: the ceiling, enforced here too
	last          time.Time     // planned time of the last slot granted
	pause         time.Time     // no slot before it (PauseUntil); zero: none
	quota         float64       // slots it may still grant until the next setRate; +Inf: no count
	floorInterval time.Duration // 1/MinRate: the spacing once the quota is spent
	gate          Gate          // asked by the head of the queue at its slot (Config.Gate); nil: none
	head, tail    *waiter
	queued        atomic.Int64
	pool          sync.Pool // *waiter; per bucket, so timers never cross synctest bubbles
}

type waiter struct {
	prev, next *waiter
	wake       chan struct{} // capacity 1: "look again"
	timer      *time.Timer
	gated      bool // the gate granted this waiter's call
}

// maxInterval is the widest spacing a bucket keeps: MinAllowedRate's. A
// smaller rate (only a configuration that skipped Validate could ask for
// one) is spaced as MinAllowedRate, never wrapped past int64 into a spacing
// shorter than MaxRate's: the arithmetic saturates closed, not open.
var maxInterval = time.Duration(math.Ceil(float64(time.Second) / MinAllowedRate))

// intervalFor returns the spacing for rate, rounded up to a whole nanosecond so
// that no one-second window ever holds more than rate slots, and at most
// maxInterval.
func intervalFor(rate float64) time.Duration {
	iv := math.Ceil(float64(time.Second) / rate)
	if !(iv < float64(maxInterval)) { // NaN and +Inf included
		return maxInterval
	}
	return time.Duration(max(iv, 1))
}

// mulSat returns d·n, saturated at the largest Duration.
func mulSat(d time.Duration, n int64) time.Duration {
	if d > 0 && n > math.MaxInt64/int64(d) {
		return math.MaxInt64
	}
	return d * time.Duration(n)
}

func (b *bucket) init(rate, minRate, maxRate float64, gate Gate) {
	b.gate = gate
	b.floorInterval = intervalFor(minRate)
	b.minInterval = intervalFor(maxRate)
	b.interval = max(intervalFor(rate), b.minInterval)
	b.quota = math.Inf(1)
}

// setRate changes the spacing and the quota (how many slots it may grant
// until the next setRate; +Inf for no count) and wakes the head of the
// queue so that it re-arms its timer at once.
func (b *bucket) setRate(rate, quota float64) {
	iv := max(intervalFor(rate), b.minInterval)
	b.mu.Lock()
	b.interval = iv
	b.setQuotaLocked(quota)
	b.mu.Unlock()
}

// setQuota sets how many slots the bucket may grant until the next
// setRate (+Inf: no count) and wakes the head of the queue.
func (b *bucket) setQuota(quota float64) {
	b.mu.Lock()
	b.setQuotaLocked(quota)
	b.mu.Unlock()
}

// setQuotaLocked is setQuota with mu held: a rate and its quota change
// together, never one seen without the other.
func (b *bucket) setQuotaLocked(quota float64) {
	b.quota = quota
	if b.head != nil {
		notify(b.head.wake)
	}
}

// next is the earliest instant the next slot may be granted at the rate:
// one interval after the last, and not before the end of a pause. The
// caller holds mu.
func (b *bucket) next() time.Time {
	slot := b.last.Add(b.interval)
	if b.pause.After(slot) {
		return b.pause
	}
	return slot
}

// due is next while the quota lasts. Once it is spent, the next slot is
// MinRate's spacing after the last, unless the controller's next tick
// renews the quota first (setRate wakes the head). What a caller would
// wait is judged by next: the tick comes sooner than MinRate's slot.
func (b *bucket) due() time.Time {
	iv := b.interval
	if b.quota < 1 {
		iv = max(iv, b.floorInterval)
	}
	slot := b.last.Add(iv)
	if b.pause.After(slot) {
		return b.pause
	}
	return slot
}

// pauseUntil grants no slot before t; a t earlier than a pause already in
// force changes nothing. Every waiter is woken: the head re-arms its timer
// for the pause's end, and a waiter whose deadline comes first leaves at
// once.
func (b *bucket) pauseUntil(t time.Time) {
	b.mu.Lock()
	if t.After(b.pause) {
		b.pause = t
		for w := b.head; w != nil; w = w.next {
			notify(w.wake)
		}
	}
	b.mu.Unlock()
}

// pausedUntil returns the end of the pause in force at now, or zero.
func (b *bucket) pausedUntil(now time.Time) time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pause.After(now) {
		return b.pause
	}
	return time.Time{}
}

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// take returns the time of the caller's slot and how long it waited. With a
// context that never ends and has no deadline it cannot fail.
//
// A caller that must wait needs its slot to come at least reserve (a round
// trip) before its deadline: a call that starts with less time
// left would only time out, waste the dependency's work and hand the
// controller a truncated sample that reads as a fast dependency. So it is
// refused at once, and again at its slot if the rate fell while it waited;
// either way it consumes nothing. A caller whose slot is free now always goes.
func (b *bucket) take(ctx context.Context, reserve time.Duration) (time.Time, time.Duration, error) {
	done := ctx.Done()
	if done != nil {
		if err := ctx.Err(); err != nil {
			return time.Time{}, 0, err
		}
	}
	b.mu.Lock()
	start := time.Now()
	now := start
	if b.head == nil && b.gate == nil {
		if slot := b.due(); !slot.After(now) {
			b.last = now
			b.quota--
			b.mu.Unlock()
			return now, 0, nil
		}
	}
	dl, hasDeadline := ctx.Deadline()
	dl = dl.Add(-reserve)
	if hasDeadline {
		// The earliest this caller could go, at the current rate.
		est := b.next().Add(mulSat(b.interval, b.queued.Load()))
		if est.After(dl) {
			b.mu.Unlock()
			return time.Time{}, 0, ErrDeadline
		}
	}
	w := b.getWaiter()
	b.push(w)
	b.mu.Unlock()

	for {
		b.mu.Lock()
		if hasDeadline && b.pause.After(dl) {
			// A pause that outlasts this caller's deadline: it leaves now
			// rather than when its context ends, as a caller arriving
			// during the pause would.
			b.pop(w)
			b.mu.Unlock()
			b.putWaiter(w)
			return time.Time{}, 0, ErrDeadline
		}
		if b.head != w {
			b.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-done:
				return time.Time{}, 0, b.cancel(w, ctx)
			}
		}
		now := time.Now()
		slot := b.due()
		if !slot.After(now) && hasDeadline && now.After(dl) {
			b.pop(w)
			b.mu.Unlock()
			b.putWaiter(w)
			return time.Time{}, 0, ErrDeadline
		}
		if !slot.After(now) && b.gate != nil && !w.gated {
			// The local slot is due: ask the gate, still the head, so
			// no one behind goes meanwhile. A call goes out once both
			// agree: its send keeps the local spacing (the grant below
			// is at or after this slot) and the gate's (it is after
			// the gate's grant), whichever binds, never a queue of
			// one released at the other's pace.
			b.mu.Unlock()
			var cutoff time.Time
			if hasDeadline {
				cutoff = dl
			}
			if err := b.gate.Acquire(ctx, cutoff); err != nil {
				b.mu.Lock()
				b.pop(w)
				b.mu.Unlock()
				b.putWaiter(w)
				if errors.Is(err, ErrDeadline) {
					return time.Time{}, 0, ErrDeadline
				}
				return time.Time{}, 0, err
			}
			w.gated = true
			continue
		}
		if !slot.After(now) {
			b.quota-- // below one (MinRate's slot), until the next tick sets it
			// Woken at or after the slot (by the timer, or by a rate change
			// that moved the slot into the past). Keep to the schedule, so
			// timer latency does not erode the rate, but never let the next
			// slot come sooner than 1/MaxRate after this one: the ceiling
			// holds between actual grants, not only planned ones. Late by a
			// whole interval, start the schedule afresh: no bursts.
			b.last = slot
			if w.gated {
				// The gate held the call past its slot: the local
				// spacing runs from when it goes out.
				b.last = now
			} else if late := now.Sub(slot); late >= b.interval {
				// Late by whole intervals: skip the slots missed, keeping the
				// schedule's phase. Anchored on now instead, the schedule
				// would start on the instant of the tick that moved the
				// rate, and its slots would fall on later ticks' instants.
				b.last = slot.Add(late / b.interval * b.interval)
			}
			if next := now.Add(b.minInterval); b.last.Add(b.interval).Before(next) {
				b.last = next.Add(-b.interval)
			}
			b.pop(w)
			b.mu.Unlock()
			b.putWaiter(w)
			return now, now.Sub(start), nil
		}
		b.mu.Unlock()
		w.timer.Reset(slot.Sub(now))
		select {
		case <-w.timer.C:
		case <-w.wake:
			w.timer.Stop()
		case <-done:
			w.timer.Stop()
			return time.Time{}, 0, b.cancel(w, ctx)
		}
	}
}

// cancel takes w out of the queue after its context ended.
func (b *bucket) cancel(w *waiter, ctx context.Context) error {
	b.mu.Lock()
	b.pop(w)
	b.mu.Unlock()
	b.putWaiter(w)
	return ctx.Err()
}

func (b *bucket) push(w *waiter) {
	w.prev, w.next = b.tail, nil
	if b.tail == nil {
		b.head = w
	} else {
		b.tail.next = w
	}
	b.tail = w
	b.queued.Add(1)
}

// pop unlinks w and, if w was the head, wakes the next one so it arms its timer.
func (b *bucket) pop(w *waiter) {
	if w.prev == nil {
		b.head = w.next
		if b.head != nil {
			notify(b.head.wake)
		}
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		b.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next = nil, nil
	b.queued.Add(-1)
}

func (b *bucket) getWaiter() *waiter {
	if w, ok := b.pool.Get().(*waiter); ok {
		return w
	}
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &waiter{wake: make(chan struct{}, 1), timer: t}
}

func (b *bucket) putWaiter(w *waiter) {
	w.gated = false
	select { // drop a stale wake-up
	case <-w.wake:
	default:
	}
	b.pool.Put(w)
}
