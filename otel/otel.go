package agileotel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// The attribute keys every data point, or a counter's split, carries.
const (
	limiterKey  = attribute.Key("agilelimiter.limiter")
	reasonKey   = attribute.Key("agilelimiter.reason")
	decisionKey = attribute.Key("agilelimiter.decision")
)

// RegisterLimiter exports the outbound limiter l under name on meter. It
// creates the instruments on meter (the instruments of one meter are shared
// by every limiter registered on it: OpenTelemetry returns the same
// instrument for the same name) and registers one callback that reads
// l.Stats() once per collection and observes every outbound instrument with
// the attribute agilelimiter.limiter=name. The limiter need not be started:
// an unstarted one reports its counters and its initial limit.
//
// It returns an error, and registers nothing, if meter or l is nil, if name
// is empty, or if name is already registered on meter (two limiters with one
// name would report their data points under the same attributes; detected
// on a meter held by pointer, as the SDK's is). Unregister the returned
// Registration to stop exporting l and free name on meter; it is idempotent.
func RegisterLimiter(meter metric.Meter, name string, l *agilelimiter.Limiter) (metric.Registration, error) {
	if err := check("RegisterLimiter", meter, name, l == nil); err != nil {
		return nil, err
	}
	return register("RegisterLimiter", meter, name, true, l.Stats)
}

// RegisterConcurrency exports the inbound limiter l under name on meter, as
// [RegisterLimiter] does an outbound one: the same instruments where they
// apply to both, the inbound ones (in_flight, limit.concurrency, the overload
// rejections) instead of the outbound ones, one Stats call per collection,
// and the same errors for a nil meter or limiter, an empty name or a name
// already registered on meter.
func RegisterConcurrency(meter metric.Meter, name string, l *agilelimiter.ConcurrencyLimiter) (metric.Registration, error) {
	if err := check("RegisterConcurrency", meter, name, l == nil); err != nil {
		return nil, err
	}
	return register("RegisterConcurrency", meter, name, false, l.Stats)
}

// check reports the first of fn's arguments that is missing, by name.
func check(fn string, meter metric.Meter, name string, nilLimiter bool) error {
	switch {
	case meter == nil:
		return fmt.Errorf("agileotel: %s: meter is nil", fn)
	case name == "":
		return fmt.Errorf("agileotel: %s: name is empty; it is the agilelimiter.limiter attribute that tells limiters apart", fn)
	case nilLimiter:
		return fmt.Errorf("agileotel: %s: limiter is nil", fn)
	}
	return nil
}

// register claims name on meter, creates the instruments a limiter of its
// kind reports on and registers the callback that reads stats once per
// collection and observes them.
func register(fn string, meter metric.Meter, name string, outbound bool, stats func() agilelimiter.Stats) (metric.Registration, error) {
	release, ok := claim(meter, name)
	if !ok {
		return nil, fmt.Errorf("agileotel: %s: name %q is already registered on this meter; unregister it first or choose another", fn, name)
	}
	ins, err := newInstruments(meter, outbound)
	if err != nil {
		release()
		return nil, fmt.Errorf("agileotel: %s: creating instruments: %w", fn, err)
	}
	a := newAttrs(name, outbound)
	var cb metric.Callback
	if outbound {
		cb = func(_ context.Context, o metric.Observer) error {
			st := stats()
			ins.observeOutbound(o, &st, a)
			return nil
		}
	} else {
		cb = func(_ context.Context, o metric.Observer) error {
			st := stats()
			ins.observeInbound(o, &st, a)
			return nil
		}
	}
	reg, err := meter.RegisterCallback(cb, ins.observables...)
	if err != nil {
		if reg != nil {
			_ = reg.Unregister()
		}
		release()
		return nil, fmt.Errorf("agileotel: %s: registering the callback: %w", fn, err)
	}
	return &registration{reg: reg, release: release}, nil
}

// registration is the Registration a limiter's export returns: it
// unregisters the callback and frees the limiter's name on its meter.
type registration struct {
	embedded.Registration
	reg     metric.Registration
	once    sync.Once
	release func()
}

// Unregister stops the callback and frees the name; it is idempotent and safe
// to call concurrently, as metric.Registration requires.
func (r *registration) Unregister() error {
	var err error
	if r.reg != nil { // a Meter may return a nil Registration for nothing to undo
		err = r.reg.Unregister()
	}
	if err == nil {
		r.once.Do(r.release)
	}
	return err
}

// names holds the limiter names registered on each meter, so that a second
// limiter under the same name is refused instead of reporting data points
// that cannot be told apart from the first one's.
var names = struct {
	sync.Mutex
	m map[nameKey]struct{}
}{m: make(map[nameKey]struct{})}

type nameKey struct {
	meter metric.Meter
	name  string
}

