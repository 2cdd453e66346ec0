package policy_test

// A grant to a member IAM cannot see yet (issue 20, items 3 to 6): which
// refusals are taken for one, what the caller is told, who waits for it,
// and what metrics and observers say of it.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestDoesNotExistNamingNoGrantedMemberIsFinal: with the 404 opt-in, a
// write refused INVALID_ARGUMENT "... does not exist" is rerun only when
// the message names a member the change grants. A role missing from the
// resource's hierarchy, or an account the change does not grant, is the
// server's final word: one write, no wait, the server's message.
func TestDoesNotExistNamingNoGrantedMemberIsFinal(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"Role (roles/editor) does not exist in the resource's hierarchy.",
		"Service account other@p1.iam.gserviceaccount.com does not exist.",
		"Service account a@example.community does not exist.", // a prefix of no granted member
	} {
		t.Run(msg[:strings.Index(msg, " ")], func(t *testing.T) {
			e := newEnv(t)
			h := &hookClient{Client: e.client}
			h.beforeSet = func(context.Context, int, *iampb.SetIamPolicyRequest) error {
				return status.Error(codes.InvalidArgument, msg)
			}
			u, clk := updater(t, h, interceptor.WithRetryNotFound())
			_, err := u.Update(context.Background(), res,
				policy.AddBinding("roles/editor", "user:a@example.com"),
				policy.AddBinding("roles/viewer", "user:A@example.com"))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), msg) ||
				strings.Contains(err.Error(), "visible") {
				t.Fatalf("error %v; want the server's INVALID_ARGUMENT as it is", err)
			}
			if n := h.nsets.Load(); n != 1 || len(clk.Sleeps()) != 0 {
				t.Fatalf("%d writes, waits %v; want 1 write and no wait", n, clk.Sleeps())
			}
		})
	}
}

// TestDoesNotExistNamingAGrantedMemberWaits: the same refusal naming a
// member the change grants (in another case than the change wrote it: IAM
// compares email addresses case-insensitively) is waited for.
func TestDoesNotExistNamingAGrantedMemberWaits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := &hookClient{Client: e.client}
	h.beforeSet = func(_ context.Context, n int, _ *iampb.SetIamPolicyRequest) error {
		if n <= 2 {
			return status.Error(codes.InvalidArgument, "Group Team@Example.com does not exist.")
		}
		return nil
	}
	u, clk := updater(t, h, interceptor.WithRetryNotFound())
	p, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", "group:team@example.com"))
	if err != nil || members(p, "roles/viewer")["group:team@example.com"] != 1 {
		t.Fatalf("%v, %v", p, err)
	}
	if n := h.nsets.Load(); n != 3 || len(clk.Sleeps()) != 2 {
		t.Fatalf("%d writes, waits %v; want 3 writes and 2 waits", n, clk.Sleeps())
	}
}

// TestMemberInvisibleForTheWholeDeadline: when the Updater waited (the
// opt-in given, on the Retrier or on the context) and the member stayed
// invisible, the error says so, and does not tell the caller to pass the
// option it passed.
func TestMemberInvisibleForTheWholeDeadline(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"WithRetryNotFound", "RetryNotFoundContext"} {
		t.Run(how, func(t *testing.T) {
			_, client, clk, member := newAccountEnv(t) // visible after 10 s
			opts := []interceptor.Option{interceptor.WithClock(clk), interceptor.WithDeadline(5 * time.Second)}
			ctx := context.Background()
			if how == "WithRetryNotFound" {
				opts = append(opts, interceptor.WithRetryNotFound())
			} else {
				ctx = interceptor.RetryNotFoundContext(ctx)
			}
			u, err := newUpdater(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			_, err = u.Update(ctx, res, policy.AddBinding("roles/viewer", member))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "does not exist") ||
				!strings.Contains(err.Error(), "stayed invisible") || strings.Contains(err.Error(), "WithRetryNotFound") ||
				strings.Contains(err.Error(), "RetryNotFoundContext") {
				t.Fatalf("error %v; want INVALID_ARGUMENT saying the member stayed invisible, naming no option", err)
			}
			if len(clk.Sleeps()) == 0 {
				t.Fatal("no wait: the Updater did not wait for the member")
			}
		})
	}
}

