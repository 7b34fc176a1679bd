package table

import (
	"fmt"
	"io"
	"strconv"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// Server returns the columns a framework example prints of its limiter: the
// limit, the rate of each status in statuses as codes counted them, the p99
// the controller read and its last decision.
func Server(lim *agilelimiter.ConcurrencyLimiter, codes *Codes, statuses ...int) []Column {
	cols := []Column{Value("limit", "requests", func() float64 { return float64(lim.Limit()) })}
	for _, s := range statuses {
		cols = append(cols, PerSecond(strconv.Itoa(s), "req/s", codes.Of(s)))
	}
	return append(cols,
		Millis("p99", func() time.Duration { return lim.Stats().P99 }),
		Text("decision", func() string { return lim.Stats().Decision }))
}

// ServerTotals prints what every request got, as what, and what the limiter
// counted: the admitted requests are all but the 429s, so the two add up.
func ServerTotals(w io.Writer, who string, codes *Codes, lim *agilelimiter.ConcurrencyLimiter) {
	st := lim.Stats()
	fmt.Fprintf(w, "%s: %d requests: %s; the limiter admitted %d (all but the 429s) and refused %d; in flight at the end: %d\n",
		who, codes.Total(), codes, st.Admitted, st.RejectedOverload, lim.InFlight())
}