// claim records name as registered on meter and returns the function that
// frees it, or false if it is taken. Only a meter held by pointer (the SDK's
// and the global delegating one are) has an identity to key on: two value
// meters that compare equal (every no-op meter does) may be distinct scopes,
// so a name on those is never refused.
func claim(meter metric.Meter, name string) (release func(), ok bool) {
	if reflect.TypeOf(meter).Kind() != reflect.Pointer {
		return func() {}, true
	}
	k := nameKey{meter, name}
	names.Lock()
	defer names.Unlock()
	if _, taken := names.m[k]; taken {
		return nil, false
	}
	names.m[k] = struct{}{}
	return func() {
		names.Lock()
		delete(names.m, k)
		names.Unlock()
	}, true
}

// attrs are the measurement options of one limiter, built once at
// registration so that a collection allocates none.
type attrs struct {
	limiter            metric.MeasurementOption
	deadline, canceled metric.MeasurementOption // outbound rejections
	overload           metric.MeasurementOption // inbound rejections
	decisions          map[string]metric.MeasurementOption
	limiterKV          attribute.KeyValue
}

func newAttrs(name string, outbound bool) *attrs {
	kv := limiterKey.String(name)
	with := func(extra attribute.KeyValue) metric.MeasurementOption {
		return metric.WithAttributeSet(attribute.NewSet(kv, extra))
	}
	a := &attrs{limiter: metric.WithAttributeSet(attribute.NewSet(kv)), limiterKV: kv,
		decisions: make(map[string]metric.MeasurementOption)}
	if outbound {
		a.deadline, a.canceled = with(reasonKey.String("deadline")), with(reasonKey.String("canceled"))
	} else {
		a.overload = with(reasonKey.String("overload"))
	}
	var none agilelimiter.DecisionCounts
	none.Each(func(d string, _ uint64) { a.decisions[d] = with(decisionKey.String(d)) })
	return a
}

// decision returns the options of decision d's data point.
func (a *attrs) decision(d string) metric.MeasurementOption {
	if o, ok := a.decisions[d]; ok {
		return o
	}
	// Not reached: Each names the same decisions every time.
	return metric.WithAttributes(a.limiterKV, decisionKey.String(d))
}

// instruments are the instruments of one meter a limiter reports on. Those of
// the other kind of limiter are left nil.
type instruments struct {
	admitted, rejected, measured, decisions, ticks            metric.Int64ObservableCounter
	waiting, inFlight                                         metric.Int64ObservableUpDownCounter
	limitConcurrency, concurrencyMin, concurrencyMax, samples metric.Int64ObservableGauge
	waitP99, limitRate, rateMin, rateMax, rate                metric.Float64ObservableGauge
	floor, p50, p99, answers                                  metric.Float64ObservableGauge

	observables []metric.Observable // the ones above that are set, for RegisterCallback
}

