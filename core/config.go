package agilelimiter

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Anchor chooses what the controller's tolerated latency window is built on.
// The zero value is AnchorBaseline.
type Anchor int

const (
	// AnchorBaseline tolerates latency up to TargetInflation above the measured
	// baseline (twice the baseline by default), capped at 80% of SLOTarget when one
	// is set. It needs no SLO and reacts to any rise, which is its price: a benign
	// rise (the dependency got slower but not fuller) reads as congestion until the
	// slowly rising baseline catches up.
	AnchorBaseline Anchor = iota
	// AnchorSLO tolerates latency up to 80% of SLOTarget, whatever the baseline.
	// It ignores benign rises that stay inside the SLO, and needs SLOTarget.
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

// Defaults of the tuning knobs. Each is what a zero field in [Config] or
// [ConcurrencyConfig] means; the field's comment says why the value is what it is.
const (
	DefaultTickInterval    = 100 * time.Millisecond // see Config.TickInterval
	DefaultFastHalfLife    = 200 * time.Millisecond // see Config.FastHalfLife
	DefaultSlowHalfLife    = 10 * time.Second       // see Config.SlowHalfLife
	DefaultTargetInflation = 1.0                    // see Config.TargetInflation
	DefaultDeadband        = 0.2                    // see Config.Deadband
	DefaultGain            = 0.5                    // see Config.Gain
	DefaultUpStep          = 0.01                   // see Config.UpStep
	DefaultDownStep        = 0.3                    // see Config.DownStep
	DefaultSlowStartGain   = 2.0                    // see Config.SlowStartGain
	DefaultMaxBaselineRise = 0.01                   // see Config.MaxBaselineRise
)

// Config configures an outbound [Limiter]. Only MaxRate is required; every other
// zero field means the documented default. Use [Config.Validate] to check a
// configuration read from a file; [New] panics on the same errors.
type Config struct {
	// MinRate is the floor, in requests per second: the rate the limiter keeps
	// probing at while the dependency is down. Zero means 1 req/s (or MaxRate if
	// that is lower): one probe a second notices a recovery within a tick or two
	// and costs a dead dependency nothing. Must be in [0, MaxRate].
	MinRate float64
	// MaxRate is the ceiling, in requests per second, that you promise the
	// dependency. Required. The controller never sets a rate above it, and the
	// bucket enforces it again on its own, so no controller bug can exceed it.
	MaxRate float64
	// InitialRate is the rate before the first tick. Zero means MaxRate/8 (at
	// least MinRate): low enough not to hurt a dependency that is already full,
	// and slow start doubles it to the ceiling in three ticks if it is not. Must be
	// in [0, MaxRate]; a value below MinRate is raised to MinRate.
	InitialRate float64

	// SLOTarget is an optional p99 latency guard: a tick whose p99 exceeds it
	// backs off by a full DownStep, and the tolerated window is capped at 80% of
	// it. Zero means no guard. Required under AnchorSLO.
	SLOTarget time.Duration
	// Anchor chooses how the tolerated window is set; see [AnchorBaseline] and
	// [AnchorSLO]. The zero value is AnchorBaseline, which works without an SLO.
	Anchor Anchor
	// Classify reads the error returned by the fn given to Do, [Do] and DoContext
	// and says whether the call's duration is evidence. Nil means Reached for
	// every error: a timeout is a real, slow signal. It is called only for non-nil
	// errors, outside every lock; a call whose caller cancelled it is dropped
	// before Classify runs.
	Classify func(error) Outcome

	// TickInterval is how often the controller reads the latency histogram and
	// moves the rate. Zero means 100ms: short enough to back off within a few
	// hundred milliseconds of congestion, long enough to hold a few samples at
	// modest rates. (Under the model law of the agilelimiter_model build tag, a
	// Limiter ticks every 20ms: that law decides on rounds of answers, not
	// ticks, and lets calls out as its window makes room, a tick at a time.)
	TickInterval time.Duration
	// FastHalfLife is the half-life of the fast EWMA of p50, the signal compared
	// with the tolerated window. Zero means 200ms (two default ticks): it smooths
	// one noisy tick without delaying a real rise by more than a tick or two.
	FastHalfLife time.Duration
	// SlowHalfLife is the half-life of the slow EWMA of p50, the baseline. Zero
	// means 10s: the baseline follows a lasting shift of the dependency's floor
	// but not a burst of congestion. It falls with FastHalfLife, because a lower
	// latency is always trustworthy, and rises at most MaxBaselineRise a tick.
	SlowHalfLife time.Duration
	// TargetInflation is how far above the baseline latency may rise before a
	// tick reads as congested: high = baseline × (1 + TargetInflation). Zero means
	// 1.0 (twice the baseline): queueing has clearly begun by then, while the
	// ordinary jitter of a healthy dependency stays below it.
	TargetInflation float64
	// Deadband is the fraction below the window's top where the controller
	// holds: low = high × (1 − Deadband). Zero means 0.2: without a band the rate
	// would flip between probing and backing off on every tick of noise. In [0, 1).
	Deadband float64
	// Gain scales the proportional backoff: a congested tick multiplies the rate
	// by 1 − Gain × (fast − high)/high, never by less than 1 − DownStep. Zero
	// means 0.5: a fast p50 30% over the window costs 15%, a doubled one the full
	// DownStep. In [0, 1).
	Gain float64
	// UpStep is the additive probe of a healthy tick, as a fraction of the
	// ceiling: the rate grows by UpStep × MaxRate (the limit by UpStep × MaxLimit).
	// Zero means 0.01, so the climb from floor to ceiling takes 100 ticks (10s at
	// the default tick). It is additive on purpose: with a multiplicative backoff,
	// a multiplicative probe keeps whatever unfair split several instances start
	// from, while an additive one shrinks the gap at every backoff (AIMD, as in
	// TCP), so instances sharing a dependency converge to equal shares. Slow start
	// and RecoverRamp stay multiplicative because they are about speed, not shares.
	// Must be ≥ 0.
	UpStep float64
	// DownStep caps one backoff: a congested tick never multiplies by less than
	// 1 − DownStep, and a p99 above SLOTarget costs exactly DownStep. Zero means 0.3:
	// backing off fast protects a dependency in trouble, and three such steps
	// still leave a third of the rate to measure recovery with. In [0, 1).
	DownStep float64
	// SlowStartGain multiplies the rate on each healthy tick while the limiter
	// has never seen congestion. Zero means 2.0 (doubling, as TCP's slow start):
	// 10 to 500 req/s in 6 ticks instead of 80 at +5%. Once latency has risen an
	// eighth of the way to the window it grows by the fourth root of the gain
	// instead (+19% a tick at the default), so the doubling that crosses
	// capacity is a small one; a rise of a quarter, or the first backoff, ends
	// slow start for good. 1 disables it. Must be ≥ 1.
	SlowStartGain float64
	// RecoverRamp, when above zero, lets the rate grow by SlowStartGain again
	// after the cold start while fast ≤ RecoverRamp × high, that is while latency
	// is far below the window: recovery from a deep cut in seconds rather than in
	// a hundred additive steps. Zero (the default) turns it off, because it gives
	// up some of the additive probe's fairness. In [0, 1).
	RecoverRamp float64
	// MaxBaselineRise caps how much the baseline may rise in one tick, as a
	// fraction of itself. Zero means 0.01 (1% a tick, doubling in about 70 ticks):
	// a long overload cannot drag the baseline up to the congested latency and
	// make congestion look normal (baseline pollution). The baseline does not
	// rise at all within SlowHalfLife/2 of a cut: near a knee the controller
	// holds latency above the true floor, and a baseline creeping toward it
	// would ratchet the window up. Must be ≥ 0.
	MaxBaselineRise float64
	// BackoffTicks is how many consecutive congested ticks must agree before the
	// rate is cut. Zero means 1 under AnchorBaseline (react at once) and 2 under
	// AnchorSLO (the window is absolute, so one noisy tick should not cost a step).
	// A tick in the deadband resets the count. Must be ≥ 0.
	BackoffTicks int
	// RecoverTicks is how many consecutive healthy ticks must agree before the
	// rate is raised. Zero means 1 under AnchorBaseline and 2 under AnchorSLO, for
	// the same reasons as BackoffTicks. Must be ≥ 0.
	RecoverTicks int
}

// ConcurrencyConfig configures an inbound [ConcurrencyLimiter]. Only MaxLimit is
// required; every zero field means the documented default, and the tuning knobs
// mean exactly what they mean in [Config], applied to a concurrency limit.
type ConcurrencyConfig struct {
	// MinLimit is the floor: the limiter always admits at least this many
	// requests at once, so it keeps measuring during an overload. Zero means 1.
	// Must be in [0, MaxLimit].
	MinLimit int
	// MaxLimit is the ceiling on requests in flight that you promise the service
	// can hold. Required. The semaphore enforces it on its own as well.
	MaxLimit int
	// InitialLimit is the limit before the first tick. Zero means MaxLimit/8, at
	// least max(MinLimit, 1): slow start doubles it to the ceiling in three ticks
	// if demand and latency allow. Must be in [MinLimit, MaxLimit].
	InitialLimit int

	// SLOTarget, Anchor and Classify are as in [Config].
	SLOTarget time.Duration
	// Anchor: see [Config.Anchor].
	Anchor Anchor
	// Classify reads the error returned by the fn given to Do; see [Config.Classify].
	Classify func(error) Outcome

	// TickInterval: see [Config.TickInterval].
	TickInterval time.Duration
	// FastHalfLife: see [Config.FastHalfLife].
	FastHalfLife time.Duration
	// SlowHalfLife: see [Config.SlowHalfLife].
	SlowHalfLife time.Duration
	// TargetInflation: see [Config.TargetInflation].
	TargetInflation float64
	// Deadband: see [Config.Deadband].
	Deadband float64
	// Gain: see [Config.Gain].
	Gain float64
	// UpStep is the additive probe as a fraction of MaxLimit; see [Config.UpStep].
	UpStep float64
	// DownStep: see [Config.DownStep].
	DownStep float64
	// SlowStartGain: see [Config.SlowStartGain].
	SlowStartGain float64
	// RecoverRamp: see [Config.RecoverRamp].
	RecoverRamp float64
	// MaxBaselineRise: see [Config.MaxBaselineRise].
	MaxBaselineRise float64
	// BackoffTicks: see [Config.BackoffTicks].
	BackoffTicks int
	// RecoverTicks: see [Config.RecoverTicks].
	RecoverTicks int
}

// settings is a validated configuration with every default filled in, shared by
// both limiters: the controller sees only this.
type settings struct {
	rate              bool // the limit is a rate (a Limiter), not a count in flight
	min, max, initial float64
	slo               time.Duration
	anchor            Anchor
	classify          func(error) Outcome

	tick, fastHalfLife, slowHalfLife time.Duration

	inflation, deadband, gain, upStep, downStep float64
	slowStartGain, recoverRamp, maxBaselineRise float64

	backoffTicks, recoverTicks int
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
	s := settings{rate: true, min: c.MinRate, max: c.MaxRate, initial: c.InitialRate}
	if s.min == 0 {
		s.min = math.Min(1, s.max)
	}
	if s.initial == 0 {
		s.initial = s.max / 8
	}
	s.initial = math.Max(s.initial, s.min)
	err := s.tuning(p, tuning{
		slo: c.SLOTarget, anchor: c.Anchor, classify: c.Classify,
		tick: c.TickInterval, fastHalfLife: c.FastHalfLife, slowHalfLife: c.SlowHalfLife,
		inflation: c.TargetInflation, deadband: c.Deadband, gain: c.Gain,
		upStep: c.UpStep, downStep: c.DownStep, slowStartGain: c.SlowStartGain,
		recoverRamp: c.RecoverRamp, maxBaselineRise: c.MaxBaselineRise,
		backoffTicks: c.BackoffTicks, recoverTicks: c.RecoverTicks,
	})
	return s, err
}

func (c ConcurrencyConfig) settings() (settings, error) {
	const p = "ConcurrencyConfig."
	if c.MaxLimit <= 0 {
		return settings{}, fieldErr(p+"MaxLimit", "is required and must be > 0", c.MaxLimit)
	}
	if c.MinLimit < 0 || c.MinLimit > c.MaxLimit {
		return settings{}, fieldErr(p+"MinLimit", "must be in [0, MaxLimit]", c.MinLimit)
	}
	if c.InitialLimit != 0 && (c.InitialLimit < c.MinLimit || c.InitialLimit > c.MaxLimit) {
		return settings{}, fieldErr(p+"InitialLimit", "must be in [MinLimit, MaxLimit]", c.InitialLimit)
	}
	s := settings{min: float64(max(c.MinLimit, 1)), max: float64(c.MaxLimit), initial: float64(c.InitialLimit)}
	if s.initial == 0 {
		s.initial = math.Max(initialLimit(s.max), s.min)
	}
	err := s.tuning(p, tuning{
		slo: c.SLOTarget, anchor: c.Anchor, classify: c.Classify,
		tick: c.TickInterval, fastHalfLife: c.FastHalfLife, slowHalfLife: c.SlowHalfLife,
		inflation: c.TargetInflation, deadband: c.Deadband, gain: c.Gain,
		upStep: c.UpStep, downStep: c.DownStep, slowStartGain: c.SlowStartGain,
		recoverRamp: c.RecoverRamp, maxBaselineRise: c.MaxBaselineRise,
		backoffTicks: c.BackoffTicks, recoverTicks: c.RecoverTicks,
	})
	return s, err
}

// tuning is the part of both configurations that means the same in each.
type tuning struct {
	slo      time.Duration
	anchor   Anchor
	classify func(error) Outcome

	tick, fastHalfLife, slowHalfLife time.Duration

	inflation, deadband, gain, upStep, downStep float64
	slowStartGain, recoverRamp, maxBaselineRise float64

	backoffTicks, recoverTicks int
}

// tuning validates t, naming fields with prefix p, and stores it in s with the
// defaults filled in.
func (s *settings) tuning(p string, t tuning) error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"SLOTarget", t.slo}, {"TickInterval", t.tick},
		{"FastHalfLife", t.fastHalfLife}, {"SlowHalfLife", t.slowHalfLife},
	} {
		if d.v < 0 {
			return fieldErr(p+d.name, "must not be negative", d.v)
		}
	}
	switch t.anchor {
	case AnchorBaseline:
	case AnchorSLO:
		if t.slo == 0 {
			return errors.New("agilelimiter: " + p + "SLOTarget is required when Anchor is AnchorSLO")
		}
	default:
		return fieldErr(p+"Anchor", "must be AnchorBaseline or AnchorSLO", int(t.anchor))
	}
	for _, f := range []struct {
		name   string
		v      float64
		closed bool // true: [0, +Inf); false: [0, 1)
	}{
		{"TargetInflation", t.inflation, true}, {"Deadband", t.deadband, false},
		{"Gain", t.gain, false}, {"UpStep", t.upStep, true}, {"DownStep", t.downStep, false},
		{"RecoverRamp", t.recoverRamp, false}, {"MaxBaselineRise", t.maxBaselineRise, true},
		{"SlowStartGain", t.slowStartGain, true},
	} {
		if err := finite(p+f.name, f.v); err != nil {
			return err
		}
		if f.v < 0 {
			return fieldErr(p+f.name, "must not be negative", f.v)
		}
		if !f.closed && f.v >= 1 {
			return fieldErr(p+f.name, "must be in [0, 1)", f.v)
		}
	}
	if t.slowStartGain != 0 && t.slowStartGain < 1 {
		return fieldErr(p+"SlowStartGain", "must be ≥ 1 (1 disables slow start)", t.slowStartGain)
	}
	if t.backoffTicks < 0 {
		return fieldErr(p+"BackoffTicks", "must not be negative", t.backoffTicks)
	}
	if t.recoverTicks < 0 {
		return fieldErr(p+"RecoverTicks", "must not be negative", t.recoverTicks)
	}

	s.slo, s.anchor, s.classify = t.slo, t.anchor, t.classify
	s.tick = orDur(t.tick, DefaultTickInterval)
	if t.tick == 0 && s.rate {
		s.tick = rateTick
	}
	s.fastHalfLife = orDur(t.fastHalfLife, DefaultFastHalfLife)
	s.slowHalfLife = orDur(t.slowHalfLife, DefaultSlowHalfLife)
	s.inflation = orFloat(t.inflation, DefaultTargetInflation)
	s.deadband = orFloat(t.deadband, DefaultDeadband)
	s.gain = orFloat(t.gain, DefaultGain)
	s.upStep = orFloat(t.upStep, DefaultUpStep)
	s.downStep = orFloat(t.downStep, DefaultDownStep)
	s.slowStartGain = orFloat(t.slowStartGain, DefaultSlowStartGain)
	s.recoverRamp = t.recoverRamp
	s.maxBaselineRise = orFloat(t.maxBaselineRise, DefaultMaxBaselineRise)
	agree := 1
	if s.anchor == AnchorSLO {
		agree = 2
	}
	s.backoffTicks = orInt(t.backoffTicks, agree)
	s.recoverTicks = orInt(t.recoverTicks, agree)
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

func orDur(v, def time.Duration) time.Duration {
	if v == 0 {
		return def
	}
	return v
}

func orFloat(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
