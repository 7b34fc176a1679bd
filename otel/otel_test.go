package agileotel_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileotel "github.com/agilelimiter/agilelimiter/otel"
)

// The instruments by kind of limiter, as the package documents them.
var (
	outboundOnly = []string{"agilelimiter.waiting", "agilelimiter.wait.p99", "agilelimiter.limit.rate", "agilelimiter.rate",
		"agilelimiter.limit.rate.min", "agilelimiter.limit.rate.max"}
	inboundOnly = []string{"agilelimiter.in_flight", "agilelimiter.limit.concurrency",
		"agilelimiter.limit.concurrency.min", "agilelimiter.limit.concurrency.max"}
	common = []string{"agilelimiter.admitted", "agilelimiter.rejected", "agilelimiter.latency.floor",
		"agilelimiter.latency.p50", "agilelimiter.latency.p99", "agilelimiter.samples", "agilelimiter.answers.rate",
		"agilelimiter.decisions", "agilelimiter.ticks", "agilelimiter.measured"}
)

// newReader returns a meter whose metrics r collects.
func newReader(t *testing.T) (metric.Meter, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp.Meter("agileotel_test"), r
}

// collect returns the metrics r collects, by name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("Collect: %v", err)
	}
	out := make(map[string]metricdata.Metrics)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if _, dup := out[m.Name]; dup {
				t.Fatalf("metric %s collected twice", m.Name)
			}
			out[m.Name] = m
		}
	}
	return out
}

// points returns m's data points as their attributes (encoded "k=v,k=v",
// sorted by key) and values.
func points(t *testing.T, m metricdata.Metrics) map[string]float64 {
	t.Helper()
	out := make(map[string]float64)
	add := func(s attribute.Set, v float64) {
		k := s.Encoded(attribute.DefaultEncoder())
		if _, dup := out[k]; dup {
			t.Errorf("%s: two data points with attributes %s", m.Name, k)
		}
		out[k] = v
	}
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, float64(p.Value))
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, float64(p.Value))
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			add(p.Attributes, p.Value)
		}
	default:
		t.Fatalf("%s: unexpected data %T", m.Name, m.Data)
	}
	return out
}

// all returns every data point r collects, by metric name.
func all(t *testing.T, r *sdkmetric.ManualReader) map[string]map[string]float64 {
	t.Helper()
	out := make(map[string]map[string]float64)
	for name, m := range collect(t, r) {
		out[name] = points(t, m)
	}
	return out
}

// decisionNames returns every decision name, in Each's order.
func decisionNames() []string {
	var names []string
	var none agilelimiter.DecisionCounts
	none.Each(func(d string, _ uint64) { names = append(names, d) })
	return names
}

// zeroDecisions is the decisions counter of a limiter that never ticked.
func zeroDecisions(limiter string) map[string]float64 {
	out := make(map[string]float64)
	for _, d := range decisionNames() {
		out["agilelimiter.decision="+d+",agilelimiter.limiter="+limiter] = 0
	}
	return out
}

// compare fails t for every metric or data point got and want disagree on.
func compare(t *testing.T, got, want map[string]map[string]float64) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[name]; !ok {
			t.Errorf("%s: not collected", name)
			continue
		}
		for _, attrs := range slices.Sorted(maps.Keys(want[name])) {
			g, ok := got[name][attrs]
			if !ok {
				t.Errorf("%s{%s}: no data point, want %v", name, attrs, want[name][attrs])
			} else if g != want[name][attrs] {
				t.Errorf("%s{%s} = %v, want %v", name, attrs, g, want[name][attrs])
			}
		}
		for _, attrs := range slices.Sorted(maps.Keys(got[name])) {
			if _, ok := want[name][attrs]; !ok {
				t.Errorf("%s{%s} = %v: unexpected data point", name, attrs, got[name][attrs])
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected metric, points %v", name, got[name])
		}
	}
}

