package agilelimiter_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Do paces calls to a dependency and feeds the controller each call's round
// trip, measured from the moment the slot is granted.
func ExampleLimiter_Do() {
	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   200,                    // what we promise the dependency
		SLOTarget: 250 * time.Millisecond, // optional p99 guard
	})
	lim.Start()
	defer lim.Stop()

	err := lim.Do(func() error {
		// call the dependency here
		return nil
	})
	fmt.Println(err, lim.Stats().Admitted)
	// Output: <nil> 1
}

// Do[T] is Do for a call that returns a value.
func ExampleDo() {
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 200})
	n, err := agilelimiter.Do(lim, func() (int, error) { return 42, nil })
	fmt.Println(n, err)
	// Output: 42 <nil>
}

// Take and Observe are the manual path for calls Do cannot time: measure
// from the moment Take returns, and report Unavailable instead of Observe for
// an attempt that never reached the dependency.
func ExampleLimiter_Take() {
	lim := agilelimiter.New(agilelimiter.Config{MaxRate: 100, SLOTarget: time.Second})
	lim.Start()
	defer lim.Stop()

	for attempt := range 3 {
		lim.Take()
		start := time.Now()
		reached := attempt != 1 // pretend the second attempt was refused
		if reached {
			lim.Observe(time.Since(start))
		} else {
			lim.Unavailable()
		}
	}
	fmt.Println("admitted:", lim.Stats().Admitted)
	// Output: admitted: 3
}

// Classify says which errors are evidence. A refused connection never reached
// the dependency: reading its instant failure as a fast, healthy answer would
// raise the rate against a dead port.
func ExampleConfig_classify() {
	lim := agilelimiter.New(agilelimiter.Config{
		MaxRate:   100,
		SLOTarget: 200 * time.Millisecond,
		Classify: func(err error) agilelimiter.Outcome {
			if errors.Is(err, syscall.ECONNREFUSED) {
				return agilelimiter.Unreachable
			}
			return agilelimiter.Reached // a timeout is a real, slow signal
		},
	})
	err := lim.Do(func() error { return syscall.ECONNREFUSED })
	fmt.Println(errors.Is(err, syscall.ECONNREFUSED))
	// Output: true
}

// ConcurrencyLimiter.Do refuses at once when every slot is taken: here the
// only slot is held by a request still in flight.
func ExampleConcurrencyLimiter_Do() {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MinLimit: 1, MaxLimit: 1, InitialLimit: 1})
	lim.Start()
	defer lim.Stop()

	lim.TryTake() // a request in flight holds the one slot
	err := lim.Do(func() error { return nil })
	fmt.Println(errors.Is(err, agilelimiter.ErrOverloaded))

	lim.Release() // it finishes
	fmt.Println(lim.Do(func() error { return nil }))
	// Output:
	// true
	// <nil>
}

// OnTick hands each tick's Stats to a metrics exporter or a test; Logger
// writes the limit's changes and any blind or stuck state to a log. Both run
// on the controller's goroutine, once a tick, never on a caller's.
func ExampleConfig_onTick() {
	ticks := make(chan agilelimiter.Stats, 1)
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{
		MaxLimit: 100,
		OnTick: func(st agilelimiter.Stats) {
			select {
			case ticks <- st: // never block the controller
			default:
			}
		},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)).With("limiter", "api"),
	})
	lim.Start()
	defer lim.Stop()

	st := <-ticks // nothing answered yet
	fmt.Printf("tick %d: %s, limit %.0f, %d blind tick(s)\n", st.Ticks, st.Decision, st.Limit, st.Decisions.Get("blind"))
	// Output: tick 1: blind, limit 50, 1 blind tick(s)
}
