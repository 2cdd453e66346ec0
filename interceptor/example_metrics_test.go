package interceptor_test

import (
	"context"
	"fmt"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/interceptor"
)

// A process that calls the IAM methods of many services (here 150 made-up
// ones) records at most MaxMixinMethods grpc.method values for them; the
// calls beyond are counted under "other". The methods of the IAM services
// always keep their own value.
func ExampleMaxMixinMethods() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	r, err := interceptor.New(interceptor.WithMeterProvider(mp))
	if err != nil {
		panic(err)
	}
	ok := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return nil }
	call := r.UnaryClientInterceptor()
	for i := range 150 {
		_ = call(context.Background(), fmt.Sprintf("/tenant%d.x.v1.Svc/GetIamPolicy", i), nil, nil, nil, ok)
	}
	_ = call(context.Background(), "/google.iam.v1.IAMPolicy/GetIamPolicy", nil, nil, nil, ok)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		panic(err)
	}
	values, other := 0, int64(0)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "iamretry.client.calls" {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				v, _ := p.Attributes.Value("grpc.method")
				if v.AsString() == "other" {
					other = p.Value
				}
				values++
			}
		}
	}
	fmt.Printf("%d grpc.method values; %d calls counted as other\n", values, other)
	// Output:
	// 102 grpc.method values; 50 calls counted as other
}
