// Package agileotel exports the state of agilelimiter limiters as
// OpenTelemetry metrics.
//
// [RegisterLimiter] (an outbound [agilelimiter.Limiter]) and
// [RegisterConcurrency] (an inbound [agilelimiter.ConcurrencyLimiter]) create
// observable instruments on a [metric.Meter] and register one callback that
// reads the limiter's Stats once per collection. Nothing is recorded on the
// request path: a limiter costs the exporter one Stats call per collection,
// and nothing between collections.
//
// Every data point carries the attribute agilelimiter.limiter, the name
// given at registration: the dependency an outbound limiter protects, or the
// route group an inbound one guards. The instruments, with their units (UCUM,
// durations in seconds as float64):
//
//	agilelimiter.admitted           {request}    Counter        both
//	agilelimiter.rejected           {request}    Counter        both, by agilelimiter.reason:
//	                                                            deadline, canceled (outbound); overload (inbound)
//	agilelimiter.waiting            {caller}     UpDownCounter  outbound
//	agilelimiter.in_flight          {request}    UpDownCounter  inbound
//	agilelimiter.wait.p99           s            Gauge          outbound
//	agilelimiter.measured           {answer}     Counter        both
//	agilelimiter.limit.rate         {request}/s  Gauge          outbound
//	agilelimiter.limit.rate.min     {request}/s  Gauge          outbound (MinRate)
//	agilelimiter.limit.rate.max     {request}/s  Gauge          outbound (MaxRate)
//	agilelimiter.rate               {request}/s  Gauge          outbound
//	agilelimiter.limit.concurrency  {request}    Gauge          inbound
//	agilelimiter.limit.concurrency.min, .max
//	                                {request}    Gauge          inbound (MinLimit, MaxLimit)
//	agilelimiter.latency.floor      s            Gauge          both
//	agilelimiter.latency.p50        s            Gauge          both
//	agilelimiter.latency.p99        s            Gauge          both
//	agilelimiter.samples            {answer}     Gauge          both
//	agilelimiter.answers.rate       {answer}/s   Gauge          both
//	agilelimiter.decisions          {tick}       Counter        both, by agilelimiter.decision
//	agilelimiter.ticks              {tick}       Counter        both
//
// All are observable instruments: the counters (ObservableCounter) report
// the cumulative values the limiter keeps since it was created, the two
// instruments of things in progress (waiting, in_flight) are
// ObservableUpDownCounters, and the rest are ObservableGauges. The
// decisions counter has one data point per decision the controller can
// take, zeros included, so a rate by decision exists from the first
// collection on. The numbers mean what the fields of [agilelimiter.Stats]
// say they mean.
//
// The four numbers that make a limiter operable are admitted, rejected,
// waiting (or in_flight) and wait.p99. Alert on measured standing still
// while admitted grows: the controller is blind and the limit frozen where
// it was.
package agileotel
