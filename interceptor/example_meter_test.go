package interceptor_test

import (
	"context"
	"fmt"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// WithMeterProvider records the Retrier's instruments; here read back
// through the SDK's ManualReader (in a program, a PeriodicReader and an
// exporter). Two UNAVAILABLE answers before a success: one call, two
// retries, by the method's name without its leading slash.
func ExampleWithMeterProvider() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	r, err := interceptor.New(
		interceptor.WithMeterProvider(mp),
		interceptor.WithClock(iamtest.NewVirtualClock(time.Now())),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	client, err := interceptor.NewClient(ctx, r, admin.NewIamClient, srv.ClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	sa := srv.SeedServiceAccount("p1", "robot-1")
	srv.FailNext(iamtest.MethodGetServiceAccount, 2, grpccodes.Unavailable)
	if _, err := client.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()}); err != nil {
		fmt.Println(err)
		return
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					method, _ := p.Attributes.Value("grpc.method")
					fmt.Println(m.Name, method.AsString(), p.Value)
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					method, _ := p.Attributes.Value("grpc.method")
					fmt.Println(m.Name, method.AsString(), "count", p.Count, "sum", p.Sum)
				}
			}
		}
	}
	// Unordered output:
	// iamretry.client.calls google.iam.admin.v1.IAM/GetServiceAccount 1
	// iamretry.client.call.retries google.iam.admin.v1.IAM/GetServiceAccount count 1 sum 2
}
