package agileredis

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/redis/go-redis/v9"
)

const (
	// DefaultTimeout bounds the callers' wait for one Redis call when
	// Config.Timeout is zero: two ticks of a Limiter's controller
	// (agilelimiter.DefaultRateTickInterval, 10 ms). A healthy Redis
	// answers the script in well under a millisecond on a local network,
	// so a call past 20 ms is sick, not busy, and waiting longer would
	// hold every caller of the instance for more than the controller's
	// own resolution. A single late call (a pause of this process, a
	// throttled container) costs a blip at the fallback ceiling until its
	// answer comes, not an outage.
	DefaultTimeout = 20 * time.Millisecond

	// DefaultFallbackRate is the local ceiling, in calls per second, while
	// Redis is unreachable, when neither Config.Instances nor
	// Config.FallbackRate is set: 1 call a second, like a Limiter's default
	// MinRate. Without a count of instances a gate cannot know its share,
	// and any figure above the quota divided by the largest fleet breaks
	// the quota; one call a second keeps the dependency probed and costs a
	// quota nearly nothing.
	DefaultFallbackRate = 1.0

	// BatchWindow sets the default Config.Batch: the slots an instance's
	// share of the quota (Rate/Instances, or Rate when Instances is zero)
	// holds in 20 ms, at least 1. An instance using its whole share then
	// calls Redis about 50 times a second whatever the rate (at 1000 calls
	// a second and 4 instances: batches of 5, about 200 Redis calls a
	// second in all, 220 measured), and a batch is never coarser than two
	// ticks of the Limiter's controller (10 ms), which reads its calls at
	// that period; its slots are handed out 1/Rate apart in any case.
	BatchWindow = 20 * time.Millisecond

	// ProbeInterval is how often a Gate that fell back asks Redis whether
	// it answers again: once a second, so an outage costs Redis (and a
	// struggling Redis) one call a second from each instance, and recovery
	// is noticed within a second.
	ProbeInterval = time.Second

	// MaxRate is the largest Config.Rate accepted: a million calls a
	// second. The script reckons in microseconds on Redis's clock, with 53
	// bits of precision; past it the distance between two slots is less
	// than the clock's resolution.
	MaxRate = 1e6

	// keyMargin is how long the key outlives the end of the last slot it
	// reserved: past that instant the key says nothing a missing key does
	// not (the timeline is free from now).
	keyMargin = time.Second
)

// Config configures a [Gate]. Client, Key and Rate are required; every zero
// field means the documented default.
type Config struct {
	// Client is the Redis client the quota lives behind: a *redis.Client,
	// a *redis.ClusterClient (the quota is one key, so one slot) or a
	// *redis.Ring. Required. No caller waits on it past Timeout, but a
	// call the callers stopped waiting for runs on in the background: up
	// to a ProbeInterval if the client has ContextTimeoutEnabled (its late
	// answer may end a blip), or to its ReadTimeout (5 s by default) if
	// not. Set ContextTimeoutEnabled, so that such calls end on time and
	// [Gate.Close] returns at once.
	Client redis.UniversalClient
	// Key is the quota's key in Redis, e.g. "agilelimiter:payments-api".
	// Required. Every instance sharing a quota uses the same Key and the
	// same Rate; two quotas need two keys.
	Key string
	// Rate is the global quota: calls per second across every instance.
	// Required, in [agilelimiter.MinAllowedRate, MaxRate].
	Rate float64
	// Instances is how many instances you expect to share the quota. While
	// Redis is unreachable each paces at Rate/Instances, which keeps the
	// fleet under the quota if it is no larger than that. It also sets the
	// default Batch. Zero means unknown: the fallback ceiling is
	// FallbackRate. At least 0; set Instances or FallbackRate, not both.
	Instances int
	// FallbackRate is the local ceiling, in calls per second, while Redis
	// is unreachable, when Instances is zero. Zero means
	// DefaultFallbackRate (1 call a second; see there why). Must be 0 or
	// in [agilelimiter.MinAllowedRate, Rate].
	FallbackRate float64
	// Batch is the most slots one Redis call reserves. A gate reserves
	// what its callers are expected to use before the batch's last slot
	// (those waiting, and those its recent arrival rate brings), never
	// more than Batch, so a quiet instance wastes no slot of the quota and
	// a busy one calls Redis once per Batch calls. Zero means the slots of
	// an instance's share in BatchWindow (20 ms), at least 1: see
	// BatchWindow for the figures.
	Batch int
	// Timeout bounds the wait for one Redis call. Zero means
	// DefaultTimeout (20 ms; see there why). A call past it sends the
	// gate's callers to the local fallback ceiling at once. One late call
	// in a ProbeInterval is a blip: its answer, if it comes, returns the
	// gate to the quota. A call that fails, a second late one, or one
	// with no answer within a ProbeInterval is an outage: logged, and
	// ended by a probe answered within Timeout. The gate's first call,
	// which dials a connection and loads the script, may take ten times
	// as long. A non-zero value must be at least a millisecond.
	Timeout time.Duration
	// Logger, if set, logs the fallback once at Warn when Redis stops
	// answering (with the error and the fallback ceiling) and the recovery
	// at Info (with how long it lasted). Nil, the default, logs nothing: a
	// library is silent unless asked.
	Logger *slog.Logger
}

