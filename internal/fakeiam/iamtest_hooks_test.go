package fakeiam

import (
	"context"
	"maps"
	"slices"
	"testing"

	"google.golang.org/grpc"
)

// TestNewWithInterceptorServesWhatNewServes checks that the hooked server
// registers the same services and methods as New.
func TestNewWithInterceptorServesWhatNewServes(t *testing.T) {
	outer := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	}
	plain, hooked := New(), NewWithInterceptor(outer)
	defer plain.Close()
	defer hooked.Close()
	want, got := plain.grpc.GetServiceInfo(), hooked.grpc.GetServiceInfo()
	if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
		t.Fatalf("services: got %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	for name, w := range want {
		g := got[name]
		if len(g.Methods) != len(w.Methods) {
			t.Errorf("%s: %d methods, want %d", name, len(g.Methods), len(w.Methods))
		}
	}
}
