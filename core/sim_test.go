package agilelimiter_test

import (
	"context"
	"math"
	"sync"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/agilelimiter/agilelimiter/core/agiletest"
)

// dependency returns a simulated downstream on virtual time (a FIFO queue
// serving capacity requests a second, base on top; see agiletest.Queue)
// and a call to it for Limiter.Do.
func dependency(capacity float64, base time.Duration) (*agiletest.Queue, func() error) {
	q := agiletest.NewQueue(capacity, base, 0)
	return q, func() error { return q.Call(context.Background()) }
}

// workers runs n closed-loop callers of call until stop is closed, and
// returns a function that waits for them.
func workers(n int, stop <-chan struct{}, call func()) (wait func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				call()
			}
		}()
	}
	return wg.Wait
}

// levelShift drives lim, started, with 64 closed-loop callers of a
// dependency whose latency does not depend on load: 20 ms for 10 s, then 50
// ms, during which it calls sample every tick for d. It returns the rate just
// before the step. It must run inside a synctest bubble.
func levelShift(lim *agilelimiter.Limiter, d time.Duration, sample func(i int)) (before float64) {
	dep, call := dependency(math.Inf(1), 20*time.Millisecond)
	stop := make(chan struct{})
	wait := workers(64, stop, func() { _ = lim.Do(call) })
	time.Sleep(10 * time.Second)
	before = lim.Rate()
	dep.SetBase(50 * time.Millisecond)
	sampleEvery(d, sample)
	close(stop)
	wait()
	return before
}

// sharing runs three limiters on one dependency as TestFairShares sets them
// up: MaxRate 1000, starting at 25, 125 and 225 req/s, started 7 s apart, each
// behind 64 closed-loop callers of call(lim), then 60 s more. It returns what
// each admitted per second over the following window, calling measuring(true)
// before the window and measuring(false) after it, and the limiters, stopped.
// It must run inside a synctest bubble.
func sharing(window time.Duration, call func(lim *agilelimiter.Limiter), measuring func(on bool)) (rates []float64, lims []*agilelimiter.Limiter) {
	stop := make(chan struct{})
	var waits []func()
	for i := range 3 {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 1000, InitialRate: 25 + 100*float64(i)})
		lim.Start()
		lims = append(lims, lim)
		waits = append(waits, workers(64, stop, func() { call(lim) }))
		time.Sleep(7 * time.Second) // staggered starts: each later one meets a full dependency
	}
	time.Sleep(20 * time.Second)
	before := make([]uint64, 3)
	for i, l := range lims {
		before[i] = l.Stats().Admitted
	}
	measuring(true)
	time.Sleep(window)
	measuring(false)
	rates = make([]float64, 3)
	for i, l := range lims {
		rates[i] = float64(l.Stats().Admitted-before[i]) / window.Seconds()
	}
	close(stop)
	for _, l := range lims {
		l.Stop()
	}
	for _, w := range waits {
		w()
	}
	return rates, lims
}

// jain is Jain's fairness index of xs: 1 when all are equal, 1/n when one
// takes everything.
func jain(xs ...float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	return sum * sum / (float64(len(xs)) * sq)
}
