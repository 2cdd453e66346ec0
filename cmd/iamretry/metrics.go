package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// demoMeter is the MeterProvider of `iamretry demo --metrics`: every
// Retrier and Updater of the story records into it, and a ManualReader
// reads the instruments at the end, so a user sees them without setting
// anything up.
type demoMeter struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newDemoMeter() *demoMeter {
	r := sdkmetric.NewManualReader()
	return &demoMeter{reader: r, mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))}
}

// collect reads every data point of the instruments, sorted by name and
// attributes, and shuts the provider down.
func (m *demoMeter) collect(ctx context.Context) (metricsEvent, error) {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(ctx, &rm); err != nil {
		return metricsEvent{}, fmt.Errorf("reading the instruments: %w", err)
	}
	var ev metricsEvent
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			point := func(attrs attribute.Set) metricPoint {
				return metricPoint{Name: mt.Name, Unit: mt.Unit, Attributes: attrMap(attrs)}
			}
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					mp := point(p.Attributes)
					mp.Value = &p.Value
					ev.Points = append(ev.Points, mp)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					mp := point(p.Attributes)
					sum := float64(p.Sum)
					mp.Count, mp.Sum, mp.Buckets = &p.Count, &sum, buckets(p.Bounds, p.BucketCounts)
					ev.Points = append(ev.Points, mp)
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					mp := point(p.Attributes)
					mp.Count, mp.Sum, mp.Buckets = &p.Count, &p.Sum, buckets(p.Bounds, p.BucketCounts)
					ev.Points = append(ev.Points, mp)
				}
			}
		}
	}
	slices.SortFunc(ev.Points, func(a, b metricPoint) int {
		return strings.Compare(a.Name+fmt.Sprint(a.Attributes), b.Name+fmt.Sprint(b.Attributes))
	})
	if err := m.mp.Shutdown(ctx); err != nil {
		return metricsEvent{}, err
	}
	return ev, nil
}

func attrMap(s attribute.Set) map[string]string {
	out := make(map[string]string, s.Len())
	for _, kv := range s.ToSlice() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

// buckets lists the non-empty buckets of a histogram; the last, past every
// bound, has no LE.
func buckets(bounds []float64, counts []uint64) []metricBucket {
	var out []metricBucket
	for i, c := range counts {
		if c == 0 {
			continue
		}
		b := metricBucket{Count: c}
		if i < len(bounds) {
			b.LE = &bounds[i]
		}
		out = append(out, b)
	}
	return out
}
