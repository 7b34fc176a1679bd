package httpserver

import (
	"encoding/json"
	"math"
	"net/http"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// StatsReport is the JSON document [StatsHandler] serves: one flat object
// whose keys are snake_case, with every duration in milliseconds as a number
// (to the microsecond) and named so (`p99_ms`). After 200 requests of 20 ms
// (TestStatsHandler), with one in flight:
//
//	{"limit":3,"in_flight":1,"peak_in_flight":1,"baseline_ms":20.447,"high_ms":60.447,
//	 "p50_ms":20.447,"p99_ms":20.447,"samples":6,"unreachable":0,"decision":"idle",
//	 "ticks":40,"admitted":201,"rejected_overload":0}
//
// The fields are those of [agilelimiter.Stats] that an inbound limiter fills;
// see there for how each is measured.
type StatsReport struct {
	// Limit is the number of requests admitted at once now.
	Limit int `json:"limit"`
	// InFlight is the number of requests holding a slot now.
	InFlight int `json:"in_flight"`
	// PeakInFlight is the most requests in flight at once during the last
	// tick.
	PeakInFlight int `json:"peak_in_flight"`

	// BaselineMs is the floor, the unloaded latency, in milliseconds: a
	// queue is read as the wait above it.
	BaselineMs float64 `json:"baseline_ms"`
	// HighMs is the latency, in milliseconds, an Unavailable request is
	// recorded at.
	HighMs float64 `json:"high_ms"`
	// P50Ms and P99Ms are the quantiles of the last round of answers, in
	// milliseconds.
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	// Samples is the number of answers in the last tick; 0 while requests
	// flow means the controller is blind and the limit frozen.
	Samples int `json:"samples"`
	// Unreachable is how many of Samples were Unavailable requests.
	Unreachable int `json:"unreachable"`
	// Decision says what the last tick did, one reason each (see
	// [agilelimiter.Stats]).
	Decision string `json:"decision"`
	// Ticks counts controller ticks since Start.
	Ticks uint64 `json:"ticks"`

	// Admitted counts requests admitted since the limiter was made.
	Admitted uint64 `json:"admitted"`
	// RejectedOverload counts requests refused because every slot was taken.
	RejectedOverload uint64 `json:"rejected_overload"`
}

// StatsHandler serves lim's state as JSON ([StatsReport]) with Cache-Control:
// no-store. Mount it outside the limited subtree, so that it answers while the
// service is saturated.
func StatsHandler(lim *agilelimiter.ConcurrencyLimiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := report(lim.Stats())
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(rep)
	})
}

// report returns an inbound limiter's st as a StatsReport.
func report(st agilelimiter.Stats) StatsReport {
	return StatsReport{
		Limit:            int(st.Limit),
		InFlight:         st.InFlight,
		PeakInFlight:     st.PeakInFlight,
		BaselineMs:       millis(st.Baseline),
		HighMs:           millis(st.High),
		P50Ms:            millis(st.P50),
		P99Ms:            millis(st.P99),
		Samples:          st.Samples,
		Unreachable:      st.Unreachable,
		Decision:         st.Decision,
		Ticks:            st.Ticks,
		Admitted:         st.Admitted,
		RejectedOverload: st.RejectedOverload,
	}
}

// millis returns d in milliseconds, rounded to the microsecond.
func millis(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}