// TestWaitForNewMemberHoldsNoOneElse: while an Update waits for a member
// IAM cannot see yet, a grant to a visible member of the same resource
// lands within one read-modify-write of its own: one read, one write,
// while the first is still waiting.
func TestWaitForNewMemberHoldsNoOneElse(t *testing.T) {
	t.Parallel()
	_, client, clk, member := newAccountEnv(t) // visible after 10 s
	h := &hookClient{Client: client}
	u, err := newUpdater(h, interceptor.WithClock(clk), interceptor.WithRetryNotFound())
	if err != nil {
		t.Fatal(err)
	}
	parked, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	unpark := sync.OnceFunc(func() { close(resume) })
	t.Cleanup(unpark)
	clk.OnSleep(func(time.Duration) { // the first wait after a refusal stays until resumed
		once.Do(func() { close(parked); <-resume })
	})
	waiting := make(chan result, 1)
	go func() {
		p, err := u.Update(context.Background(), res, policy.AddBinding("roles/viewer", member))
		waiting <- result{p, err}
	}()
	select {
	case <-parked:
	case <-time.After(5 * time.Second):
		t.Fatal("the new member's grant never waited")
	}
	gets, sets := h.ngets.Load(), h.nsets.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:b@example.com"))
	if err != nil || members(p, "roles/viewer")["user:b@example.com"] != 1 {
		t.Fatalf("the visible member's grant, made while the other waits: %v, %v", p, err)
	}
	if g, s := h.ngets.Load()-gets, h.nsets.Load()-sets; g != 1 || s != 1 {
		t.Fatalf("the visible member's grant took %d reads and %d writes; want 1 and 1", g, s)
	}
	unpark()
	r := <-waiting
	if r.err != nil || members(r.p, "roles/viewer")[member] != 1 || members(r.p, "roles/viewer")["user:b@example.com"] != 1 {
		t.Fatalf("the new member's grant: %v, %v", r.p, r.err)
	}
}

// callsByStatus returns iamretry.client.calls by grpc.method and
// grpc.status ("OK" when the point has none).
func callsByStatus(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			d, ok := m.Data.(metricdata.Sum[int64])
			if m.Name != "iamretry.client.calls" || !ok {
				continue
			}
			for _, p := range d.DataPoints {
				method, _ := p.Attributes.Value("grpc.method")
				code := "OK"
				if v, ok := p.Attributes.Value("grpc.status"); ok {
					code = v.AsString()
				}
				got[method.AsString()+" "+code] += p.Value
			}
		}
	}
	return got
}

// TestSplitForNewMemberCountsEachUpdateOnce: three Updates, the last two
// coalesced into one batch whose write is refused because one grants a
// role to an account IAM cannot see yet. All three succeed: the metrics
// count three successful calls, and observers hear of no call that failed
// (the refused write is a retry of the Update that waits for the account).
func TestSplitForNewMemberCountsEachUpdateOnce(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	var mu sync.Mutex
	var seen []interceptor.Attempt
	x := newNewAccountBatch(t, interceptor.WithRetryNotFound(), interceptor.WithMeterProvider(mp),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			mu.Lock()
			seen = append(seen, a)
			mu.Unlock()
		}))
	newcomer := x.queue(t, policy.AddBinding("roles/viewer", x.member))
	visible := x.queue(t, policy.AddBinding("roles/viewer", "user:b@example.com"))
	x.clk.Go(context.Background(), 2, func(_ context.Context, i int) {
		ch := newcomer
		if i == 1 {
			x.release()
			if r := <-x.first; r.err != nil {
				t.Error(r.err)
			}
			ch = visible
		}
		if r := <-ch; r.err != nil {
			t.Error(r.err)
		}
	})
	if got := callsByStatus(t, reader); len(got) != 1 || got[policy.UpdateMethod+" OK"] != 3 {
		t.Errorf("iamretry.client.calls %v; want {%s OK: 3}", got, policy.UpdateMethod)
	}
	// Both batched Updates were retried: the newcomer until its member was
	// visible, the other once, alone, after the refused write it sat
	// through (with 0 s waited).
	if n, _ := total(t, reader, "iamretry.client.call.retries"); n != 2 || oneRetry(t, reader) != 1 {
		t.Errorf("retries: %d calls, %d of them with one retry; want 2 calls (the batched Updates), one with one retry", n, oneRetry(t, reader))
	}
	mu.Lock()
	defer mu.Unlock()
	retries, done := 0, 0
	for _, a := range seen {
		switch a.Reason {
		case interceptor.Retry:
			retries++
			if status.Code(a.Err) != codes.InvalidArgument || a.Class.String() != "Propagation" {
				t.Errorf("attempt %d: %v, class %v; want INVALID_ARGUMENT, Propagation", a.N, a.Err, a.Class)
			}
		case interceptor.Succeeded:
			done++
		default:
			t.Errorf("observers heard of a call that failed: %+v", a)
		}
	}
	if retries == 0 || done != 1 {
		t.Errorf("observed %d retries and %d final reports; want retries and one Succeeded", retries, done)
	}
}
