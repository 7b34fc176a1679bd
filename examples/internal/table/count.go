package table

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Count is a counter the examples' goroutines add to. It is read two ways:
// per second in a table's rows ([PerSecond]), and in total for the summary
// that accounts for every call. The zero value is ready; it is safe for
// concurrent use.
type Count struct{ row, total atomic.Int64 }

// Inc adds one.
func (c *Count) Inc() { c.row.Add(1); c.total.Add(1) }

// Total is everything added since the start.
func (c *Count) Total() int64 { return c.total.Load() }

// take returns what was added since the last take and starts again.
func (c *Count) take() int64 { return c.row.Swap(0) }

// Codes counts HTTP responses by status code, 0 standing for a request that
// got no response (a timeout, a refused connection). The zero value is ready;
// it is safe for concurrent use.
type Codes struct {
	mu sync.Mutex
	n  map[int]*Count
}

// Of returns the [Count] of status code, for a [PerSecond] column. Codes that
// no column shows are counted all the same, and listed by String.
func (c *Codes) Of(code int) *Count {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[int]*Count{}
	}
	n, ok := c.n[code]
	if !ok {
		n = new(Count)
		c.n[code] = n
	}
	return n
}

// Add counts one response with status code (0: no response).
func (c *Codes) Add(code int) { c.Of(code).Inc() }

// Total is the number of responses (and non-responses) counted.
func (c *Codes) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var t int64
	for _, n := range c.n {
		t += n.Total()
	}
	return t
}

// String lists every code counted, in order, as "200×1234 429×56",
// "no answer" standing for code 0; codes made by Of but never added are left
// out.
func (c *Codes) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	codes := make([]int, 0, len(c.n))
	for code, n := range c.n {
		if n.Total() > 0 {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	var parts []string
	for _, code := range codes {
		name := fmt.Sprint(code)
		if code == 0 {
			name = "no answer"
		}
		parts = append(parts, fmt.Sprintf("%s×%d", name, c.n[code].Total()))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}
