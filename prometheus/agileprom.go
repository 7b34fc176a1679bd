// Package agileprom exports the state of agilelimiter limiters as Prometheus
// metrics. A [Collector] reads each limiter's [agilelimiter.Stats] once per
// scrape and turns it into constant metrics, so a limiter costs nothing
// between scrapes and the numbers a scrape shows are those of one instant:
//
//	c := agileprom.New()
//	c.AddLimiter("payments-api", out)   // an outbound *agilelimiter.Limiter
//	c.AddConcurrency("public-http", in) // an inbound *agilelimiter.ConcurrencyLimiter
//	prometheus.MustRegister(c)
//
// Every series carries the label limiter, the name given when the limiter
// was added: the dependency an outbound limiter paces, or the route group an
// inbound one guards. Durations are in seconds. The metrics are
//
//	agilelimiter_admitted_total{limiter}                counter  both      requests admitted (slots granted)
//	agilelimiter_rejected_total{limiter,reason}         counter  both      requests refused: reason deadline or canceled
//	                                                                       (outbound), overload (inbound)
//	agilelimiter_measured_total{limiter}                counter  both      answers the controller read (samples and
//	                                                                       Unavailable calls)
//	agilelimiter_waiting_callers{limiter}               gauge    outbound  callers blocked waiting for a slot now
//	agilelimiter_wait_p99_seconds{limiter}              gauge    outbound  p99 of the wait for a slot, last tick
//	agilelimiter_limit_requests_per_second{limiter}     gauge    outbound  the rate limit the controller set
//	agilelimiter_limit_min_requests_per_second{limiter} gauge    outbound  MinRate, the floor of that limit
//	agilelimiter_limit_max_requests_per_second{limiter} gauge    outbound  MaxRate, its ceiling
//	agilelimiter_rate_requests_per_second{limiter}      gauge    outbound  the pace calls are let out at now
//	agilelimiter_in_flight_requests{limiter}            gauge    inbound   requests holding a slot now
//	agilelimiter_concurrency_limit{limiter}             gauge    inbound   requests allowed in flight at once
//	agilelimiter_concurrency_limit_min{limiter}         gauge    inbound   MinLimit, the floor of that limit
//	agilelimiter_concurrency_limit_max{limiter}         gauge    inbound   MaxLimit, its ceiling
//	agilelimiter_latency_floor_seconds{limiter}         gauge    both      the unloaded latency the controller measured
//	agilelimiter_latency_p50_seconds{limiter}           gauge    both      median latency of the last round of answers
//	agilelimiter_latency_p99_seconds{limiter}           gauge    both      p99 latency of the last round of answers
//	agilelimiter_samples{limiter}                       gauge    both      answers the controller read last tick
//	agilelimiter_answers_per_second{limiter}            gauge    both      calls that came back per second, last tick
//	agilelimiter_decisions_total{limiter,decision}      counter  both      controller ticks by the decision each took
//	agilelimiter_ticks_total{limiter}                   counter  both      controller ticks
//
// An outbound limiter exports only the metrics marked both or outbound, an
// inbound one only those marked both or inbound. The rejected and decisions
// counters export every reason and decision from the first scrape, zeros
// included, so that rate() and increase() see a series start at zero rather
// than appear mid-incident. The counters are the limiter's own cumulative
// counts since it was created; a collector keeps no state of its own.
//
// The four series that make a limiter operable are admitted, rejected,
// waiting (or in flight) and wait p99. Alert on admitted growing while
// measured does not: the controller is blind and the limit is frozen where
// it was. docs/observability.md in the repository lists the alerts and a
// Grafana dashboard over these series.
package agileprom

import (
	"fmt"
	"sync"
	"unicode/utf8"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	"github.com/prometheus/client_golang/prometheus"
)

