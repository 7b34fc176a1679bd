package agileprom_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileprom "github.com/agilelimiter/agilelimiter/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// exposition is a parsed text exposition: each series ("name{labels}") with
// its value, and each family with its type.
type exposition struct {
	values map[string]float64
	types  map[string]string
}

// parse reads the text exposition format: "# TYPE name type" lines, and
// series lines "name{labels} value" (the label values in these tests hold no
// space).
func parse(t testing.TB, r io.Reader) exposition {
	t.Helper()
	e := exposition{values: map[string]float64{}, types: map[string]string{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# TYPE "):
			f := strings.Fields(line)
			e.types[f[2]] = f[3]
		case line == "" || strings.HasPrefix(line, "#"):
		default:
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if i < 0 || err != nil {
				t.Fatalf("unparsable series line %q", line)
			}
			e.values[line[:i]] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return e
}

// scrape serves reg's /metrics as a Prometheus server would get it and
// parses the answer; a gather error fails the test.
func scrape(t testing.TB, reg *prometheus.Registry) exposition {
	t.Helper()
	rec := httptest.NewRecorder()
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError})
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/metrics answered %d: %s", rec.Code, rec.Body)
	}
	return parse(t, rec.Body)
}

// of returns the series of limiter name.
func (e exposition) of(name string) map[string]float64 {
	m := map[string]float64{}
	for k, v := range e.values {
		if strings.Contains(k, `limiter="`+name+`"`) {
			m[k] = v
		}
	}
	return m
}

// register returns a pedantic registry (it checks every collected metric
// against the descriptors Describe sent) holding c.
func register(t testing.TB, c *agileprom.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	return reg
}

// decisionNames lists every decision the core counts, in its order.
func decisionNames() []string {
	var d agilelimiter.DecisionCounts
	var names []string
	d.Each(func(name string, _ uint64) { names = append(names, name) })
	return names
}

// want is the table of the package doc, restated: the series a limiter
// with stats st exports under name.
func want(name string, st agilelimiter.Stats, inbound bool) map[string]float64 {
	l := `limiter="` + name + `"`
	m := map[string]float64{}
	one := func(metric string, v float64) { m[metric+"{"+l+"}"] = v }
	one("agilelimiter_admitted_total", float64(st.Admitted))
	one("agilelimiter_measured_total", float64(st.Measured))
	if inbound {
		m["agilelimiter_rejected_total{"+l+`,reason="overload"}`] = float64(st.RejectedOverload)
		one("agilelimiter_in_flight_requests", float64(st.InFlight))
		one("agilelimiter_concurrency_limit", st.Limit)
		one("agilelimiter_concurrency_limit_min", st.Min)
		one("agilelimiter_concurrency_limit_max", st.Max)
	} else {
		m["agilelimiter_rejected_total{"+l+`,reason="deadline"}`] = float64(st.RejectedDeadline)
		m["agilelimiter_rejected_total{"+l+`,reason="canceled"}`] = float64(st.Canceled)
		one("agilelimiter_waiting_callers", float64(st.Waiting))
		one("agilelimiter_wait_p99_seconds", st.WaitP99.Seconds())
		one("agilelimiter_limit_requests_per_second", st.Limit)
		one("agilelimiter_limit_min_requests_per_second", st.Min)
		one("agilelimiter_limit_max_requests_per_second", st.Max)
		one("agilelimiter_rate_requests_per_second", st.Rate)
	}
	one("agilelimiter_latency_floor_seconds", st.Baseline.Seconds())
	one("agilelimiter_latency_p50_seconds", st.P50.Seconds())
	one("agilelimiter_latency_p99_seconds", st.P99.Seconds())
	one("agilelimiter_samples", float64(st.Samples))
	one("agilelimiter_answers_per_second", st.Delivered)
	st.Decisions.Each(func(d string, n uint64) { m[`agilelimiter_decisions_total{decision="`+d+`",`+l+"}"] = float64(n) })
	one("agilelimiter_ticks_total", float64(st.Ticks))
	return m
}

// sameSeries reports every difference between got and want.
func sameSeries(t *testing.T, got, want map[string]float64) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			t.Errorf("missing %s (want %g)", k, want[k])
		} else if g != want[k] {
			t.Errorf("%s = %g; want %g", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %g", k, got[k])
		}
	}
}

