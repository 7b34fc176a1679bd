package agilelimiter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Anchor chooses the latency an Unavailable call stands for, and the window
// [Stats].High reports. The law itself is the same under both: it reads the
// wait a round's answers show over the floor, and SLOTarget caps it. The zero
// value is AnchorBaseline.
type Anchor int

const (
	// AnchorBaseline places the window at twice the unloaded latency (or the
	// wait of two calls queued, if more), capped at 80% of SLOTarget when one is
	// set. It needs no SLO: the default.
	AnchorBaseline Anchor = iota
	// AnchorSLO places the window at 80% of SLOTarget, whatever the unloaded
	// latency, so an Unavailable call reads as a breach of the SLO. It needs
	// SLOTarget.
	AnchorSLO
)

// String returns the anchor's name.
func (a Anchor) String() string {
	switch a {
	case AnchorBaseline:
		return "AnchorBaseline"
	case AnchorSLO:
		return "AnchorSLO"
	}
	return fmt.Sprintf("Anchor(%d)", int(a))
}

const (
	// DefaultTickInterval is a [ConcurrencyLimiter]'s tick when
	// ConcurrencyConfig.TickInterval is zero.
	DefaultTickInterval = 100 * time.Millisecond
	// DefaultRateTickInterval is a [Limiter]'s tick when Config.TickInterval
	// is zero. A rate limit lets calls out as the window makes room, refilled
	// once a tick with what came back: a tick longer than a round trip lets a
	// tick's worth of calls past the window when the answers slow, and holds a
	// small window to one turn a tick when they do not. Decisions are taken on
	// rounds of answers, so a shorter tick costs them nothing. Measured on the
	// development scenarios outbound (three draws of 120), with the bucket
	// counting the room in whole calls: 324 met at 10ms against 314 at 20ms
	// (goodput ×1.020, 92 scenarios up by 5% and 45 down); training 110
	// against 109 (×1.027). A ConcurrencyLimiter keeps DefaultTickInterval:
	// at 20ms it met as many inbound scenarios, but served the knee service
	// of TestColdBurst at 0.57 of its best fixed limit.
	DefaultRateTickInterval = 10 * time.Millisecond
)

// The bounds a configuration must keep. Each exists because past it the
// limiter's arithmetic would overflow or its controller would spin, and a
// limiter that overflows fails open.
const (
	// MinAllowedRate is the smallest non-zero rate MinRate, MaxRate and
	// InitialRate accept: one call in about 11.6 days. A bucket's spacing is
	// a time.Duration of 1/rate seconds; below about 1e-10 req/s it no longer
	// fits in an int64 and used to wrap, which let calls out at MaxRate. A
	// dependency that must get "almost nothing" gets this, or nothing at all
	// once the limiter is stopped.
	MinAllowedRate = 1e-6
	// MaxAllowedLimit is the largest MaxLimit accepted: about a billion
	// requests in flight, far past what one process holds. Past it the
	// limit's conversion to an integer slot count overflowed and refused
	// everything.
	MaxAllowedLimit = 1 << 30
	// MinTickInterval is the shortest TickInterval accepted. The controller
	// does O(1) work a tick, but a tick of a few nanoseconds keeps a core
	// busy doing it (63,674 ticks in 300 ms on an idle limiter at 1ns), and
	// the law decides on round trips of answers, never on single ticks.
	MinTickInterval = time.Millisecond
)

// Gate is a second admission a [Limiter] asks for every call (see
// Config.Gate): a ceiling shared by every instance of a service.
type Gate interface {
	// Acquire blocks until one call may go by the gate's reckoning and
	// returns nil; or returns ctx.Err() once ctx ends; or returns an error
	// wrapping [ErrDeadline] at once when the call's turn would come after
	// cutoff (the caller's deadline less the round trip it needs; zero
	// when the caller has no deadline). It never blocks past ctx's
	// deadline and returns no other error: a gate that cannot reach what
	// it shares falls back to a local ceiling on its own.
	Acquire(ctx context.Context, cutoff time.Time) error
}