// TestConcurrencyValues drives an inbound limiter to known counts and checks
// every data point collected, outbound-only instruments absent.
func TestConcurrencyValues(t *testing.T) {
	meter, r := newReader(t)
	c := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 2, InitialLimit: 2})
	if _, err := agileotel.RegisterConcurrency(meter, "search", c); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, true, false} {
		if got := c.TryTake(); got != want {
			t.Fatalf("TryTake %d = %v, want %v", i, got, want)
		}
	}
	l := "agilelimiter.limiter=search"
	compare(t, all(t, r), map[string]map[string]float64{
		"agilelimiter.admitted":              {l: 2},
		"agilelimiter.rejected":              {l + ",agilelimiter.reason=overload": 1},
		"agilelimiter.in_flight":             {l: 2},
		"agilelimiter.limit.concurrency":     {l: 2},
		"agilelimiter.limit.concurrency.min": {l: 1},
		"agilelimiter.limit.concurrency.max": {l: 2},
		"agilelimiter.measured":              {l: 0},
		"agilelimiter.latency.floor":         {l: 0},
		"agilelimiter.latency.p50":           {l: 0},
		"agilelimiter.latency.p99":           {l: 0},
		"agilelimiter.samples":               {l: 0},
		"agilelimiter.answers.rate":          {l: 0},
		"agilelimiter.decisions":             zeroDecisions("search"),
		"agilelimiter.ticks":                 {l: 0},
	})

	c.Release()
	got := all(t, r)
	if v := got["agilelimiter.in_flight"][l]; v != 1 {
		t.Errorf("in_flight after a Release = %v, want 1", v)
	}
	if v := got["agilelimiter.admitted"][l]; v != 2 {
		t.Errorf("admitted after a Release = %v, want 2 (a counter, not a gauge)", v)
	}
}

// TestLimiterValues drives an outbound limiter to known counts (two takes
// refused for their deadline, a waiter, then its cancellation) and checks every
// data point collected, inbound-only instruments absent.
func TestLimiterValues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		meter, r := newReader(t)
		// MaxRate 80: the initial rate is 80/8 = 10 req/s, a slot every 100ms.
		lim := agilelimiter.New(agilelimiter.Config{MaxRate: 80})
		if _, err := agileotel.RegisterLimiter(meter, "payments", lim); err != nil {
			t.Fatal(err)
		}
		lim.Take() // the free slot
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		for range 2 { // twice, so that the reasons' counts differ
			if _, err := lim.TakeContext(ctx); err != agilelimiter.ErrDeadline {
				t.Fatalf("TakeContext with 10ms left = %v, want ErrDeadline", err)
			}
		}
		cancel()

		ctx, cancel = context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			_, err := lim.TakeContext(ctx)
			done <- err
		}()
		synctest.Wait() // blocked in the bucket
		if v := all(t, r)["agilelimiter.waiting"]["agilelimiter.limiter=payments"]; v != 1 {
			t.Errorf("waiting with one caller blocked = %v, want 1", v)
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("canceled TakeContext = %v, want context.Canceled", err)
		}

		l := "agilelimiter.limiter=payments"
		compare(t, all(t, r), map[string]map[string]float64{
			"agilelimiter.admitted": {l: 1},
			"agilelimiter.rejected": {
				l + ",agilelimiter.reason=deadline": 2,
				l + ",agilelimiter.reason=canceled": 1,
			},
			"agilelimiter.waiting":        {l: 0},
			"agilelimiter.wait.p99":       {l: 0},
			"agilelimiter.limit.rate":     {l: 10},
			"agilelimiter.limit.rate.min": {l: 1},
			"agilelimiter.limit.rate.max": {l: 80},
			"agilelimiter.measured":       {l: 0},
			"agilelimiter.rate":           {l: 10},
			"agilelimiter.latency.floor":  {l: 0},
			"agilelimiter.latency.p50":    {l: 0},
			"agilelimiter.latency.p99":    {l: 0},
			"agilelimiter.samples":        {l: 0},
			"agilelimiter.answers.rate":   {l: 0},
			"agilelimiter.decisions":      zeroDecisions("payments"),
			"agilelimiter.ticks":          {l: 0},
		})
	})
}

