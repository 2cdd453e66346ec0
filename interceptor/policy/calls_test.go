package policy_test

// iamretry.client.calls counts each Update once, with its own outcome,
// however the Updater batched it (issue 20, item 6).

import (
	"context"
	"maps"
	"slices"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// meter returns a MeterProvider of its own and its reader.
func meter(t *testing.T) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return mp, reader
}

// TestCoalescedUpdatesCountedEach: three Updates coalesced into one write
// (behind a first one) are three successful calls, not one: four calls in
// all for two writes, none of them retried.
func TestCoalescedUpdatesCountedEach(t *testing.T) {
	mp, reader := meter(t)
	x := holdFirstReadWith(t, interceptor.WithMeterProvider(mp))
	ctx := context.Background()
	var chs []chan result
	for _, m := range []string{"user:a@example.com", "user:b@example.com", "user:c@example.com"} {
		chs = append(chs, x.queue(t, ctx, policy.AddBinding("roles/viewer", m)))
	}
	x.release()
	for _, ch := range append(chs, x.first) {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	m := policy.UpdateMethod
	if n := x.h.nsets.Load(); n != 2 {
		t.Fatalf("%d writes, want 2 (the first Update's, the batch's)", n)
	}
	if got := callsByStatus(t, reader); len(got) != 1 || got[m+" OK"] != 4 {
		t.Errorf("iamretry.client.calls %v; want {%s OK: 4}", got, m)
	}
	sums, hists := collect(t, reader)
	if got := hists["iamretry.client.call.retries"]; len(got) != 0 {
		t.Errorf("retries %v, want none", got)
	}
	if got := sums["iamretry.policy.update.writes"]; got[m] != 2 {
		t.Errorf("writes %v, want {%s: 2}", got, m)
	}
}

// TestSplitForRefusedRoleCountsEachUpdateOnce: three coalesced Updates, one
// granting a role the server refuses. The combined write is refused, the
// batch is split and each change runs alone: the refused Update is one
// call with INVALID_ARGUMENT, the two others (and the first Update) are
// successful calls; the refused combined write is no call of its own but
// a retry of each of the three.
func TestSplitForRefusedRoleCountsEachUpdateOnce(t *testing.T) {
	mp, reader := meter(t)
	x := holdFirstReadWith(t, interceptor.WithMeterProvider(mp))
	const bad = "roles/bogus"
	x.h.beforeSet = func(_ context.Context, _ int, req *iampb.SetIamPolicyRequest) error {
		if slices.ContainsFunc(req.GetPolicy().GetBindings(), func(b *iampb.Binding) bool { return b.GetRole() == bad }) {
			return status.Error(codes.InvalidArgument, "Role ("+bad+") does not exist in the resource's hierarchy.")
		}
		return nil
	}
	ctx := context.Background()
	a := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:a@example.com"))
	b := x.queue(t, ctx, policy.AddBinding(bad, "user:b@example.com"))
	c := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:c@example.com"))
	x.release()
	for _, ch := range []chan result{x.first, a, c} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if r := <-b; status.Code(r.err) != codes.InvalidArgument {
		t.Fatalf("the refused Update: %v; want INVALID_ARGUMENT", r.err)
	}
	if n := x.h.nsets.Load(); n != 5 {
		t.Fatalf("%d writes, want 5 (first, combined, a, b, c alone)", n)
	}
	m := policy.UpdateMethod
	if got := callsByStatus(t, reader); len(got) != 2 || got[m+" OK"] != 3 || got[m+" INVALID_ARGUMENT"] != 1 {
		t.Errorf("iamretry.client.calls %v; want {%s OK: 3, %s INVALID_ARGUMENT: 1}", got, m, m)
	}
	if n, sum := total(t, reader, "iamretry.client.call.retries"); n != 3 || sum != 3 {
		t.Errorf("retries: %d calls, %d retries; want 3 and 3 (a, b and c each retried once, alone)", n, sum)
	}
	if n, _ := total(t, reader, "iamretry.client.call.gave_up"); n != 0 {
		t.Errorf("gave_up %d, want none", n)
	}
}

// total returns, over every point of the instrument name, the sum of an
// int64 counter (n), or the count and sum of an int64 histogram.
func total(t *testing.T, reader *sdkmetric.ManualReader, name string) (n, sum int64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					n += p.Value
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					n += int64(p.Count)
					sum += p.Sum
				}
			}
		}
	}
	return n, sum
}

// oneRetry returns how many calls iamretry.client.call.retries recorded
// with exactly one retry (its first bucket, (0, 1]).
func oneRetry(t *testing.T, reader *sdkmetric.ManualReader) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Histogram[int64]); ok && m.Name == "iamretry.client.call.retries" {
				for _, p := range d.DataPoints {
					n += p.BucketCounts[0]
				}
			}
		}
	}
	return n
}

// TestCoalescedUpdatesOwnEndsCounted: in one coalesced batch, an Update
// whose Mutation fails and an Update whose caller gives up while queued
// are each one call with their own code, and the batch's successful
// Update one OK call: nothing gave up a retryable failure.
func TestCoalescedUpdatesOwnEndsCounted(t *testing.T) {
	mp, reader := meter(t)
	x := holdFirstReadWith(t, interceptor.WithMeterProvider(mp))
	ctx := context.Background()
	boom := status.Error(codes.FailedPrecondition, "boom")
	a := x.queue(t, ctx, policy.AddBinding("roles/viewer", "user:a@example.com"))
	b := x.queue(t, ctx, func(*iampb.Policy) (bool, error) { return false, boom })
	cctx, cancel := context.WithCancel(ctx)
	c := x.queue(t, cctx, policy.AddBinding("roles/viewer", "user:c@example.com"))
	cancel()
	if r := <-c; status.Code(r.err) != codes.Canceled {
		t.Fatalf("the caller that gave up: %v", r.err)
	}
	x.release()
	for _, ch := range []chan result{x.first, a} {
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	}
	if r := <-b; status.Code(r.err) != codes.FailedPrecondition {
		t.Fatalf("the failing Mutation: %v", r.err)
	}
	m := policy.UpdateMethod
	want := map[string]int64{m + " OK": 2, m + " FAILED_PRECONDITION": 1, m + " CANCELLED": 1}
	if got := callsByStatus(t, reader); !maps.Equal(got, want) {
		t.Errorf("iamretry.client.calls %v; want %v", got, want)
	}
	if n, _ := total(t, reader, "iamretry.client.call.gave_up"); n != 0 {
		t.Errorf("gave_up %d, want none", n)
	}
}