// Config configures an outbound [Limiter]. Only MaxRate is required; every other
// zero field means the documented default. Use [Config.Validate] to check a
// configuration read from a file; [New] panics on the same errors.
type Config struct {
	// MinRate is the floor, in requests per second: the rate the limiter keeps
	// probing at while the dependency is down. Zero means 1 req/s (or MaxRate if
	// that is lower): one probe a second notices a recovery within a tick or two
	// and costs a dead dependency nothing. Must be in [0, MaxRate], and 0 or
	// at least MinAllowedRate.
	MinRate float64
	// MaxRate is the ceiling, in requests per second, that you promise the
	// dependency. Required. The controller never sets a rate above it, and the
	// bucket enforces it again on its own, so no controller bug can exceed it.
	// At least MinAllowedRate.
	MaxRate float64
	// InitialRate is the fastest calls go out until the first round of
	// answers has come back. Until then the limiter has no window, and lets
	// out no more calls without an answer than one tick of InitialRate (at
	// least ten, TCP's initial window), two more for each answer (slow
	// start): a dependency that answers slowly, or not at all, is not sent
	// half a second of InitialRate before anything comes back. Zero means
	// MaxRate/8 (at least MinRate): low enough not to hurt a dependency that
	// is already full; startup then doubles the window each round trip until
	// a queue begins. Must be in [0, MaxRate]; a value below MinRate is
	// raised to MinRate.
	InitialRate float64

	// SLOTarget is an optional p99 latency guard: a round with more answers past
	// it than 1% explains cuts the limit to 0.7 of what was in flight, and the
	// queue the law keeps never takes more than the room it leaves above the
	// unloaded latency's p99; a caller who must wait in TakeContext goes out
	// only with at least SLOTarget left before its deadline. Zero means no
	// guard. Required under AnchorSLO.
	SLOTarget time.Duration
	// Anchor chooses the latency an Unavailable call is recorded at; see
	// [AnchorBaseline] and [AnchorSLO]. The zero value is AnchorBaseline, which
	// works without an SLO.
	Anchor Anchor
	// Classify reads the error returned by the fn given to Do, [Do] and DoContext
	// and says whether the call's duration is evidence. Nil means Reached for
	// every error: a timeout is a real, slow signal. It is called only for non-nil
	// errors, outside every lock; a call whose caller cancelled it is dropped
	// before Classify runs.
	Classify func(error) Outcome

	// TickInterval is how often the controller reads the latency histogram and
	// lets calls out as its window makes room. Zero means
	// DefaultRateTickInterval (10ms; see there why). A non-zero value must
	// be at least MinTickInterval.
	TickInterval time.Duration

	// Gate, if set, is a second admission every call asks for: a ceiling
	// shared with other processes, such as the global quota of
	// github.com/agilelimiter/agilelimiter/redis. The head of the bucket's
	// queue asks it once its local slot is due and goes out at the gate's
	// grant, the next local slot counted from then: the sends keep both
	// spacings, whichever binds, and neither side queues calls the other
	// then releases in a burst. Every call waits in the queue then (no
	// fast path). Nil, the default, costs one comparison a call.
	Gate Gate

	// OnTick, if set, is called once per controller tick, after the limit
	// has moved, with that tick's Stats: Decision says what the tick did and
	// why, Decisions counts every tick's reason since New. It runs on the
	// controller's goroutine, outside the limiter's locks, so it may call
	// Stats or anything else on the limiter; it must return quickly, since
	// the next tick waits for it (no caller ever does). Nil, the default,
	// costs one comparison a tick: a limiter reports nothing unless asked.
	OnTick func(Stats)
	// Logger, if set, logs what the controller does: a change of the limit
	// at Info (old → new, the reason, the evidence: p50, p99, floor, answers
	// per second, waiting or in flight), at most once a second and only
	// when the limit moved by at least a tenth, so an oscillation cannot
	// flood a log; and at Warn a controller blind for 5 s (no answers while
	// calls are admitted: the limit is frozen) or a limit at its floor for
	// 30 s, repeated at most once a minute while it lasts, with an Info line
	// when it ends. Nil, the default, logs nothing: a library is silent
	// unless asked.
	Logger *slog.Logger
}