// The descriptors, made once for the process: every Collector exports the
// same metric families, told apart by the limiter label.
var (
	descAdmitted = newDesc("admitted_total",
		"Requests the limiter admitted (slots granted) since it was created.")
	descRejected = newDesc("rejected_total",
		"Requests the limiter refused since it was created, by reason: deadline (outbound: the next slot "+
			"left no round trip before the caller's deadline), canceled (outbound: the caller's context ended "+
			"while it waited), overload (inbound: every slot was taken).", "reason")
	descMeasured = newDesc("measured_total",
		"Answers the controller has read since the limiter was created: samples and Unavailable calls.")
	descWaiting = newDesc("waiting_callers",
		"Callers blocked waiting for a slot of the outbound limiter now.")
	descWaitP99 = newDesc("wait_p99_seconds",
		"The p99 of the time callers waited for a slot of the outbound limiter during the last tick, in seconds.")
	descLimitRate = newDesc("limit_requests_per_second",
		"The rate limit the controller set for the outbound limiter, in requests per second.")
	descLimitRateMin = newDesc("limit_min_requests_per_second",
		"The floor the outbound limiter's rate limit moves above (MinRate), in requests per second.")
	descLimitRateMax = newDesc("limit_max_requests_per_second",
		"The ceiling the outbound limiter's rate limit moves below (MaxRate), in requests per second.")
	descRate = newDesc("rate_requests_per_second",
		"The pace the outbound limiter lets calls out at now, in requests per second.")
	descInFlight = newDesc("in_flight_requests",
		"Requests holding a slot of the inbound limiter now.")
	descConcurrency = newDesc("concurrency_limit",
		"The number of requests the inbound limiter admits at once, as the controller set it.")
	descConcurrencyMin = newDesc("concurrency_limit_min",
		"The floor the inbound limiter's concurrency limit moves above (MinLimit), in requests.")
	descConcurrencyMax = newDesc("concurrency_limit_max",
		"The ceiling the inbound limiter's concurrency limit moves below (MaxLimit), in requests.")
	descFloor = newDesc("latency_floor_seconds",
		"The unloaded latency (the floor) the controller measured, in seconds; a queue is read as the wait above it.")
	descP50 = newDesc("latency_p50_seconds",
		"The median latency of the last round of answers the controller read, in seconds.")
	descP99 = newDesc("latency_p99_seconds",
		"The p99 latency of the last round of answers the controller read, in seconds.")
	descSamples = newDesc("samples",
		"The number of answers the controller read during the last tick; 0 while requests flow means it is blind.")
	descDelivered = newDesc("answers_per_second",
		"Calls that came back per second during the last tick, answered or not.")
	descDecisions = newDesc("decisions_total",
		"Controller ticks since the limiter was created, by the decision each tick took.", "decision")
	descTicks = newDesc("ticks_total",
		"Controller ticks since the limiter was created.")

	allDescs = []*prometheus.Desc{
		descAdmitted, descRejected, descMeasured,
		descWaiting, descWaitP99, descLimitRate, descLimitRateMin, descLimitRateMax, descRate,
		descInFlight, descConcurrency, descConcurrencyMin, descConcurrencyMax, descFloor, descP50, descP99, descSamples,
		descDelivered, descDecisions, descTicks,
	}
)

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("agilelimiter_"+name, help, append([]string{"limiter"}, labels...), nil)
}

// Collector is a [prometheus.Collector] over one or many limiters, each
// exported under its own value of the label limiter. Register one Collector
// with a registry and add every limiter of the process to it: two collectors
// that export the same limiter name to one registry make its Gather fail.
//
// A Collector is safe for concurrent use: limiters may be added while it is
// being scraped, and a limiter added after registration is exported from the
// next scrape on. Create it with [New].
type Collector struct {
	mu      sync.Mutex
	names   map[string]struct{}
	entries []entry // append-only: Collect reads a prefix without the lock
}

// entry is one limiter added to a Collector: exactly one of out and in is set.
type entry struct {
	name string
	out  *agilelimiter.Limiter
	in   *agilelimiter.ConcurrencyLimiter
}

// New returns a Collector with no limiter. It takes no options: the metric
// names, help and labels are fixed, so that every service's dashboards and
// alerts read the same series; the limiter label tells the limiters apart.
func New() *Collector {
	return &Collector{names: map[string]struct{}{}}
}

// AddLimiter adds an outbound limiter under the label limiter=name. It panics
// if l is nil, if name is empty or not valid UTF-8, or if a limiter (of either
// kind) was already added under name: each would export series that are not
// there, cannot be told apart or fail the scrape, a mistake better caught
// when the program starts than at every scrape.
func (c *Collector) AddLimiter(name string, l *agilelimiter.Limiter) {
	if l == nil {
		panic(fmt.Sprintf("agileprom: AddLimiter(%q, l): l is nil", name))
	}
	c.add("AddLimiter", entry{name: name, out: l})
}

