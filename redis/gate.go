package agileredis

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// errDeadline is Acquire's answer when the caller's slot would come after
// its cutoff.
var errDeadline = fmt.Errorf("agileredis: the quota's next slot comes after the cutoff: %w", agilelimiter.ErrDeadline)

// coldFactor stretches Timeout for a gate's first reservation, which dials
// a connection and loads the script (three round trips more than a warm
// call): a slow start is not an outage.
const coldFactor = 10

// demandTau is the time constant of a gate's estimate of its callers'
// arrival rate: a few controller ticks, so a batch follows a change of
// demand within a quarter of a second without jumping at every burst.
const demandTau = 250 * time.Millisecond

// Gate is a share of a global quota kept in Redis: an [agilelimiter.Gate]
// for agilelimiter.Config.Gate. Create it with [New], one per Limiter, and
// [Gate.Close] it when done. It is safe for concurrent use.
//
// A Gate starts no goroutine while Redis answers but one per Redis call in
// flight (so that no caller waits on a call past Timeout or its own
// deadline); while it has fallen back, one more asks Redis once a
// ProbeInterval whether it answers again.
type Gate struct {
	s      settings
	tUs    string          // s.spacing in microseconds, for the script
	ttlMs  string          // keyMargin in milliseconds, for the script
	ctx    context.Context // the Redis calls' parent: Close cancels it
	cancel context.CancelFunc

	mu sync.Mutex
	// The batch reserved last: its unclaimed slots begin at next, 1/Rate
	// apart, and all come before end.
	next, end time.Time
	busyUntil time.Time     // no new reservation can begin before it: the TAT, last seen
	ahead     time.Duration // how far ahead of now the quota was booked, at the last reservation
	fetch     *fetch        // the reservation in flight; nil: none
	waiting   int           // callers waiting for it
	demand    float64       // callers' arrivals, per second, smoothed over demandTau
	arrivals  int           // since demandAt
	demandAt  time.Time
	fallback  bool      // pacing locally: Redis did not answer in time
	outage    bool      // the fallback is an outage: logged, and ended only by a probe
	capUntil  time.Time // after a fallback, the pacer holds on the quota too until then
	warm      bool      // Redis has answered a reservation: a connection is up, the script loaded
	late      *fetch    // the call that was late, whose answer ends a blip
	lastLate  time.Time // when a call was last late
	since     time.Time // when the fallback began
	fbNext    time.Time // the local pacer's next slot
	fbBase    uint64    // FallbackGranted when the fallback began
	closed    bool
	probing   bool
	stop      chan struct{} // closed by Close: ends the probe
	wg        sync.WaitGroup

	calls, errs, reserved, granted, fbGranted, refused, fallbacks, outages atomic.Uint64
}

// fetch is one reservation in flight. done is closed once it is settled:
// answered, failed, or given up on after Timeout.
type fetch struct {
	done     chan struct{}
	deadline time.Time // start + Timeout: past it the gate falls back
}

// GateStats is what a [Gate] has done since [New], for tests, dashboards
// and logs. Slots reserved but never granted (their callers gave up, or
// never came) are Reserved minus Granted: they are lost to the quota.
type GateStats struct {
	// Fallback is true while the gate paces locally at FallbackRate
	// because Redis did not answer (or after Close).
	Fallback bool
	// FallbackRate is the local ceiling, calls per second, the gate paces
	// at while it falls back: Rate/Instances, or Config.FallbackRate.
	FallbackRate float64
	// Batch is the most slots one Redis call reserves (Config.Batch or its
	// default).
	Batch int
	// RedisCalls counts the scripts sent to Redis: reservations and the
	// fallback's probes. RedisErrors counts those that failed or took
	// longer than Timeout.
	RedisCalls, RedisErrors uint64
	// Reserved counts slots reserved in Redis; Granted the calls let
	// through on them.
	Reserved, Granted uint64
	// FallbackGranted counts the calls the local pacer let through while
	// Redis did not answer.
	FallbackGranted uint64
	// Refused counts the calls refused at once because their slot would
	// come after their cutoff (agilelimiter.ErrDeadline).
	Refused uint64
	// Fallbacks counts the times the gate fell back to the local pacer;
	// Outages those of them that lasted: a call failed, two were late
	// within a ProbeInterval, or the late one did not answer within one.
	// Each outage is logged; a fallback that is not (a blip: one late
	// answer) ends as soon as that answer comes.
	Fallbacks, Outages uint64
}

// New returns a Gate for c, or an error naming the first field of c that
// is wrong. It does not call Redis: the first reservation does.
func New(c Config) (*Gate, error) {
	s, err := c.settings()
	if err != nil {
		return nil, err
	}
	g := &Gate{
		s:     s,
		tUs:   strconv.FormatFloat(float64(s.spacing)/float64(time.Microsecond), 'f', 3, 64),
		ttlMs: strconv.FormatInt(keyMargin.Milliseconds(), 10),
		stop:  make(chan struct{}),
	}
	g.ctx, g.cancel = context.WithCancel(context.Background())
	return g, nil
}