// TestSecondsAndTicks checks the controller's view after it ran: durations
// in seconds, samples, answers per second and ticks as Stats has them, and
// the decisions summing to the ticks, one point per decision, zeros included.
func TestSecondsAndTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		meter, r := newReader(t)
		c := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 8})
		out := agilelimiter.New(agilelimiter.Config{MaxRate: 200})
		if _, err := agileotel.RegisterConcurrency(meter, "search", c); err != nil {
			t.Fatal(err)
		}
		if _, err := agileotel.RegisterLimiter(meter, "payments", out); err != nil {
			t.Fatal(err)
		}
		c.Start()
		out.Start()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					_ = c.Do(func() error { time.Sleep(5 * time.Millisecond); return nil })
					_ = out.Do(func() error { time.Sleep(3 * time.Millisecond); return nil })
				}
			})
		}
		time.Sleep(3 * time.Second)
		close(stop)
		wg.Wait()
		c.Stop()
		out.Stop()
		synctest.Wait()

		got := all(t, r)
		for _, tc := range []struct {
			name string
			st   agilelimiter.Stats
		}{{"search", c.Stats()}, {"payments", out.Stats()}} {
			l := "agilelimiter.limiter=" + tc.name
			if tc.st.Ticks == 0 || tc.st.Samples == 0 {
				t.Fatalf("%s: Stats after 3s of traffic %+v: no ticks or no samples, the test drives nothing", tc.name, tc.st)
			}
			for metric, want := range map[string]float64{
				"agilelimiter.ticks":         float64(tc.st.Ticks),
				"agilelimiter.measured":      float64(tc.st.Measured),
				"agilelimiter.latency.floor": tc.st.Baseline.Seconds(),
				"agilelimiter.latency.p50":   tc.st.P50.Seconds(),
				"agilelimiter.latency.p99":   tc.st.P99.Seconds(),
				"agilelimiter.samples":       float64(tc.st.Samples),
				"agilelimiter.answers.rate":  tc.st.Delivered,
			} {
				if g, ok := got[metric][l]; !ok || g != want {
					t.Errorf("%s{%s} = %v (present %v), want %v", metric, l, g, ok, want)
				}
			}
			// The service sleeps 5ms (inbound) and 3ms (outbound): the
			// floor, in seconds, is that, not a count of nanoseconds.
			if f := got["agilelimiter.latency.floor"][l]; f < 0.001 || f > 0.01 {
				t.Errorf("%s: latency.floor = %v s, want the service's few milliseconds", tc.name, f)
			}

			var sum float64
			n := 0
			for _, d := range decisionNames() {
				v, ok := got["agilelimiter.decisions"]["agilelimiter.decision="+d+","+l]
				if !ok {
					t.Errorf("%s: no decisions point for %q (zeros are exported too)", tc.name, d)
				}
				if want := float64(tc.st.Decisions.Get(d)); v != want {
					t.Errorf("%s: decisions{%s} = %v, want %v", tc.name, d, v, want)
				}
				if v > 0 {
					n++
				}
				sum += v
			}
			if sum != got["agilelimiter.ticks"][l] {
				t.Errorf("%s: decisions sum to %v, ticks = %v", tc.name, sum, got["agilelimiter.ticks"][l])
			}
			if n < 2 {
				t.Errorf("%s: only %d decision(s) counted; the test should make the controller take several", tc.name, n)
			}
		}
		if n, want := len(got["agilelimiter.decisions"]), 2*len(decisionNames()); n != want {
			t.Errorf("decisions: %d points for two limiters, want %d", n, want)
		}
	})
}

