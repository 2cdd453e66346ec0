package main

import (
	"context"
	"fmt"
	"io"
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

// print writes every data point of the instruments, one a line, sorted:
// counters as their value, histograms as count, sum and the non-empty
// buckets.
func (m *demoMeter) print(ctx context.Context, w io.Writer) error {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(ctx, &rm); err != nil {
		return fmt.Errorf("reading the instruments: %w", err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s %d", mt.Name, fmtAttrs(p.Attributes), p.Value))
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%d%s", mt.Name, fmtAttrs(p.Attributes), p.Count, p.Sum, fmtBuckets(p.Bounds, p.BucketCounts)))
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s%s count=%d sum=%.3fs%s", mt.Name, fmtAttrs(p.Attributes), p.Count, p.Sum, fmtBuckets(p.Bounds, p.BucketCounts)))
				}
			}
		}
	}
	slices.Sort(lines)
	var b strings.Builder
	b.WriteString("\nOpenTelemetry instruments (meter github.com/iamretry/iamretry), read through a ManualReader:\n")
	for _, l := range lines {
		b.WriteString("  " + l + "\n")
	}
	if err := m.mp.Shutdown(ctx); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtAttrs(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.Emit())
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// fmtBuckets lists the non-empty buckets as " le<bound>:count" (the last,
// past every bound, as "inf").
func fmtBuckets(bounds []float64, counts []uint64) string {
	var b strings.Builder
	for i, c := range counts {
		if c == 0 {
			continue
		}
		le := "inf"
		if i < len(bounds) {
			le = fmt.Sprint(bounds[i])
		}
		fmt.Fprintf(&b, " le%s:%d", le, c)
	}
	return b.String()
}
