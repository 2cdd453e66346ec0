package interceptor_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestLostSetIamPolicyWithBindingsMaskIsNotReplayed: writer A reads a policy
// and writes it back with its etag and update_mask ["bindings"]; the write
// commits but its answer is lost. Writer B then grants a role. With that
// mask IAM (and the fake) need not check the etag, so a replay of A's write
// would succeed and wipe B's grant: it is not replayed, A gets the
// UNAVAILABLE, and B's grant survives. With a mask that names etag the
// replay is made and fails ABORTED (B's grant survives too). A Retrier told
// that everything is safe shows what the rule prevents.
func TestLostSetIamPolicyWithBindingsMaskIsNotReplayed(t *testing.T) {
	t.Parallel()
	const resource = "projects/blind-replay"
	for _, tc := range []struct {
		name          string
		mask          []string
		opts          []interceptor.Option
		wantCode      codes.Code
		wantWrites    int // A's SetIamPolicy attempts
		wantBSurvives bool
	}{
		{"mask bindings: not replayed", []string{"bindings"}, nil, codes.Unavailable, 1, true},
		{"mask bindings,etag: replayed, refused", []string{"bindings", "etag"}, nil, codes.Aborted, 2, true},
		{"mask bindings, everything declared safe: the grant is lost", []string{"bindings"},
			[]interceptor.Option{interceptor.WithSafeToRetry(func(string, any) bool { return true })}, codes.OK, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := iamtest.NewServer(t)
			ctx := context.Background()
			plain, err := fake.Dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { plain.Close() })
			b := iampb.NewIAMPolicyClient(plain)

			// Writer B's grant, made once, right after A's first write
			// attempt came back failed (its answer lost).
			var once sync.Once
			var bErr error
			interleave := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
				err := invoker(ctx, method, req, reply, cc, opts...)
				if err != nil && method == string(iamtest.MethodSetIamPolicy) {
					once.Do(func() { bErr = grantAsB(ctx, b, resource) })
				}
				return err
			}
			r, _ := newSkipRetrier(t, tc.opts...)
			var count attemptCounter
			conn, err := fake.Dial(ctx, grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor(), count.intercept, interleave))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { conn.Close() })
			a := iampb.NewIAMPolicyClient(conn)

			p, err := a.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
			if err != nil {
				t.Fatal(err)
			}
			p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/viewer", Members: []string{"user:a@example.com"}})
			fake.LoseNextAnswers(iamtest.MethodSetIamPolicy, 1)
			count.n.Store(0)
			_, err = a.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p, UpdateMask: &fieldmaskpb.FieldMask{Paths: tc.mask}})
			if bErr != nil {
				t.Fatalf("writer B: %v", bErr)
			}
			if status.Code(err) != tc.wantCode {
				t.Errorf("A's SetIamPolicy: %v, want %v", err, tc.wantCode)
			}
			if n := int(count.n.Load()); n != tc.wantWrites {
				t.Errorf("A's SetIamPolicy made %d attempts, want %d", n, tc.wantWrites)
			}
			final, err := b.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
			if err != nil {
				t.Fatal(err)
			}
			if got := policyGrants(final, "roles/editor", "user:b@example.com"); got != tc.wantBSurvives {
				t.Errorf("B's grant in the final policy: %v, want %v (policy %v)", got, tc.wantBSurvives, final.GetBindings())
			}
			if !policyGrants(final, "roles/viewer", "user:a@example.com") {
				t.Errorf("A's committed grant is missing: %v", final.GetBindings())
			}
		})
	}
}

// grantAsB is writer B's read-modify-write: roles/editor to user:b@example.com.
func grantAsB(ctx context.Context, c iampb.IAMPolicyClient, resource string) error {
	p, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: resource})
	if err != nil {
		return err
	}
	p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/editor", Members: []string{"user:b@example.com"}})
	_, err = c.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p})
	return err
}

func policyGrants(p *iampb.Policy, role, member string) bool {
	for _, b := range p.GetBindings() {
		if b.GetRole() == role && slices.Contains(b.GetMembers(), member) {
			return true
		}
	}
	return false
}