// settings is a validated Config with its defaults filled in.
type settings struct {
	Config
	spacing   time.Duration // 1/Rate, rounded up: the distance between two slots of the quota
	fbRate    float64
	fbSpacing time.Duration
}

func (c Config) settings() (settings, error) {
	const p = "Config."
	if c.Client == nil {
		return settings{}, errors.New("agileredis: " + p + "Client is required")
	}
	if c.Key == "" {
		return settings{}, errors.New("agileredis: " + p + "Key is required")
	}
	if math.IsNaN(c.Rate) || c.Rate < agilelimiter.MinAllowedRate || c.Rate > MaxRate {
		return settings{}, fieldErr(p+"Rate", "is required and must be in [MinAllowedRate (1e-06), MaxRate (1e6)] calls per second", c.Rate)
	}
	if c.Instances < 0 {
		return settings{}, fieldErr(p+"Instances", "must not be negative", c.Instances)
	}
	if math.IsNaN(c.FallbackRate) || c.FallbackRate != 0 && (c.FallbackRate < agilelimiter.MinAllowedRate || c.FallbackRate > c.Rate) {
		return settings{}, fieldErr(p+"FallbackRate", "must be 0 or in [MinAllowedRate (1e-06), Rate]", c.FallbackRate)
	}
	if c.Instances > 0 && c.FallbackRate != 0 {
		return settings{}, fieldErr(p+"FallbackRate", "must be 0 when Instances is set (the fallback ceiling is then Rate/Instances)", c.FallbackRate)
	}
	if c.Batch < 0 {
		return settings{}, fieldErr(p+"Batch", "must not be negative", c.Batch)
	}
	if c.Timeout < 0 || c.Timeout > 0 && c.Timeout < time.Millisecond {
		return settings{}, fieldErr(p+"Timeout", "must be 0 (the default) or at least 1ms", c.Timeout)
	}
	s := settings{Config: c, spacing: spacing(c.Rate)}
	share := c.Rate
	if c.Instances > 0 {
		share /= float64(c.Instances)
		s.fbRate = share
	} else {
		s.fbRate = c.FallbackRate
		if s.fbRate == 0 {
			s.fbRate = min(DefaultFallbackRate, c.Rate)
		}
	}
	s.fbSpacing = spacing(s.fbRate)
	if s.Batch == 0 {
		s.Batch = max(1, int(math.Floor(share*BatchWindow.Seconds()+1e-9)))
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	return s, nil
}

// spacing is 1/rate as a duration, rounded up so that slots never come
// faster than rate.
func spacing(rate float64) time.Duration {
	return time.Duration(math.Ceil(float64(time.Second) / rate))
}

func fieldErr(name, rule string, got any) error {
	return fmt.Errorf("agileredis: %s %s (got %v)", name, rule, got)
}
