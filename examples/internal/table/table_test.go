package table

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
)

// The header names every column and, under it, its unit; a PerSecond column
// shows its count per second of the time since the last row, whatever the
// interval.
func TestTableNamesUnitsAndShowsRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b bytes.Buffer
		var served Count
		tab := New(&b,
			Value("limit", "requests", func() float64 { return 12 }),
			PerSecond("served", "req/s", &served),
			Millis("p99", func() time.Duration { return 1500 * time.Microsecond }),
			Text("decision", func() string { return "window" }),
		)
		for range 10 {
			served.Inc()
		}
		time.Sleep(250 * time.Millisecond)
		tab.Row()
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		if len(lines) != 3 {
			t.Fatalf("%d lines; want a header of two and one row:\n%s", len(lines), b.String())
		}
		if got := strings.Fields(lines[0]); strings.Join(got, " ") != "time limit served p99 decision" {
			t.Errorf("names %q", lines[0])
		}
		if got := strings.Fields(lines[1]); strings.Join(got, " ") != "(s) (requests) (req/s) (ms)" {
			t.Errorf("units %q; want one for every column but the words", lines[1])
		}
		if got := strings.Fields(lines[2]); strings.Join(got, " ") != "0.25 12 40 1.5 window" {
			t.Errorf("row %q; want 10 counts in 0.25 s shown as 40 a second", lines[2])
		}
		if served.Total() != 10 {
			t.Errorf("total %d after a row; want 10: the total is not reset", served.Total())
		}
	})
}

// Codes accounts for every response, those no column shows included.
func TestCodesListsEveryCode(t *testing.T) {
	var c Codes
	_ = c.Of(503) // a column for a code that never came
	for _, code := range []int{200, 200, 429, 0, 200} {
		c.Add(code)
	}
	if got, want := c.String(), "no answer×1 200×3 429×1"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	if c.Total() != 5 {
		t.Errorf("Total() = %d; want 5", c.Total())
	}
}

func TestQuantile(t *testing.T) {
	d := []time.Duration{5, 1, 4, 2, 3}
	if got := Quantile(d, 0.5); got != 3 {
		t.Errorf("median %v; want 3", got)
	}
	if got := Quantile(d, 0.99); got != 5 {
		t.Errorf("p99 %v; want 5", got)
	}
	if got := Quantile(nil, 0.5); got != 0 {
		t.Errorf("quantile of nothing %v; want 0", got)
	}
}

// A server example's columns: the limit, one rate per status asked for, in
// that order, the p99 and the decision; and its totals add up.
func TestServer(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
	var codes Codes
	var names []string
	for _, c := range Server(lim, &codes, 200, 429) {
		names = append(names, c.name)
	}
	if got := strings.Join(names, ","); got != "limit,200,429,p99,decision" {
		t.Errorf("columns %s", got)
	}
	codes.Add(200)
	codes.Add(429)
	lim.TryTake()
	lim.Release()
	var b strings.Builder
	ServerTotals(&b, "x", &codes, lim)
	if want := "x: 2 requests: 200×1 429×1; the limiter admitted 1 (all but the 429s) and refused 0; in flight at the end: 0\n"; b.String() != want {
		t.Errorf("totals %q, want %q", b.String(), want)
	}
}
