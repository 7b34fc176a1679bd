package eval

import (
	"container/heap"
	"math"
	"time"
)

// sharing is the PSKnee law: a processor-sharing server past a concurrency
// knee, simulated event by event on the run's clock. Every request in service
// has work left, in seconds of service alone at the initial capacity. While n
// requests are in service, each progresses at
//
//	speed(n) = factor(t) × (1 if n ≤ knee, else (knee/n)²)
//
// so at a steady n a request takes base × max(1, (n/knee)²), and the server
// answers at most capacity × knee/n past the knee (it thrashes); but when n
// changes every request's speed changes at once, and the work it has done is
// kept. factor is the trace's capacity factor, held over pieces (see
// Scenario.piece).
//
// The server keeps a virtual clock v, the service attained by any request
// in service since it was last empty: v advances at speed(n). A request that
// arrives at v with work w leaves when v reaches v + w, its target; targets
// sit in a min-heap. At every arrival and departure, v is first advanced at
// the old n, then n changes.
//
// A caller waits on the clock until the server schedules its wake-up, at its
// departure plus the round trip, or until its deadline. A caller that timed
// out leaves its request in service until its work is done: the work is
// wasted and keeps slowing the others. Past the knee this is a trap an open
// loop cannot leave: with n > 2·knee the server answers less than half its
// capacity, so a load of half its capacity keeps n growing; only a limiter
// that stops sending, or callers that wait for their answers, let it drain.
//
// Departures are found by the server proc, which lives while some caller
// waits for a request in service: it sleeps until the first target is
// reached at the current n and factor, or until the factor's piece ends,
// whichever comes first, and there advances the server. So a capacity step
// applies at its instant even if nothing arrives or leaves, at the cost of
// one wake-up per 10 ms during a ramp or a diurnal cycle; the rest of the time
// the server wakes only for departures. Requests whose callers have gone
// need no wake-up: their departures are found by the next advance.
//
// Its fields are the dependency's, under its mutex.
type sharing struct {
	jobs    psJobs    // the requests in service, by target
	v       float64   // the virtual clock, in seconds of service
	last    time.Time // the instant v was advanced to
	seq     uint64    // arrivals so far: ties between equal targets
	waiting int       // callers waiting for a request in service
	server  *proc     // the server proc, nil while nobody waits
}

// psJob is one request in service.
type psJob struct {
	target   float64 // v at which it leaves
	seq      uint64
	p        *proc         // its caller
	net      time.Duration // the round trip paid after service
	deadline time.Time     // the caller's, or zero
	// waiting reports whether the caller still waits for it to leave
	// service; done whether it has, answer when the caller has its answer.
	waiting, done bool
	answer        time.Time
}

// serverID is the server proc's id: at an instant, it runs after every
// caller.
const serverID = math.MaxUint64

// tolerance is the work, in seconds, under which a request counts as done:
// it absorbs rounding of v and of departures to whole nanoseconds.
const tolerance = 1e-12

// share sends a request of work w (seconds of service at the initial
// capacity) to the processor-sharing server and blocks p until its answer
// or deadline (when not zero), as call.
func (d *dependency) share(p *proc, w float64, net time.Duration, deadline time.Time) (status, time.Duration) {
	now := time.Now()
	s := &d.ps
	d.mu.Lock()
	d.advance(now)
	j := &psJob{target: s.v + w, seq: s.seq, p: p, net: net, deadline: deadline, waiting: true}
	s.seq++
	heap.Push(&s.jobs, j)
	s.waiting++
	if !deadline.IsZero() {
		p.c.schedule(p, maxTime(deadline, now))
	}
	if s.server == nil {
		s.server = p.c.spawn(serverID, d.serve)
	} else {
		d.wakeServer(now)
	}
	d.mu.Unlock()

	p.wait()

	d.mu.Lock()
	end := time.Now()
	if j.waiting { // woken at its deadline, still in service
		j.waiting = false
		s.waiting--
		d.advance(end) // it may leave at this very instant
		d.wakeServer(end)
	}
	ok := j.done && !j.answer.After(end)
	d.mu.Unlock()
	if ok {
		return answered, j.answer.Sub(now)
	}
	return timedOut, end.Sub(now)
}

