package role_test

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestMetricsCountUnderUpdateMethod: an Update that meets a failed read and
// a concurrent change is counted under grpc.method role.UpdateMethod (the
// interceptor's table knows it), not "other": one call, two retries, two
// writes, one conflict.
func TestMetricsCountUnderUpdateMethod(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	e := newEnv(t, interceptor.WithMeterProvider(mp))
	e.createRole(t, "run.services.get")
	ctx := context.Background()
	rec := &recorder{Client: e.admin, beforeWrite: func(n int) {
		if n != 1 {
			return
		}
		cur, err := e.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: roleName}, gax.WithRetry(nil))
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := e.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: roleName,
			Role:       &adminpb.Role{Etag: cur.Etag, Title: "other writer"},
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}}, gax.WithRetry(nil)); err != nil {
			t.Error(err)
		}
	}}
	u := e.updater(t, rec)
	e.srv.FailNext(iamtest.MethodGetRole, 1, codes.Unavailable)
	if _, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update")); err != nil {
		t.Fatal(err)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	sums, hists := map[string]map[string]int64{}, map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				sums[m.Name] = map[string]int64{}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("grpc.method")
					sums[m.Name][v.AsString()] += p.Value
				}
			case metricdata.Histogram[int64]:
				hists[m.Name] = map[string]int64{}
				for _, p := range d.DataPoints {
					v, _ := p.Attributes.Value("grpc.method")
					hists[m.Name][v.AsString()] += p.Sum
				}
			}
		}
	}
	m := role.UpdateMethod
	if got := sums["iamretry.policy.update.writes"]; len(got) != 1 || got[m] != 2 {
		t.Errorf("writes %v, want {%s: 2}", got, m)
	}
	if got := sums["iamretry.policy.update.conflicts"]; len(got) != 1 || got[m] != 1 {
		t.Errorf("conflicts %v, want {%s: 1}", got, m)
	}
	if got := sums["iamretry.client.calls"]; got[m] != 1 || got["other"] != 0 {
		t.Errorf("calls %v, want %s: 1 and no other", got, m)
	}
	if got := hists["iamretry.client.call.retries"]; len(got) != 1 || got[m] != 2 {
		t.Errorf("retries %v, want {%s: 2}", got, m)
	}
}