var _ agilelimiter.Gate = (*Gate)(nil)

// Acquire blocks until the caller's slot of the quota comes and returns
// nil; returns ctx.Err() once ctx ends; or returns an error wrapping
// agilelimiter.ErrDeadline at once when the slot would come after cutoff
// (zero: no cutoff). It never waits on Redis past Timeout nor past ctx's
// end: when Redis does not answer it falls back to the local ceiling on
// its own. A slot whose caller gave up goes to the next caller if no later
// slot was handed out yet, and is lost otherwise.
func (g *Gate) Acquire(ctx context.Context, cutoff time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	g.arrive(time.Now())
	paced := false
	for {
		now := time.Now()
		if g.fallback || g.closed {
			return g.pace(ctx, now, cutoff, &g.fbNext, g.s.fbSpacing, &g.fbGranted)
		}
		if !paced && now.Before(g.capUntil) {
			// Back from a fallback: the slots the pacer handed out are
			// still to come, and after an outage the other instances
			// may not have noticed yet and still pace on their own,
			// outside the quota; so this one keeps to its fallback
			// ceiling as well for a while: a caller takes a slot of the
			// pacer, then one of the quota.
			if err := g.pace(ctx, now, cutoff, &g.fbNext, g.s.fbSpacing, nil); err != nil {
				return err
			}
			paced = true
			g.mu.Lock()
			continue
		}
		if later(now, g.next).Before(g.end) {
			// A slot of the batch is left: the batch's window [begin, end)
			// holds its n slots, 1/Rate apart, and no more.
			return g.pace(ctx, now, cutoff, &g.next, g.s.spacing, &g.granted)
		}
		// The batch is spent: a reservation is needed, and none can begin
		// before the TAT last seen.
		if !cutoff.IsZero() && g.busyUntil.After(later(now, cutoff)) {
			g.mu.Unlock()
			g.refused.Add(1)
			return errDeadline
		}
		f := g.fetch
		if f == nil {
			f = g.start(now, cutoff)
		}
		g.waiting++
		g.mu.Unlock()
		err := g.await(ctx, f)
		g.mu.Lock()
		g.waiting--
		if err != nil {
			g.mu.Unlock()
			return err
		}
	}
}

// pace hands the caller the slot at the later of now and *next, spacing
// after the one before, waits for it, and counts it in granted (if not
// nil). g.mu is held on entry and released.
func (g *Gate) pace(ctx context.Context, now, cutoff time.Time, next *time.Time, spacing time.Duration, granted *atomic.Uint64) error {
	at := later(now, *next)
	if !cutoff.IsZero() && at.After(now) && at.After(cutoff) { // a slot free now is taken, whatever the cutoff
		g.mu.Unlock()
		g.refused.Add(1)
		return errDeadline
	}
	*next = at.Add(spacing)
	g.mu.Unlock()
	if d := at.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			g.mu.Lock()
			if next.Equal(at.Add(spacing)) {
				*next = at // no later slot was handed out: the next caller takes this one
			}
			g.mu.Unlock()
			return ctx.Err()
		}
	}
	if granted != nil {
		granted.Add(1)
	}
	return nil
}

// arrive counts one caller in the demand estimate. g.mu is held.
func (g *Gate) arrive(now time.Time) {
	g.arrivals++
	if g.demandAt.IsZero() {
		g.demandAt = now
		return
	}
	if dt := now.Sub(g.demandAt); dt >= demandTau/10 {
		alpha := 1 - math.Exp(-float64(dt)/float64(demandTau))
		g.demand += alpha * (float64(g.arrivals)/dt.Seconds() - g.demand)
		g.arrivals, g.demandAt = 0, now
	}
}

// size is how many slots to reserve: the callers waiting now, and those the
// recent arrival rate d brings before the batch's last slot, which comes
// after the quota's backlog (ahead, as last seen) and n slots 1/Rate apart:
// n = (waiting + d·ahead) / (1 − d/Rate), within [1, Batch]. An instance
// that wants less than the quota thus takes what it will use, and one that
// wants all of it takes full batches. g.mu is held.
func (g *Gate) size() int {
	d := g.demand
	want := float64(g.waiting+1) + d*g.ahead.Seconds()
	room := 1 - d*g.s.spacing.Seconds()
	if room*float64(g.s.Batch) <= want {
		return g.s.Batch
	}
	return max(1, min(g.s.Batch, int(math.Round(want/room))))
}

