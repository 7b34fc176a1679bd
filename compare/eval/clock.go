package eval

import (
	"container/heap"
	"sync"
	"testing/synctest"
	"time"
)

// clock orders the simulation's own wake-ups. A run makes up to a million
// events at nanosecond resolution, so a few fall on the same virtual instant
// by chance, and synctest runs goroutines woken at one instant in any order:
// an admission and a release at the same nanosecond would then go either
// way, and the run would diverge from there. So every simulated goroutine (a
// caller, a client, the arrivals) sleeps through the clock, which wakes one
// at a time in (instant, id) order and lets it run until everything in the
// bubble is blocked again (synctest.Wait) before waking the next.
//
// The limiters' own timers (a bucket's slot, a controller's tick, a
// context's deadline) are not the clock's: at each instant they run first,
// as the clock waits for them before waking anyone, and only two of them at
// the same nanosecond can still race.
//
// A clock is used inside one bubble; run drives it.
type clock struct {
	mu    sync.Mutex
	queue wakeHeap
	live  int
	kick  chan struct{} // capacity 1: "look again"
	// parked is the handshake of the proc the clock woke last: false when
	// it parked again on the clock or ended, true when it is about to call
	// something that may block on the limiters' timers (see proc.external).
	parked chan bool
}

func newClock() *clock { return &clock{kick: make(chan struct{}, 1), parked: make(chan bool)} }

// proc is one simulated goroutine: its id breaks ties between wake-ups at the
// same instant.
type proc struct {
	c    *clock
	id   uint64
	wake chan struct{}
	// slot is p's index in the clock's queue, -1 while it is not queued.
	slot int
	// woken reports whether the clock woke p and waits for its handshake;
	// only p reads and clears it, after the wake-up the clock sent.
	woken bool
}

// handshake tells the clock, if it woke p, that p stops running on its turn:
// because it parks (external false) or because it calls into a limiter that
// may block it on its own timers (external true), when the clock must wait
// for the whole bubble to settle instead.
func (p *proc) handshake(external bool) {
	if p.woken {
		p.woken = false
		p.c.parked <- external
	}
}

// external marks the start of a call that may block p outside the clock
// (a pacer's Take): the clock waits for the bubble to settle rather than
// for p to park.
func (p *proc) external() { p.handshake(true) }

type wakeUp struct {
	at   time.Time
	proc *proc
}

type wakeHeap []wakeUp

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].proc.id < h[j].proc.id
}
func (h wakeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].proc.slot, h[j].proc.slot = i, j
}
func (h *wakeHeap) Push(x any) {
	w := x.(wakeUp)
	w.proc.slot = len(*h)
	*h = append(*h, w)
}
func (h *wakeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	x.proc.slot = -1
	*h = old[:len(old)-1]
	return x
}

func (c *clock) notify() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// spawn starts f as the simulated goroutine id and returns it. It first runs
// when the clock wakes it, at the current instant.
func (c *clock) spawn(id uint64, f func(p *proc)) *proc {
	p := &proc{c: c, id: id, wake: make(chan struct{}, 1), slot: -1}
	c.mu.Lock()
	c.live++
	heap.Push(&c.queue, wakeUp{time.Now(), p})
	c.mu.Unlock()
	c.notify()
	go func() {
		<-p.wake
		f(p)
		c.mu.Lock()
		c.live--
		c.mu.Unlock()
		c.notify()
		p.handshake(false)
	}()
	return p
}

// schedule sets p's wake-up at t, earlier or later than the one it had, if
// any: p wakes once, at the last instant scheduled before it wakes. Another
// proc may schedule p while p waits (the dependency wakes a caller when its
// request leaves service); p must then be waiting, or about to wait, for
// nothing else.
func (c *clock) schedule(p *proc, t time.Time) {
	c.mu.Lock()
	if p.slot >= 0 {
		c.queue[p.slot].at = t
		heap.Fix(&c.queue, p.slot)
	} else {
		heap.Push(&c.queue, wakeUp{t, p})
	}
	c.mu.Unlock()
	c.notify()
}

// wait blocks p until the clock wakes it, at the instant scheduled for it.
func (p *proc) wait() {
	p.handshake(false)
	<-p.wake
}

// sleepUntil blocks p until the clock wakes it at t (at once, in turn, if t
// has passed).
func (p *proc) sleepUntil(t time.Time) {
	p.c.schedule(p, t)
	p.wait()
}

// sleep blocks p for d.
func (p *proc) sleep(d time.Duration) { p.sleepUntil(time.Now().Add(d)) }

// run wakes the simulated goroutines in order until none is left.
func (c *clock) run() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var settled time.Time // the bubble was last known settled at this instant
	for {
		select { // a kick is about the state read below
		case <-c.kick:
		default:
		}
		c.mu.Lock()
		if len(c.queue) == 0 {
			live := c.live
			c.mu.Unlock()
			if live == 0 {
				return
			}
			// Everyone left is blocked in a limiter, waiting on its own
			// timers; they come back through sleepUntil or by ending.
			<-c.kick
			continue
		}
		next := c.queue[0].at
		c.mu.Unlock()
		if wait := time.Until(next); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-c.kick:
				timer.Stop()
				continue // something earlier may have been queued
			}
		}
		// Let whatever else is due now (the limiters' timers) settle, then
		// wake the first in order, and let it run until it parks.
		if now := time.Now(); !now.Equal(settled) {
			synctest.Wait()
			settled = now
		}
		c.mu.Lock()
		// What settled may have moved the first wake-up later (an arrival
		// slows the server down): look again.
		if len(c.queue) == 0 || c.queue[0].at.After(time.Now()) {
			c.mu.Unlock()
			continue
		}
		w := heap.Pop(&c.queue).(wakeUp)
		c.mu.Unlock()
		w.proc.woken = true
		w.proc.wake <- struct{}{}
		if <-c.parked {
			synctest.Wait()
		}
	}
}
