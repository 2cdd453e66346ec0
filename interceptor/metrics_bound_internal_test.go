package interceptor

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.opentelemetry.io/otel/metric/noop"

	"github.com/iamretry/iamretry/internal/iammethods"
)

// Issue 20, item 2: every per-method map stays bounded. The metrics' map
// (and the list the call counter's callback walks) gets at most one entry
// per table method, MaxMixinMethods mixin methods, policy.UpdateMethod and
// "other", whatever names it sees; its cache has a fixed number of slots.
func TestMetricsPerMethodMapsStayBounded(t *testing.T) {
	t.Parallel()
	m, err := makeMetrics(noop.NewMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		method := fmt.Sprintf("/tenant%d.x.v1.Svc/%s", i, [...]string{"GetIamPolicy", "SetIamPolicy", "TestIamPermissions"}[i%3])
		m.succeeded(method)
		m.ended(context.Background(), method, errors.New("x"), 1, 0, DeadlineReached)
	}
	for method := range safeMethods {
		m.succeeded(method)
	}
	m.write(context.Background(), iammethods.PolicyUpdate)
	bound := len(safeMethods) + MaxMixinMethods + 2
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.byName) > bound || len(m.all) > bound {
		t.Fatalf("%d entries by name, %d listed; bound %d", len(m.byName), len(m.all), bound)
	}
	if m.mixins != MaxMixinMethods {
		t.Fatalf("%d mixin values, want %d", m.mixins, MaxMixinMethods)
	}
}
