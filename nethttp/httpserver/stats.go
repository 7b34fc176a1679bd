package httpserver

import (
	"encoding/json"
	"net/http"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// StatsReport is the JSON document [StatsHandler] serves.
type StatsReport struct {
	// Limit is the number of requests admitted at once now.
	Limit int `json:"limit"`
	// InFlight is the number of requests holding a slot now.
	InFlight int `json:"in_flight"`
	// Stats is lim.Stats(): the controller's view after the last tick and the
	// counters. Durations are in nanoseconds, as time.Duration encodes.
	Stats agilelimiter.Stats `json:"stats"`
}

// StatsHandler serves lim's state as JSON ([StatsReport]) with Cache-Control:
// no-store. Mount it outside the limited subtree, so that it answers while the
// service is saturated.
func StatsHandler(lim *agilelimiter.ConcurrencyLimiter) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep := StatsReport{Limit: lim.Limit(), InFlight: lim.InFlight(), Stats: lim.Stats()}
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(rep)
	})
}
