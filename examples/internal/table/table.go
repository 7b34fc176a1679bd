// Package table prints the examples' live tables: a header that names every
// column and its unit, then one row per interval, each starting with the
// seconds since the table began. Counts are shown per second, never per
// interval, so a row reads the same whatever the interval.
//
// It belongs to the examples, not to the library: the examples' main.go files
// keep their integration with agilelimiter in one screen, and this package,
// with [sim] and [load], holds the rest.
//
// [sim]: github.com/agilelimiter/agilelimiter/examples/internal/sim
// [load]: github.com/agilelimiter/agilelimiter/examples/internal/load
package table

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Column is one column of a [Table]: a name, a unit, and how to read its
// value when a row is printed. Make one with [PerSecond], [Value], [Millis]
// or [Text].
type Column struct {
	name, unit string
	text       bool                             // left-aligned words, not a number
	cell       func(since time.Duration) string // since: the time since the last row
}

// PerSecond is the column of a [Count]: what was added to it since the last
// row, divided by the seconds since the last row. unit names what is counted
// and ends in "/s" ("req/s", "calls/s").
func PerSecond(name, unit string, c *Count) Column {
	return Column{name: name, unit: unit, cell: func(since time.Duration) string {
		return fmt.Sprintf("%.0f", float64(c.take())/since.Seconds())
	}}
}

// Value is a column of f's value at each row, rounded to a whole number, in
// unit ("req/s", "requests").
func Value(name, unit string, f func() float64) Column {
	return Column{name: name, unit: unit, cell: func(time.Duration) string { return fmt.Sprintf("%.0f", f()) }}
}

// Millis is a column of a duration in milliseconds, to 0.1 ms; a zero
// duration (no data) prints as "-".
func Millis(name string, f func() time.Duration) Column {
	return Column{name: name, unit: "ms", cell: func(time.Duration) string { return Ms(f()) }}
}

// Text is a column of words (a state, a decision): it has no unit.
func Text(name string, f func() string) Column {
	return Column{name: name, text: true, cell: func(time.Duration) string { return f() }}
}

// Table prints rows of its columns to a writer. It is not safe for
// concurrent use: one goroutine prints it.
type Table struct {
	w      io.Writer
	cols   []Column
	widths []int
	start  time.Time
	last   time.Time
}

// New prints the header of a table of cols to w and returns the table; its
// clock, the first column ("time", in seconds), starts now.
func New(w io.Writer, cols ...Column) *Table {
	cols = append([]Column{{name: "time", unit: "s"}}, cols...)
	t := &Table{w: w, cols: cols, start: time.Now()}
	t.last = t.start
	names, units := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		unit := ""
		if c.unit != "" {
			unit = "(" + c.unit + ")"
		}
		t.widths = append(t.widths, max(len(c.name), len(unit), 5))
		names[i], units[i] = t.pad(i, c.name), t.pad(i, unit)
	}
	fmt.Fprintln(w, strings.TrimRight(strings.Join(names, " "), " "))
	fmt.Fprintln(w, strings.TrimRight(strings.Join(units, " "), " "))
	return t
}

// pad aligns s in column i: words to the left, numbers to the right.
func (t *Table) pad(i int, s string) string {
	if t.cols[i].text {
		return fmt.Sprintf("%-*s", t.widths[i], s)
	}
	return fmt.Sprintf("%*s", t.widths[i], s)
}

// Row prints one row now.
func (t *Table) Row() {
	now := time.Now()
	since := max(now.Sub(t.last), time.Millisecond)
	t.last = now
	cells := make([]string, len(t.cols))
	cells[0] = t.pad(0, fmt.Sprintf("%.2f", now.Sub(t.start).Seconds()))
	for i, c := range t.cols[1:] {
		cells[i+1] = t.pad(i+1, c.cell(since))
	}
	fmt.Fprintln(t.w, strings.TrimRight(strings.Join(cells, " "), " "))
}

// Every prints rows rows, one every interval from now, and returns after the
// last one.
func (t *Table) Every(interval time.Duration, rows int) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for range rows {
		<-tick.C
		t.Row()
	}
}

// Ms formats d in milliseconds for a table: to 0.1 ms, "-" for zero (no
// data).
func Ms(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

// Quantile returns the q-quantile of d (which it sorts), or 0 if d is empty.
func Quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	return d[min(len(d)-1, int(q*float64(len(d))))]
}