// newInstruments creates on meter the instruments an outbound (or inbound)
// limiter reports on. The names, units and descriptions are fixed, so every
// call returns the meter's same instruments.
func newInstruments(meter metric.Meter, outbound bool) (*instruments, error) {
	var errs []error
	ins := &instruments{}
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		ins.observables = append(ins.observables, c)
		return c
	}
	upDown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		c, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		ins.observables = append(ins.observables, c)
		return c
	}
	intGauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		ins.observables = append(ins.observables, g)
		return g
	}
	gauge := func(name, unit, desc string) metric.Float64ObservableGauge {
		g, err := meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		ins.observables = append(ins.observables, g)
		return g
	}

	ins.admitted = counter("agilelimiter.admitted", "{request}",
		"Slots the limiter granted since it was created: calls let out (outbound) or requests let in (inbound).")
	ins.rejected = counter("agilelimiter.rejected", "{request}",
		"Calls the limiter refused since it was created, by agilelimiter.reason: deadline (the slot would leave no round trip "+
			"before the caller's deadline) and canceled (the caller's context ended while it waited) outbound, "+
			"overload (every slot taken) inbound.")
	ins.measured = counter("agilelimiter.measured", "{answer}",
		"Answers the controller has read since the limiter was created: samples and Unavailable calls, the evidence. "+
			"Admitted growing while this does not is a blind controller.")
	ins.floor = gauge("agilelimiter.latency.floor", "s",
		"The unloaded latency the controller measured, in seconds: the floor a queue is read above.")
	ins.p50 = gauge("agilelimiter.latency.p50", "s",
		"The median latency of the controller's last round of answers, in seconds.")
	ins.p99 = gauge("agilelimiter.latency.p99", "s",
		"The 99th percentile latency of the controller's last round of answers, in seconds.")
	ins.samples = intGauge("agilelimiter.samples", "{answer}",
		"Answers the controller read in its last tick; 0 while calls are admitted means it is blind and the limit frozen.")
	ins.answers = gauge("agilelimiter.answers.rate", "{answer}/s",
		"Calls that came back per second during the controller's last tick.")
	ins.decisions = counter("agilelimiter.decisions", "{tick}",
		"Controller ticks since the limiter was created, by agilelimiter.decision: what each tick did to the limit and why.")
	ins.ticks = counter("agilelimiter.ticks", "{tick}",
		"Controller ticks since the limiter was created.")
	if outbound {
		ins.waiting = upDown("agilelimiter.waiting", "{caller}",
			"Callers blocked waiting for an outbound slot now.")
		ins.waitP99 = gauge("agilelimiter.wait.p99", "s",
			"The 99th percentile of the time callers waited for an outbound slot during the last tick, zero waits included, in seconds.")
		ins.limitRate = gauge("agilelimiter.limit.rate", "{request}/s",
			"The outbound rate limit the controller set, in requests per second.")
		ins.rateMin = gauge("agilelimiter.limit.rate.min", "{request}/s",
			"The floor of the outbound rate limit (MinRate), in requests per second.")
		ins.rateMax = gauge("agilelimiter.limit.rate.max", "{request}/s",
			"The ceiling of the outbound rate limit (MaxRate), in requests per second.")
		ins.rate = gauge("agilelimiter.rate", "{request}/s",
			"The pace the outbound limiter lets calls out at now, in requests per second.")
	} else {
		ins.inFlight = upDown("agilelimiter.in_flight", "{request}",
			"Requests holding an inbound slot now.")
		ins.limitConcurrency = intGauge("agilelimiter.limit.concurrency", "{request}",
			"The inbound concurrency limit the controller set: requests allowed in flight at once.")
		ins.concurrencyMin = intGauge("agilelimiter.limit.concurrency.min", "{request}",
			"The floor of the inbound concurrency limit (MinLimit).")
		ins.concurrencyMax = intGauge("agilelimiter.limit.concurrency.max", "{request}",
			"The ceiling of the inbound concurrency limit (MaxLimit).")
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return ins, nil
}

func (ins *instruments) observeOutbound(o metric.Observer, st *agilelimiter.Stats, a *attrs) {
	o.ObserveInt64(ins.admitted, count(st.Admitted), a.limiter)
	o.ObserveInt64(ins.rejected, count(st.RejectedDeadline), a.deadline)
	o.ObserveInt64(ins.rejected, count(st.Canceled), a.canceled)
	o.ObserveInt64(ins.waiting, int64(st.Waiting), a.limiter)
	o.ObserveFloat64(ins.waitP99, st.WaitP99.Seconds(), a.limiter)
	o.ObserveFloat64(ins.limitRate, st.Limit, a.limiter)
	o.ObserveFloat64(ins.rateMin, st.Min, a.limiter)
	o.ObserveFloat64(ins.rateMax, st.Max, a.limiter)
	o.ObserveFloat64(ins.rate, st.Rate, a.limiter)
	ins.observeCommon(o, st, a)
}

func (ins *instruments) observeInbound(o metric.Observer, st *agilelimiter.Stats, a *attrs) {
	o.ObserveInt64(ins.admitted, count(st.Admitted), a.limiter)
	o.ObserveInt64(ins.rejected, count(st.RejectedOverload), a.overload)
	o.ObserveInt64(ins.inFlight, int64(st.InFlight), a.limiter)
	o.ObserveInt64(ins.limitConcurrency, int64(st.Limit), a.limiter)
	o.ObserveInt64(ins.concurrencyMin, int64(st.Min), a.limiter)
	o.ObserveInt64(ins.concurrencyMax, int64(st.Max), a.limiter)
	ins.observeCommon(o, st, a)
}

// observeCommon observes the instruments both kinds of limiter report on.
func (ins *instruments) observeCommon(o metric.Observer, st *agilelimiter.Stats, a *attrs) {
	o.ObserveFloat64(ins.floor, st.Baseline.Seconds(), a.limiter)
	o.ObserveFloat64(ins.p50, st.P50.Seconds(), a.limiter)
	o.ObserveFloat64(ins.p99, st.P99.Seconds(), a.limiter)
	o.ObserveInt64(ins.samples, int64(st.Samples), a.limiter)
	o.ObserveInt64(ins.measured, count(st.Measured), a.limiter)
	o.ObserveFloat64(ins.answers, st.Delivered, a.limiter)
	st.Decisions.Each(func(d string, n uint64) { o.ObserveInt64(ins.decisions, count(n), a.decision(d)) })
	o.ObserveInt64(ins.ticks, count(st.Ticks), a.limiter)
}

// count converts a counter to the int64 OpenTelemetry's integer instruments
// take, saturating instead of wrapping negative (past 9.2e18, never reached
// in practice).
func count(n uint64) int64 {
	if n > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(n)
}