// start sends a reservation for the batch the gate needs; the caller with
// cutoff bounds the wait Redis may answer. g.mu is held.
func (g *Gate) start(now, cutoff time.Time) *fetch {
	bound := int64(-1)
	if !cutoff.IsZero() {
		bound = max(0, cutoff.Sub(now).Microseconds())
	}
	timeout := g.s.Timeout
	if !g.warm {
		timeout *= coldFactor // it dials a connection and loads the script: three round trips
	}
	f := &fetch{done: make(chan struct{}), deadline: now.Add(timeout)}
	g.fetch = f
	g.wg.Add(1)
	go g.run(f, g.size(), bound)
	return f
}

// run is one reservation's Redis call, on a goroutine of its own so that no
// caller waits on it past Timeout: it settles f unless a caller gave up on
// it first.
func (g *Gate) run(f *fetch, n int, bound int64) {
	defer g.wg.Done()
	// The callers wait Timeout at most; the call itself may take up to a
	// ProbeInterval, so that a late answer can end a blip.
	wait, got, err := g.call(n, bound, max(ProbeInterval, g.s.Timeout))
	recv := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	if got > 0 {
		g.reserved.Add(uint64(got))
	}
	if g.fetch != f {
		// Settled already: the call was late, and the gate paces locally;
		// or the gate was closed.
		if f != g.late || g.closed {
			return
		}
		g.late = nil
		switch {
		case err != nil:
			g.fail(err, recv) // counted in RedisErrors when it was late
		case !g.outage:
			// A blip: Redis answered, late. Back to the quota, with the
			// batch it reserved, once the slots the pacer handed out
			// meanwhile have passed.
			g.fallback = false
			g.capUntil = later(g.capUntil, g.fbNext)
			g.install(recv, wait, got)
		}
		return
	}
	g.fetch = nil
	defer close(f.done)
	if err != nil {
		g.errs.Add(1)
		g.fail(err, recv)
		return
	}
	g.install(recv, wait, got)
}

// install takes a reservation's answer, received at recv: got slots from
// wait on. g.mu is held.
func (g *Gate) install(recv time.Time, wait time.Duration, got int64) {
	g.warm = true
	// The answer's instant on this clock is later than Redis's reading of
	// its own: the batch may begin a round trip late here, never early.
	begin := recv.Add(wait)
	g.ahead = wait
	g.busyUntil = later(g.busyUntil, begin)
	if got == 0 {
		return // refused: its wait was past the caller's cutoff
	}
	g.next = later(begin, g.next)
	g.end = begin.Add(time.Duration(got) * g.s.spacing)
	g.busyUntil = later(g.busyUntil, g.end)
}

// call runs the script: n slots wanted (0: only read the wait), bound the
// longest wait accepted in µs (negative: none), within timeout (which
// binds on the wire only if the client has ContextTimeoutEnabled). It
// returns the wait before the first slot and the slots reserved.
func (g *Gate) call(n int, bound int64, timeout time.Duration) (time.Duration, int64, error) {
	ctx, cancel := context.WithTimeout(g.ctx, timeout)
	defer cancel()
	g.calls.Add(1)
	v, err := reserve.Run(ctx, g.s.Client, []string{g.s.Key}, g.tUs, n, bound, g.ttlMs).Int64Slice()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("agileredis: no answer within %v", timeout)
	}
	if err != nil {
		return 0, 0, err
	}
	if len(v) != 2 || v[0] < 0 || v[1] < 0 || v[1] > int64(n) {
		return 0, 0, fmt.Errorf("agileredis: unexpected answer from the script: %v", v)
	}
	return time.Duration(v[0]) * time.Microsecond, v[1], nil
}

// await waits for f to settle, for ctx to end, or for f's deadline, past
// which the gate paces locally.
func (g *Gate) await(ctx context.Context, f *fetch) error {
	t := time.NewTimer(time.Until(f.deadline))
	defer t.Stop()
	select {
	case <-f.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case now := <-t.C:
		g.mu.Lock()
		if g.fetch == f {
			g.fetch = nil
			close(f.done)
			g.errs.Add(1)
			g.lateCall(f, now)
		}
		g.mu.Unlock()
		return nil
	}
}

// lateCall handles a call past Timeout: the callers pace locally at once.
// A first late call in a ProbeInterval is a blip (a pause of this process,
// a slow answer): its answer, if it comes, returns the gate to the quota
// without a word. A second is an outage, as is a late call that has not
// answered by the probe's first tick. g.mu is held.
func (g *Gate) lateCall(f *fetch, now time.Time) {
	err := fmt.Errorf("agileredis: no answer within Timeout (%v)", g.s.Timeout)
	if !g.lastLate.IsZero() && now.Sub(g.lastLate) < ProbeInterval {
		g.fail(err, now)
		return
	}
	g.lastLate, g.late = now, f
	g.local(now)
}