// wakeServer reschedules the server proc, if any, after a caller changed
// the server at now: at its next event, or at once if nobody waits any more,
// so that it ends rather than keep the run going.
func (d *dependency) wakeServer(now time.Time) {
	s := &d.ps
	switch {
	case s.server == nil:
	case s.waiting == 0:
		s.server.c.schedule(s.server, now)
	default:
		s.server.c.schedule(s.server, d.nextEvent())
	}
}

// serve is the server proc: it advances the server at each event until no
// caller waits.
func (d *dependency) serve(p *proc) {
	s := &d.ps
	for {
		d.mu.Lock()
		d.advance(time.Now())
		if s.waiting == 0 {
			s.server = nil
			d.mu.Unlock()
			return
		}
		p.c.schedule(p, d.nextEvent())
		d.mu.Unlock()
		p.wait()
	}
}

// speed returns the share of a request's unloaded speed each of n requests
// in service gets, before the capacity factor.
func (d *dependency) speed(n int) float64 {
	k := float64(d.sc.Knee)
	if x := float64(n); x > k {
		return (k / x) * (k / x)
	}
	return 1
}

// advance runs the server from s.last to now: v at speed(n) × the factor of
// each piece, and every departure on the way, at its own instant.
func (d *dependency) advance(now time.Time) {
	s := &d.ps
	for {
		for len(s.jobs) > 0 && s.jobs[0].target-s.v <= tolerance {
			d.depart(heap.Pop(&s.jobs).(*psJob))
		}
		if len(s.jobs) == 0 {
			s.v, s.last = 0, maxTime(s.last, now) // targets restart from 0
			return
		}
		if !s.last.Before(now) {
			return
		}
		factor, end := d.sc.piece(s.last.Sub(d.start))
		span := now.Sub(s.last)
		if end != forever {
			span = min(span, d.start.Add(end).Sub(s.last))
		}
		sp := d.speed(len(s.jobs)) * factor
		if need := (s.jobs[0].target - s.v) / sp; need <= span.Seconds() {
			if dt := ceilSeconds(need); dt <= span {
				// The first target is reached inside this span: leave there,
				// the nanosecond rounded up served to all.
				s.v, s.last = math.Max(s.jobs[0].target, s.v+dt.Seconds()*sp), s.last.Add(dt)
				continue
			}
		}
		s.v += span.Seconds() * sp
		s.last = s.last.Add(span)
	}
}

// depart takes j out of service at s.last, and wakes its caller at its
// answer if it still waits and the answer comes before its deadline.
func (d *dependency) depart(j *psJob) {
	s := &d.ps
	j.done, j.answer = true, s.last.Add(j.net)
	if !j.waiting {
		return
	}
	j.waiting = false
	s.waiting--
	if j.deadline.IsZero() || !j.answer.After(j.deadline) {
		j.p.c.schedule(j.p, j.answer)
	}
}

// maxWake bounds how far ahead the server proc sleeps: a server slowed to a
// crawl re-plans every hour of virtual time rather than overflow a Duration.
const maxWake = time.Hour

// nextEvent returns when the server proc must next advance the server, just
// advanced to now with some request in service: when the first target is
// reached if n and the factor hold, or when the factor's piece ends.
func (d *dependency) nextEvent() time.Time {
	s := &d.ps
	factor, end := d.sc.piece(s.last.Sub(d.start))
	span := maxWake
	if end != forever {
		span = min(span, d.start.Add(end).Sub(s.last))
	}
	need := (s.jobs[0].target - s.v) / (d.speed(len(s.jobs)) * factor)
	if need < span.Seconds() {
		span = min(span, ceilSeconds(need))
	}
	return s.last.Add(span)
}

// ceilSeconds converts s seconds to a Duration, rounding up to the next
// nanosecond.
func ceilSeconds(s float64) time.Duration {
	return time.Duration(math.Ceil(s * float64(time.Second)))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// psJobs is a min-heap of requests in service by target, then arrival.
type psJobs []*psJob

func (h psJobs) Len() int { return len(h) }
func (h psJobs) Less(i, j int) bool {
	if h[i].target != h[j].target {
		return h[i].target < h[j].target
	}
	return h[i].seq < h[j].seq
}
func (h psJobs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *psJobs) Push(x any)   { *h = append(*h, x.(*psJob)) }
func (h *psJobs) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}