// ConcurrencyConfig configures an inbound [ConcurrencyLimiter]. Only MaxLimit is
// required; every zero field means the documented default, and the fields it
// shares with [Config] mean what they mean there, applied to a concurrency limit.
type ConcurrencyConfig struct {
	// MinLimit is the floor: the limiter always admits at least this many
	// requests at once, so it keeps measuring during an overload. Zero means 1.
	// Must be in [0, MaxLimit].
	MinLimit int
	// MaxLimit is the ceiling on requests in flight that you promise the service
	// can hold. Required, at most MaxAllowedLimit. The semaphore enforces it
	// on its own as well.
	MaxLimit int
	// InitialLimit is the limit before the first round of answers. Zero means
	// half of MaxLimit, at least max(MinLimit, 1): a service that just started
	// serves a cold burst of that size at once, and the first round trip of
	// answers cuts the limit to the knee if the service holds less. That
	// burst is what the default costs: a service whose knee is far under
	// half of MaxLimit answers all of it slowly, for seconds when a request
	// takes a tenth of a second (on compare/eval's validation scenarios, a
	// start at each service's own capacity in flight meets the goal in 131
	// of 150 runs, the default in 114). If you know about how many requests
	// your service holds at full speed, set it to that. Must be in
	// [MinLimit, MaxLimit].
	InitialLimit int

	// SLOTarget, Anchor and Classify are as in [Config].
	SLOTarget time.Duration
	// Anchor: see [Config.Anchor].
	Anchor Anchor
	// Classify reads the error returned by the fn given to Do; see [Config.Classify].
	Classify func(error) Outcome

	// TickInterval is how often the controller runs. Zero means
	// DefaultTickInterval (100ms; see DefaultRateTickInterval why a
	// ConcurrencyLimiter ticks slower than a Limiter). A non-zero value must
	// be at least MinTickInterval.
	TickInterval time.Duration

	// OnTick is called once per controller tick with that tick's Stats;
	// see [Config.OnTick].
	OnTick func(Stats)
	// Logger logs the limit's changes and the controller's blind or stuck
	// states; see [Config.Logger].
	Logger *slog.Logger
}

// settings is a validated configuration with every default filled in, shared by
// both limiters: the controller sees only this.
type settings struct {
	rate              bool // the limit is a rate (a Limiter), not a count in flight
	min, max, initial float64
	slo               time.Duration
	anchor            Anchor
	classify          func(error) Outcome

	tick time.Duration

	onTick func(Stats)
	logger *slog.Logger
	gate   Gate
}

// Validate reports the first problem with c, naming the field, or nil. It is
// the check [New] performs, as an error, for configurations read from files.
func (c Config) Validate() error {
	_, err := c.settings()
	return err
}

// Validate reports the first problem with c, naming the field, or nil. It is
// the check [NewConcurrency] performs, as an error.
func (c ConcurrencyConfig) Validate() error {
	_, err := c.settings()
	return err
}