// fail declares an outage: the gate paces locally until a probe gets an
// answer within Timeout, and logs it once. g.mu is held.
func (g *Gate) fail(err error, now time.Time) {
	if g.closed {
		return
	}
	g.local(now)
	if !g.outage {
		g.outage = true
		g.outages.Add(1)
		if l := g.s.Logger; l != nil {
			l.Warn("agileredis: Redis does not answer: pacing at the fallback ceiling until it does",
				"key", g.s.Key, "error", err, "fallback_rate", g.s.fbRate, "retry_every", ProbeInterval)
		}
	}
}

// local sends the callers to the local pacer and starts the probe. g.mu is
// held.
func (g *Gate) local(now time.Time) {
	if g.closed {
		return
	}
	if !g.fallback {
		g.fallback, g.since = true, now
		g.fallbacks.Add(1)
		g.fbBase = g.fbGranted.Load()
		// The slots handed out already stand; the rest of the batch is
		// dropped, and the pacer begins its spacing after the last one
		// handed out.
		g.fbNext = later(g.fbNext, g.next.Add(g.s.fbSpacing-g.s.spacing))
		g.end = g.next
	}
	if !g.probing {
		g.probing = true
		g.wg.Add(1)
		go g.probe()
	}
}

// probe asks Redis once a ProbeInterval whether it answers, within
// Timeout, and returns the gate to the quota when it does. A fallback that
// is still a blip at its first tick (the late call has not answered)
// becomes an outage.
func (g *Gate) probe() {
	defer g.wg.Done()
	wait := ProbeInterval
	for {
		t := time.NewTimer(wait)
		select {
		case <-g.stop:
			t.Stop()
			return
		case <-t.C:
		}
		wait = ProbeInterval
		g.mu.Lock()
		if !g.fallback || g.closed {
			g.probing = false // the blip ended: its late answer came
			g.mu.Unlock()
			return
		}
		if !g.outage {
			if d := ProbeInterval - time.Since(g.since); d > 0 {
				wait = d // a blip that began since: give it its full interval
				g.mu.Unlock()
				continue
			}
			g.late = nil
			g.fail(fmt.Errorf("agileredis: no answer within %v", ProbeInterval), time.Now())
		}
		g.mu.Unlock()

		begin := time.Now()
		_, _, err := g.call(0, -1, g.s.Timeout)
		if took := time.Since(begin); err == nil && took > g.s.Timeout {
			err = fmt.Errorf("agileredis: answered in %v, past Timeout (%v)", took, g.s.Timeout)
		}
		if err != nil {
			g.errs.Add(1)
			continue
		}
		g.mu.Lock()
		g.probing = false
		if !g.closed {
			g.fallback, g.outage = false, false
			g.next, g.end = time.Time{}, time.Time{}
			g.capUntil = later(time.Now().Add(recoveryCap(g.s.Timeout)), g.fbNext)
			if l := g.s.Logger; l != nil {
				l.Info("agileredis: Redis answers again: back to the global quota",
					"key", g.s.Key, "fallback_for", time.Since(g.since).Round(time.Millisecond),
					"fallback_granted", g.fbGranted.Load()-g.fbBase)
			}
		}
		g.mu.Unlock()
		return
	}
}

// Stats returns what the gate has done since New.
func (g *Gate) Stats() GateStats {
	g.mu.Lock()
	fb := g.fallback || g.closed
	g.mu.Unlock()
	return GateStats{
		Fallback:        fb,
		FallbackRate:    g.s.fbRate,
		Batch:           g.s.Batch,
		RedisCalls:      g.calls.Load(),
		RedisErrors:     g.errs.Load(),
		Reserved:        g.reserved.Load(),
		Granted:         g.granted.Load(),
		FallbackGranted: g.fbGranted.Load(),
		Refused:         g.refused.Load(),
		Fallbacks:       g.fallbacks.Load(),
		Outages:         g.outages.Load(),
	}
}

// Close stops the gate's background work and waits for its goroutines to
// return: the probe, and Redis calls under way, which end at once if the
// client has ContextTimeoutEnabled, and within its ReadTimeout otherwise.
// A closed gate still admits calls, at the fallback ceiling and without
// Redis, so a Limiter that outlives it never stalls. Close is idempotent
// and returns nil.
func (g *Gate) Close() error {
	g.mu.Lock()
	if !g.closed {
		g.closed = true
		close(g.stop)
		if f := g.fetch; f != nil {
			g.fetch = nil
			close(f.done)
		}
	}
	g.mu.Unlock()
	g.cancel()
	g.wg.Wait()
	return nil
}

// recoveryCap is how long a gate back from an outage keeps to its fallback
// ceiling while on the quota: until every other instance has had its
// probe (one a ProbeInterval, each Timeout at most) and is back on the
// quota too. Without it the first instance back takes the whole quota
// while the others still pace on their own.
func recoveryCap(timeout time.Duration) time.Duration { return ProbeInterval + 2*timeout }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