// limiterValues returns, per metric, the agilelimiter.limiter values of its
// data points.
func limiterValues(t *testing.T, got map[string]map[string]float64) map[string][]string {
	t.Helper()
	out := make(map[string][]string)
	for name, pts := range got {
		seen := make(map[string]bool)
		for attrs := range pts {
			for kv := range strings.SplitSeq(attrs, ",") {
				if v, ok := strings.CutPrefix(kv, "agilelimiter.limiter="); ok {
					seen[v] = true
				}
			}
		}
		out[name] = slices.Sorted(maps.Keys(seen))
	}
	return out
}

// TestTwoLimiters registers an outbound and an inbound limiter on one meter:
// each instrument's points carry the right limiter, and each kind's own
// instruments only its limiter.
func TestTwoLimiters(t *testing.T) {
	meter, r := newReader(t)
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
	if _, err := agileotel.RegisterLimiter(meter, "payments", out); err != nil {
		t.Fatal(err)
	}
	if _, err := agileotel.RegisterConcurrency(meter, "search", in); err != nil {
		t.Fatal(err)
	}
	out.Take()
	out.Take()
	in.TryTake()

	got := all(t, r)
	lims := limiterValues(t, got)
	want := map[string][]string{}
	for _, n := range outboundOnly {
		want[n] = []string{"payments"}
	}
	for _, n := range inboundOnly {
		want[n] = []string{"search"}
	}
	for _, n := range common {
		want[n] = []string{"payments", "search"}
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		if !slices.Equal(lims[name], want[name]) {
			t.Errorf("%s: limiters %v, want %v", name, lims[name], want[name])
		}
	}
	if len(lims) != len(want) {
		t.Errorf("collected %d metrics %v, want %d", len(lims), slices.Sorted(maps.Keys(lims)), len(want))
	}
	if a := got["agilelimiter.admitted"]; a["agilelimiter.limiter=payments"] != 2 || a["agilelimiter.limiter=search"] != 1 {
		t.Errorf("admitted = %v, want payments 2, search 1", a)
	}
	wantReasons := []string{
		"agilelimiter.limiter=payments,agilelimiter.reason=canceled",
		"agilelimiter.limiter=payments,agilelimiter.reason=deadline",
		"agilelimiter.limiter=search,agilelimiter.reason=overload",
	}
	if rs := slices.Sorted(maps.Keys(got["agilelimiter.rejected"])); !slices.Equal(rs, wantReasons) {
		t.Errorf("rejected points %v, want %v", rs, wantReasons)
	}
}

// TestUnregister: an unregistered limiter is gone from the next collection,
// the others stay, Unregister is idempotent and frees the name.
func TestUnregister(t *testing.T) {
	meter, r := newReader(t)
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
	regOut, err := agileotel.RegisterLimiter(meter, "payments", out)
	if err != nil {
		t.Fatal(err)
	}
	regIn, err := agileotel.RegisterConcurrency(meter, "search", in)
	if err != nil {
		t.Fatal(err)
	}
	if lims := limiterValues(t, all(t, r)); !slices.Equal(lims["agilelimiter.admitted"], []string{"payments", "search"}) {
		t.Fatalf("before Unregister: admitted from %v, want payments and search", lims["agilelimiter.admitted"])
	}

	if err := regOut.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := regOut.Unregister(); err != nil {
		t.Errorf("second Unregister: %v, want nil", err)
	}
	lims := limiterValues(t, all(t, r))
	for _, name := range slices.Sorted(maps.Keys(lims)) {
		if slices.Contains(lims[name], "payments") {
			t.Errorf("%s: still has payments after its Unregister", name)
		}
	}
	if !slices.Equal(lims["agilelimiter.admitted"], []string{"search"}) {
		t.Errorf("admitted from %v after payments' Unregister, want search", lims["agilelimiter.admitted"])
	}

	if err := regIn.Unregister(); err != nil {
		t.Fatal(err)
	}
	for name, pts := range all(t, r) {
		if len(pts) > 0 {
			t.Errorf("%s: points %v after every limiter unregistered", name, pts)
		}
	}

	// The name is free again.
	reg, err := agileotel.RegisterLimiter(meter, "payments", out)
	if err != nil {
		t.Fatalf("RegisterLimiter after Unregister: %v", err)
	}
	if lims := limiterValues(t, all(t, r)); !slices.Equal(lims["agilelimiter.admitted"], []string{"payments"}) {
		t.Errorf("re-registered: admitted from %v, want payments", lims["agilelimiter.admitted"])
	}
	_ = reg.Unregister()
}