func (c Config) settings() (settings, error) {
	const p = "Config."
	if err := finite(p+"MaxRate", c.MaxRate); err != nil {
		return settings{}, err
	}
	if c.MaxRate <= 0 {
		return settings{}, fieldErr(p+"MaxRate", "is required and must be > 0", c.MaxRate)
	}
	if err := finite(p+"MinRate", c.MinRate); err != nil {
		return settings{}, err
	}
	if c.MinRate < 0 || c.MinRate > c.MaxRate {
		return settings{}, fieldErr(p+"MinRate", "must be in [0, MaxRate]", c.MinRate)
	}
	if err := finite(p+"InitialRate", c.InitialRate); err != nil {
		return settings{}, err
	}
	if c.InitialRate < 0 || c.InitialRate > c.MaxRate {
		return settings{}, fieldErr(p+"InitialRate", "must be in [0, MaxRate]", c.InitialRate)
	}
	for _, f := range [...]struct {
		name string
		v    float64
	}{{"MaxRate", c.MaxRate}, {"MinRate", c.MinRate}, {"InitialRate", c.InitialRate}} {
		if f.v != 0 && f.v < MinAllowedRate {
			return settings{}, fieldErr(p+f.name, "must be 0 or at least MinAllowedRate (1e-06 req/s, one call in 11.6 days): "+
				"a smaller rate's spacing between calls overflows", f.v)
		}
	}
	s := settings{rate: true, min: c.MinRate, max: c.MaxRate, initial: c.InitialRate,
		slo: c.SLOTarget, anchor: c.Anchor, classify: c.Classify, tick: c.TickInterval,
		onTick: c.OnTick, logger: c.Logger, gate: c.Gate}
	if s.min == 0 {
		s.min = math.Min(1, s.max)
	}
	if s.initial == 0 {
		s.initial = s.max / 8
	}
	s.initial = math.Max(s.initial, s.min)
	return s, s.shared(p)
}

func (c ConcurrencyConfig) settings() (settings, error) {
	const p = "ConcurrencyConfig."
	if c.MaxLimit <= 0 {
		return settings{}, fieldErr(p+"MaxLimit", "is required and must be > 0", c.MaxLimit)
	}
	if c.MaxLimit > MaxAllowedLimit {
		return settings{}, fieldErr(p+"MaxLimit", "must be at most MaxAllowedLimit (1<<30)", c.MaxLimit)
	}
	if c.MinLimit < 0 || c.MinLimit > c.MaxLimit {
		return settings{}, fieldErr(p+"MinLimit", "must be in [0, MaxLimit]", c.MinLimit)
	}
	if c.InitialLimit != 0 && (c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit) {
		return settings{}, fieldErr(p+"InitialLimit", "must be in [MinLimit, MaxLimit]", c.InitialLimit)
	}
	s := settings{min: float64(max(c.MinLimit, 1)), max: float64(c.MaxLimit), initial: float64(c.InitialLimit),
		slo: c.SLOTarget, anchor: c.Anchor, classify: c.Classify, tick: c.TickInterval,
		onTick: c.OnTick, logger: c.Logger}
	if s.initial == 0 {
		s.initial = math.Max(initialLimit(s.max), s.min)
	}
	return s, s.shared(p)
}

// shared validates the fields both configurations share (SLOTarget, Anchor,
// TickInterval), naming them with prefix p, and fills in the tick's default.
func (s *settings) shared(p string) error {
	if s.slo < 0 {
		return fieldErr(p+"SLOTarget", "must not be negative", s.slo)
	}
	if s.tick < 0 || s.tick > 0 && s.tick < MinTickInterval {
		return fieldErr(p+"TickInterval", "must be 0 (the default) or at least MinTickInterval (1ms)", s.tick)
	}
	switch s.anchor {
	case AnchorBaseline:
	case AnchorSLO:
		if s.slo == 0 {
			return errors.New("agilelimiter: " + p + "SLOTarget is required when Anchor is AnchorSLO")
		}
	default:
		return fieldErr(p+"Anchor", "must be AnchorBaseline or AnchorSLO", int(s.anchor))
	}
	if s.tick == 0 {
		s.tick = DefaultTickInterval
		if s.rate {
			s.tick = DefaultRateTickInterval
		}
	}
	return nil
}

func finite(name string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fieldErr(name, "must be a finite number", v)
	}
	return nil
}

func fieldErr(name, rule string, got any) error {
	return fmt.Errorf("agilelimiter: %s %s (got %v)", name, rule, got)
}