// Every family passes promlint: snake_case, base units, _total on counters
// and on counters only, help present.
func TestLint(t *testing.T) {
	c := agileprom.New()
	c.AddLimiter("out", agilelimiter.New(agilelimiter.Config{MaxRate: 10}))
	c.AddConcurrency("in", agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10}))
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	// Every family of the table, and nothing else, came out of the two.
	fams := map[string]bool{}
	for k := range scrape(t, register(t, c)).values {
		fams[k[:strings.IndexByte(k, '{')]] = true
	}
	if got, n := len(fams), 20; got != n {
		t.Errorf("%d families: %v; want %d", got, slices.Sorted(maps.Keys(fams)), n)
	}
}

// An inbound limiter full at 2 that refused a third request exports exactly
// its series, with their types, and none of an outbound limiter's.
func TestInboundSeries(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 2, InitialLimit: 2})
	c := agileprom.New()
	c.AddConcurrency("api", lim)
	reg := register(t, c)
	for i, wantOK := range []bool{true, true, false} {
		if got := lim.TryTake(); got != wantOK {
			t.Fatalf("TryTake %d = %v; want %v", i+1, got, wantOK)
		}
	}

	err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP agilelimiter_admitted_total Requests the limiter admitted (slots granted) since it was created.
# TYPE agilelimiter_admitted_total counter
agilelimiter_admitted_total{limiter="api"} 2
# HELP agilelimiter_rejected_total Requests the limiter refused since it was created, by reason: deadline (outbound: the next slot left no round trip before the caller's deadline), canceled (outbound: the caller's context ended while it waited), overload (inbound: every slot was taken).
# TYPE agilelimiter_rejected_total counter
agilelimiter_rejected_total{limiter="api",reason="overload"} 1
# HELP agilelimiter_in_flight_requests Requests holding a slot of the inbound limiter now.
# TYPE agilelimiter_in_flight_requests gauge
agilelimiter_in_flight_requests{limiter="api"} 2
`), "agilelimiter_admitted_total", "agilelimiter_rejected_total", "agilelimiter_in_flight_requests")
	if err != nil {
		t.Error(err)
	}

	e := scrape(t, reg)
	wantSeries := map[string]float64{
		`agilelimiter_admitted_total{limiter="api"}`:                   2,
		`agilelimiter_measured_total{limiter="api"}`:                   0,
		`agilelimiter_rejected_total{limiter="api",reason="overload"}`: 1,
		`agilelimiter_in_flight_requests{limiter="api"}`:               2,
		`agilelimiter_concurrency_limit{limiter="api"}`:                2,
		`agilelimiter_concurrency_limit_min{limiter="api"}`:            1, // MinLimit 0 means 1
		`agilelimiter_concurrency_limit_max{limiter="api"}`:            2,
		`agilelimiter_latency_floor_seconds{limiter="api"}`:            0, // no tick yet
		`agilelimiter_latency_p50_seconds{limiter="api"}`:              0,
		`agilelimiter_latency_p99_seconds{limiter="api"}`:              0,
		`agilelimiter_samples{limiter="api"}`:                          0,
		`agilelimiter_answers_per_second{limiter="api"}`:               0,
		`agilelimiter_ticks_total{limiter="api"}`:                      0,
	}
	for _, d := range decisionNames() {
		wantSeries[`agilelimiter_decisions_total{decision="`+d+`",limiter="api"}`] = 0
	}
	sameSeries(t, e.values, wantSeries)
	for fam, typ := range e.types {
		if wantType := map[bool]string{true: "counter", false: "gauge"}[strings.HasSuffix(fam, "_total")]; typ != wantType {
			t.Errorf("%s is a %s; want a %s", fam, typ, wantType)
		}
	}
}

// An outbound limiter exports its refusals by reason as they happen, and the
// callers waiting for a slot while they wait.
func TestOutboundSeries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 10, InitialRate: 10}) // a slot every 100ms
		c := agileprom.New()
		c.AddLimiter("payments", lim)
		reg := register(t, c)
		const l = `{limiter="payments"}`

		lim.Take() // the first slot is free
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := lim.TakeContext(ctx); !errors.Is(err, agilelimiter.ErrDeadline) {
			t.Fatalf("TakeContext with 10ms left before a slot 100ms away: %v; want ErrDeadline", err)
		}

		ctx, cancel = context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := lim.TakeContext(ctx)
			done <- err
		}()
		synctest.Wait() // blocked for the next slot
		if got := scrape(t, reg).values["agilelimiter_waiting_callers"+l]; got != 1 {
			t.Errorf("waiting_callers %g while one caller waits; want 1", got)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("TakeContext whose context was cancelled: %v", err)
		}

		wantSeries := map[string]float64{
			"agilelimiter_admitted_total" + l:                                   1,
			"agilelimiter_measured_total" + l:                                   0,
			`agilelimiter_rejected_total{limiter="payments",reason="deadline"}`: 1,
			`agilelimiter_rejected_total{limiter="payments",reason="canceled"}`: 1,
			"agilelimiter_waiting_callers" + l:                                  0,
			"agilelimiter_wait_p99_seconds" + l:                                 0,
			"agilelimiter_limit_requests_per_second" + l:                        10,
			"agilelimiter_limit_min_requests_per_second" + l:                    1, // MinRate 0 means 1
			"agilelimiter_limit_max_requests_per_second" + l:                    10,
			"agilelimiter_rate_requests_per_second" + l:                         10,
			"agilelimiter_latency_floor_seconds" + l:                            0,
			"agilelimiter_latency_p50_seconds" + l:                              0,
			"agilelimiter_latency_p99_seconds" + l:                              0,
			"agilelimiter_samples" + l:                                          0,
			"agilelimiter_answers_per_second" + l:                               0,
			"agilelimiter_ticks_total" + l:                                      0,
		}
		for _, d := range decisionNames() {
			wantSeries[`agilelimiter_decisions_total{decision="`+d+`",limiter="payments"}`] = 0
		}
		sameSeries(t, scrape(t, reg).values, wantSeries)
	})
}

// Started limiters under load export what their Stats say, in seconds where
// a duration: the decisions by reason add up to the ticks, and the latency
// the controller read is the 10ms each call took.
func TestStartedLimitersExportStats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 32})
		out := agilelimiter.New(agilelimiter.Config{MaxRate: 500})
		c := agileprom.New()
		c.AddConcurrency("in", in)
		c.AddLimiter("out", out)
		reg := register(t, c)
		in.Start()
		out.Start()

		call := func() error { time.Sleep(10 * time.Millisecond); return nil }
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for ctx.Err() == nil {
					if in.Do(call) != nil {
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
		for range 8 {
			wg.Go(func() {
				for ctx.Err() == nil {
					_ = out.Do(call)
				}
			})
		}
		time.Sleep(2 * time.Second)
		stop()
		wg.Wait()
		in.Stop() // the Stats stand still from here
		out.Stop()

		e := scrape(t, reg)
		for _, lim := range []struct {
			name    string
			st      agilelimiter.Stats
			inbound bool
		}{{"in", in.Stats(), true}, {"out", out.Stats(), false}} {
			got := e.of(lim.name)
			sameSeries(t, got, want(lim.name, lim.st, lim.inbound))

			l := `limiter="` + lim.name + `"`
			ticks := got["agilelimiter_ticks_total{"+l+"}"]
			var sum float64
			for k, v := range got {
				if strings.HasPrefix(k, "agilelimiter_decisions_total{") {
					sum += v
				}
			}
			if ticks == 0 || sum != ticks {
				t.Errorf("%s: decisions add up to %g over %g ticks; want as many, and some", lim.name, sum, ticks)
			}
			if p50 := got["agilelimiter_latency_p50_seconds{"+l+"}"]; p50 < 0.008 || p50 > 0.0125 {
				t.Errorf("%s: latency_p50_seconds %g; want about 0.010 (10ms calls)", lim.name, p50)
			}
			if n := got["agilelimiter_admitted_total{"+l+"}"]; n < 100 {
				t.Errorf("%s: admitted_total %g after 2 s of load; want hundreds", lim.name, n)
			}
		}
	})
}

// Two limiters in one collector are two sets of series told apart by the
// label limiter, each with its own values.
func TestTwoLimiters(t *testing.T) {
	a := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4, InitialLimit: 4})
	b := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 8, InitialLimit: 8})
	c := agileprom.New()
	c.AddConcurrency("a", a)
	c.AddConcurrency("b", b)
	reg := register(t, c)
	a.TryTake()
	for range 3 {
		b.TryTake()
	}
	e := scrape(t, reg)
	sameSeries(t, e.of("a"), want("a", a.Stats(), true))
	sameSeries(t, e.of("b"), want("b", b.Stats(), true))
	for _, s := range []struct {
		key  string
		want float64
	}{
		{`agilelimiter_admitted_total{limiter="a"}`, 1},
		{`agilelimiter_admitted_total{limiter="b"}`, 3},
		{`agilelimiter_concurrency_limit{limiter="a"}`, 4},
		{`agilelimiter_concurrency_limit{limiter="b"}`, 8},
	} {
		if got := e.values[s.key]; got != s.want {
			t.Errorf("%s = %g; want %g", s.key, got, s.want)
		}
	}
	if len(e.values) != len(e.of("a"))+len(e.of("b")) {
		t.Errorf("%d series; want only those of a and b", len(e.values))
	}
}

// Bad arguments panic when the limiter is added, naming what is wrong, and
// leave the collector as it was.
func TestAddPanics(t *testing.T) {
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 10})
	in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10})
	c := agileprom.New()
	c.AddLimiter("db", out)
	for _, tc := range []struct {
		what, msg string
		add       func()
	}{
		{"nil outbound", "l is nil", func() { c.AddLimiter("x", nil) }},
		{"nil inbound", "l is nil", func() { c.AddConcurrency("x", nil) }},
		{"empty outbound name", "name is empty", func() { c.AddLimiter("", out) }},
		{"empty inbound name", "name is empty", func() { c.AddConcurrency("", in) }},
		{"name not UTF-8", "not valid UTF-8", func() { c.AddLimiter("db\xff", out) }},
		{"duplicate outbound", `name "db" was already added`, func() { c.AddLimiter("db", out) }},
		{"duplicate across kinds", `name "db" was already added`, func() { c.AddConcurrency("db", in) }},
	} {
		func() {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.msg) {
					t.Errorf("%s: panic %v; want one saying %q", tc.what, r, tc.msg)
				}
			}()
			tc.add()
		}()
	}
	e := scrape(t, register(t, c))
	sameSeries(t, e.values, want("db", out.Stats(), false))
}

// Limiters added while the collector is scraped show up, without a race.
func TestAddWhileScraping(t *testing.T) {
	c := agileprom.New()
	reg := register(t, c)
	const n = 50
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			c.AddConcurrency(fmt.Sprint("in", i), agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 1}))
			c.AddLimiter(fmt.Sprint("out", i), agilelimiter.New(agilelimiter.Config{MaxRate: 1}))
		}
	})
	wg.Go(func() {
		for range 20 {
			if _, err := reg.Gather(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Wait()
	if got, err := testutil.GatherAndCount(reg, "agilelimiter_admitted_total"); err != nil || got != 2*n {
		t.Errorf("admitted_total: %d series (%v); want %d", got, err, 2*n)
	}
}

// A real /metrics endpoint on loopback shows requests admitted between two
// scrapes.
func TestScrapeOverLoopback(t *testing.T) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10})
	c := agileprom.New()
	c.AddConcurrency("http", lim)
	srv := httptest.NewServer(promhttp.HandlerFor(register(t, c), promhttp.HandlerOpts{}))
	defer srv.Close()

	get := func() float64 {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /metrics: %s", resp.Status)
		}
		v, ok := parse(t, resp.Body).values[`agilelimiter_admitted_total{limiter="http"}`]
		if !ok {
			t.Fatal("no admitted_total for limiter http")
		}
		return v
	}
	before := get()
	const more = 7
	for range more {
		if !lim.TryTake() {
			t.Fatal("TryTake refused below the limit")
		}
		lim.Release()
	}
	if after := get(); after-before != more {
		t.Errorf("admitted_total went from %g to %g after %d admissions; want +%d", before, after, more, more)
	}
}

// Describe sends every descriptor once, whatever the collector holds, so a
// limiter of either kind can be added after registration.
func TestDescribe(t *testing.T) {
	ch := make(chan *prometheus.Desc, 100)
	agileprom.New().Describe(ch)
	close(ch)
	seen := map[string]bool{}
	for d := range ch {
		if seen[d.String()] {
			t.Errorf("described twice: %s", d)
		}
		seen[d.String()] = true
	}
	if len(seen) != 20 {
		t.Errorf("%d descriptors; want the 20 families", len(seen))
	}
}

// BenchmarkCollect is the cost of one scrape of one limiter, without the
// registry's encoding.
func BenchmarkCollect(b *testing.B) {
	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 10})
	c := agileprom.New()
	c.AddConcurrency("api", lim)
	ch := make(chan prometheus.Metric, 64)
	b.ReportAllocs()
	for b.Loop() {
		c.Collect(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
}