// TestErrors: a nil meter or limiter, an empty name, or a name already
// registered on the meter is an error naming the argument, and registers
// nothing.
func TestErrors(t *testing.T) {
	meter, r := newReader(t)
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	in := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})
	for _, tc := range []struct {
		what string
		call func() (metric.Registration, error)
		want string
	}{
		{"RegisterLimiter nil meter", func() (metric.Registration, error) { return agileotel.RegisterLimiter(nil, "x", out) }, "meter is nil"},
		{"RegisterLimiter nil limiter", func() (metric.Registration, error) { return agileotel.RegisterLimiter(meter, "x", nil) }, "limiter is nil"},
		{"RegisterLimiter empty name", func() (metric.Registration, error) { return agileotel.RegisterLimiter(meter, "", out) }, "name is empty"},
		{"RegisterConcurrency nil meter", func() (metric.Registration, error) { return agileotel.RegisterConcurrency(nil, "x", in) }, "meter is nil"},
		{"RegisterConcurrency nil limiter", func() (metric.Registration, error) { return agileotel.RegisterConcurrency(meter, "x", nil) }, "limiter is nil"},
		{"RegisterConcurrency empty name", func() (metric.Registration, error) { return agileotel.RegisterConcurrency(meter, "", in) }, "name is empty"},
	} {
		reg, err := tc.call()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one saying %q", tc.what, err, tc.want)
		}
		if reg != nil {
			t.Errorf("%s: a Registration with the error", tc.what)
		}
	}
	for name, pts := range all(t, r) {
		if len(pts) > 0 {
			t.Errorf("%s: points %v after failed registrations only", name, pts)
		}
	}

	reg, err := agileotel.RegisterLimiter(meter, "db", out)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Unregister()
	other := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	other.Take()
	if reg, err := agileotel.RegisterLimiter(meter, "db", other); err == nil || !strings.Contains(err.Error(), `"db" is already registered`) || reg != nil {
		t.Errorf("second RegisterLimiter under db: %v, %v; want an error naming db", reg, err)
	}
	if reg, err := agileotel.RegisterConcurrency(meter, "db", in); err == nil || !strings.Contains(err.Error(), `"db" is already registered`) || reg != nil {
		t.Errorf("RegisterConcurrency under an outbound limiter's name: %v, %v; want an error naming db", reg, err)
	}
	if v := all(t, r)["agilelimiter.admitted"]; len(v) != 1 || v["agilelimiter.limiter=db"] != 0 {
		t.Errorf("admitted %v, want the first db limiter's 0 only", v)
	}

	// Another meter is another scope: the same name is fine there.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	reg2, err := agileotel.RegisterLimiter(mp.Meter("other"), "db", other)
	if err != nil {
		t.Errorf("db on another meter: %v", err)
	} else {
		_ = reg2.Unregister()
	}
}

// sliceMeter is a Meter held by value that cannot be a map key.
type sliceMeter struct {
	noop.Meter
	_ []int
}

