package interceptor_test

import (
	"context"
	"fmt"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/iamretry/iamretry/interceptor"
)

// A transaction run for several callers (here three callers' labels
// written at once) counts one call per caller: Ended takes the
// transaction's end from the metrics, and RecordCall counts each caller's
// call once its outcome is known.
func ExampleRetrier_RecordCall() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	r, err := interceptor.New(interceptor.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	store := &labelStore{}
	callers := []string{"env=prod", "team=ops", "tier=1"}
	var end interceptor.CallEnd
	_, err = interceptor.Transact(context.Background(), r, interceptor.ReadModifyWrite[*labels]{
		Method: "example.Labels/Add",
		Read:   store.get,
		Modify: func(l *labels) (*labels, bool, error) {
			changed := false
			for _, label := range callers {
				if !slices.Contains(l.labels, label) {
					l.labels, changed = append(l.labels, label), true
				}
			}
			return l, changed, nil
		},
		Write: store.put,
		Etag:  func(l *labels) string { return l.etag },
		Ended: func(e interceptor.CallEnd) { end = e },
	})
	if err != nil {
		panic(err)
	}
	for range callers { // each caller's outcome is the transaction's here
		r.RecordCall(context.Background(), "example.Labels/Add", end)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if s, ok := m.Data.(metricdata.Sum[int64]); ok && slices.Contains([]string{"iamretry.client.calls", "iamretry.policy.update.writes"}, m.Name) {
				fmt.Println(m.Name, s.DataPoints[0].Value)
			}
		}
	}
	// Unordered output:
	// iamretry.client.calls 3
	// iamretry.policy.update.writes 1
}
