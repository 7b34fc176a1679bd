package agileotel_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	agilelimiter "github.com/agilelimiter/agilelimiter/core"
	agileotel "github.com/agilelimiter/agilelimiter/otel"
)

// An inbound limiter exported under the name "search": a service would pass
// its MeterProvider's meter and an exporter's reader; a ManualReader shows
// what one collection holds.
func ExampleRegisterConcurrency() {
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(context.Background())

	lim := agilelimiter.NewConcurrency(agilelimiter.ConcurrencyConfig{MaxLimit: 2, InitialLimit: 2})
	reg, err := agileotel.RegisterConcurrency(provider.Meter("shop"), "search", lim)
	if err != nil {
		panic(err)
	}
	defer reg.Unregister()

	lim.TryTake()
	lim.TryTake()
	lim.TryTake() // refused: both slots are taken

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	metrics := make(map[string]metricdata.Metrics)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		metrics[m.Name] = m
	}
	for _, name := range []string{"agilelimiter.admitted", "agilelimiter.rejected", "agilelimiter.in_flight"} {
		m := metrics[name]
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			fmt.Printf("%s{%s} %d %s\n", m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value, m.Unit)
		}
	}
	// Output:
	// agilelimiter.admitted{agilelimiter.limiter=search} 2 {request}
	// agilelimiter.rejected{agilelimiter.limiter=search,agilelimiter.reason=overload} 1 {request}
	// agilelimiter.in_flight{agilelimiter.limiter=search} 2 {request}
}