// TestValueMeters: meters held by value (no-op meters of two scopes, equal
// as values; one that cannot be a map key) have no identity to detect a
// duplicate name on: both registrations succeed, neither panics.
func TestValueMeters(t *testing.T) {
	out := agilelimiter.New(agilelimiter.Config{MaxRate: 100})
	mp := noop.NewMeterProvider()
	for _, m := range []metric.Meter{mp.Meter("a"), mp.Meter("b"), sliceMeter{}, sliceMeter{}} {
		reg, err := agileotel.RegisterLimiter(m, "db", out)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		if err := reg.Unregister(); err != nil {
			t.Errorf("%T: Unregister: %v", m, err)
		}
	}
	regs := []metric.Registration{}
	for _, m := range []metric.Meter{mp.Meter("a"), mp.Meter("b"), sliceMeter{}, sliceMeter{}} {
		reg, err := agileotel.RegisterLimiter(m, "db", out) // none unregistered yet
		if err != nil {
			t.Errorf("%T held by value, db again: %v", m, err)
			continue
		}
		regs = append(regs, reg)
	}
	for _, reg := range regs {
		_ = reg.Unregister()
	}
}

// TestUnitsAndKinds checks every instrument's unit, description and data
// type: cumulative monotonic sums for counters, non-monotonic ones for
// up-down counters, gauges for the rest.
func TestUnitsAndKinds(t *testing.T) {
	meter, r := newReader(t)
	if _, err := agileotel.RegisterLimiter(meter, "payments", agilelimiter.New(agilelimiter.Config{MaxRate: 100})); err != nil {
		t.Fatal(err)
	}
	if _, err := agileotel.RegisterConcurrency(meter, "search", agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 4})); err != nil {
		t.Fatal(err)
	}
	const (
		counter = "counter"
		upDown  = "updown"
		intG    = "int gauge"
		floatG  = "float gauge"
	)
	want := map[string]struct{ unit, kind string }{
		"agilelimiter.admitted":              {"{request}", counter},
		"agilelimiter.rejected":              {"{request}", counter},
		"agilelimiter.waiting":               {"{caller}", upDown},
		"agilelimiter.in_flight":             {"{request}", upDown},
		"agilelimiter.wait.p99":              {"s", floatG},
		"agilelimiter.limit.rate":            {"{request}/s", floatG},
		"agilelimiter.rate":                  {"{request}/s", floatG},
		"agilelimiter.limit.concurrency":     {"{request}", intG},
		"agilelimiter.limit.concurrency.min": {"{request}", intG},
		"agilelimiter.limit.concurrency.max": {"{request}", intG},
		"agilelimiter.limit.rate.min":        {"{request}/s", floatG},
		"agilelimiter.limit.rate.max":        {"{request}/s", floatG},
		"agilelimiter.measured":              {"{answer}", counter},
		"agilelimiter.latency.floor":         {"s", floatG},
		"agilelimiter.latency.p50":           {"s", floatG},
		"agilelimiter.latency.p99":           {"s", floatG},
		"agilelimiter.samples":               {"{answer}", intG},
		"agilelimiter.answers.rate":          {"{answer}/s", floatG},
		"agilelimiter.decisions":             {"{tick}", counter},
		"agilelimiter.ticks":                 {"{tick}", counter},
	}
	got := collect(t, r)
	if len(got) != len(want) {
		t.Errorf("collected %d metrics %v, want %d", len(got), slices.Sorted(maps.Keys(got)), len(want))
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		w := want[name]
		m, ok := got[name]
		if !ok {
			t.Errorf("%s: not collected", name)
			continue
		}
		if m.Unit != w.unit {
			t.Errorf("%s: unit %q, want %q", name, m.Unit, w.unit)
		}
		if m.Description == "" {
			t.Errorf("%s: no description", name)
		}
		var kind string
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			if d.Temporality != metricdata.CumulativeTemporality {
				t.Errorf("%s: temporality %v, want cumulative", name, d.Temporality)
			}
			kind = upDown
			if d.IsMonotonic {
				kind = counter
			}
		case metricdata.Gauge[int64]:
			kind = intG
		case metricdata.Gauge[float64]:
			kind = floatG
		default:
			kind = fmt.Sprintf("%T", m.Data)
		}
		if kind != w.kind {
			t.Errorf("%s: %s, want %s", name, kind, w.kind)
		}
	}
}
