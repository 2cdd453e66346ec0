package interceptor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/interceptor"
)

// Issue 20, item 2: grpc.method stays bounded whatever method names a
// process sees. Thousands of made-up names that end in an IAM mixin verb
// get at most MaxMixinMethods values of their own; the rest are "other".
// The IAM table's methods always get their own.
func TestMetricsMethodValuesStayBounded(t *testing.T) {
	t.Parallel()
	h := newHarnessOf(t, []interceptor.Option{interceptor.WithMaxAttempts(2)}, withMeter())
	const names = 3000
	for i := range names {
		method := fmt.Sprintf("/tenant%d.x.v1.Svc/GetIamPolicy", i)
		// Half succeed at once (the counter), half retry once (the
		// histograms and their attribute sets too).
		s := &script{}
		if i%2 == 1 {
			s.errs = fail(grpccodes.Unavailable, 1)
		}
		if err := h.call(context.Background(), s, method, nil); err != nil {
			t.Fatal(err)
		}
	}
	// Table methods and the Updater's own keep their values after the cap.
	for _, method := range []string{getPolicy, "/google.iam.v2.Policies/UpdatePolicy", "/google.iam.admin.v1.IAM/UpdateRole", "/google.longrunning.Operations/GetOperation"} {
		if err := h.call(context.Background(), &script{}, method, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A name too long to be a generated one is "other" at once.
	if err := h.call(context.Background(), &script{}, "/"+strings.Repeat("a", 300)+".v1.Svc/GetIamPolicy", nil); err != nil {
		t.Fatal(err)
	}
	ms := h.collect()
	values := map[string]bool{}
	for _, name := range []string{"iamretry.client.calls", "iamretry.client.call.retries", "iamretry.client.call.retry_delay"} {
		for _, v := range methodValues(ms[name]) {
			values[v] = true
		}
	}
	tenants := 0
	for v := range values {
		if strings.HasPrefix(v, "tenant") {
			tenants++
		}
	}
	if tenants != interceptor.MaxMixinMethods {
		t.Errorf("%d distinct tenant grpc.method values, want MaxMixinMethods (%d)", tenants, interceptor.MaxMixinMethods)
	}
	if n, _ := sum(t, ms, "iamretry.client.calls", map[string]string{"grpc.method": "other"}); n != names-interceptor.MaxMixinMethods+1 {
		t.Errorf("other: %d calls, want %d", n, names-interceptor.MaxMixinMethods+1)
	}
	for _, v := range []string{"google.iam.v1.IAMPolicy/GetIamPolicy", "google.iam.v2.Policies/UpdatePolicy", "google.iam.admin.v1.IAM/UpdateRole", "google.longrunning.Operations/GetOperation"} {
		if !values[v] {
			t.Errorf("table method %s has no value of its own after the cap", v)
		}
	}
	if len(values) > interceptor.MaxMixinMethods+5 {
		t.Errorf("%d distinct grpc.method values", len(values))
	}
}

// methodValues lists the grpc.method values of an instrument's points.
func methodValues(mt metricdata.Metrics) []string {
	var out []string
	add := func(a map[string]string) { out = append(out, a["grpc.method"]) }
	switch d := mt.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			add(attrs(p.Attributes))
		}
	case metricdata.Histogram[int64]:
		for _, p := range d.DataPoints {
			add(attrs(p.Attributes))
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			add(attrs(p.Attributes))
		}
	}
	return out
}