// AddConcurrency adds an inbound limiter under the label limiter=name. It
// panics, as AddLimiter does, if l is nil, if name is empty or not valid
// UTF-8, or if a limiter (of either kind) was already added under name.
func (c *Collector) AddConcurrency(name string, l *agilelimiter.ConcurrencyLimiter) {
	if l == nil {
		panic(fmt.Sprintf("agileprom: AddConcurrency(%q, l): l is nil", name))
	}
	c.add("AddConcurrency", entry{name: name, in: l})
}

func (c *Collector) add(method string, e entry) {
	if e.name == "" {
		panic("agileprom: " + method + `("", l): name is empty`)
	}
	if !utf8.ValidString(e.name) {
		panic(fmt.Sprintf("agileprom: %s(%q, l): name is not valid UTF-8, which no label value may be", method, e.name))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.names[e.name]; dup {
		panic(fmt.Sprintf("agileprom: %s(%q, l): name %q was already added", method, e.name, e.name))
	}
	c.names[e.name] = struct{}{}
	c.entries = append(c.entries, e)
}

// Describe sends the descriptors of every metric a Collector can export,
// whatever limiters it holds now, so that a limiter added after registration
// is exported under descriptors the registry already knows.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect reads each limiter's Stats once and sends its metrics: those of
// both kinds, and the outbound or the inbound ones as the limiter is.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	entries := c.entries // a prefix that no later append writes to
	c.mu.Unlock()
	for _, e := range entries {
		if e.out != nil {
			collect(ch, e.name, e.out.Stats(), false)
		} else {
			collect(ch, e.name, e.in.Stats(), true)
		}
	}
}

// collect sends the metrics of one limiter's Stats.
func collect(ch chan<- prometheus.Metric, name string, st agilelimiter.Stats, inbound bool) {
	const counter, gauge = prometheus.CounterValue, prometheus.GaugeValue
	send(ch, descAdmitted, counter, float64(st.Admitted), name)
	send(ch, descMeasured, counter, float64(st.Measured), name)
	if inbound {
		send(ch, descRejected, counter, float64(st.RejectedOverload), name, "overload")
		send(ch, descInFlight, gauge, float64(st.InFlight), name)
		send(ch, descConcurrency, gauge, st.Limit, name)
		send(ch, descConcurrencyMin, gauge, st.Min, name)
		send(ch, descConcurrencyMax, gauge, st.Max, name)
	} else {
		send(ch, descRejected, counter, float64(st.RejectedDeadline), name, "deadline")
		send(ch, descRejected, counter, float64(st.Canceled), name, "canceled")
		send(ch, descWaiting, gauge, float64(st.Waiting), name)
		send(ch, descWaitP99, gauge, st.WaitP99.Seconds(), name)
		send(ch, descLimitRate, gauge, st.Limit, name)
		send(ch, descLimitRateMin, gauge, st.Min, name)
		send(ch, descLimitRateMax, gauge, st.Max, name)
		send(ch, descRate, gauge, st.Rate, name)
	}
	send(ch, descFloor, gauge, st.Baseline.Seconds(), name)
	send(ch, descP50, gauge, st.P50.Seconds(), name)
	send(ch, descP99, gauge, st.P99.Seconds(), name)
	send(ch, descSamples, gauge, float64(st.Samples), name)
	send(ch, descDelivered, gauge, st.Delivered, name)
	st.Decisions.Each(func(decision string, ticks uint64) {
		send(ch, descDecisions, counter, float64(ticks), name, decision)
	})
	send(ch, descTicks, counter, float64(st.Ticks), name)
}

// send sends one constant metric with label values lvs (the limiter's name
// first). A metric that cannot be made (never, with the fixed label counts
// above) is sent as an invalid metric, which the registry reports as a
// gather error: a scrape never panics.
func send(ch chan<- prometheus.Metric, d *prometheus.Desc, t prometheus.ValueType, v float64, lvs ...string) {
	m, err := prometheus.NewConstMetric(d, t, v, lvs...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	ch <- m
}
