package interceptor_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestWaitVisibleThroughTheAdminClient: a service account created moments
// ago answers NOT_FOUND, then PERMISSION_DENIED (with IAM's ErrorInfo), for
// 10 s; WaitVisible over the admin client (the rig's interceptor beneath it)
// returns it after 3 consecutive good reads, each read reaching the server
// once. With a PERMISSION_DENIED cap of 2, the third PERMISSION_DENIED is
// returned as the server sent it.
func TestWaitVisibleThroughTheAdminClient(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		opts  []interceptor.VisibleOption
		codes []codes.Code // of the GetServiceAccount calls, in order
		waits []time.Duration
	}{
		{"default", nil,
			[]codes.Code{codes.NotFound, codes.PermissionDenied, codes.PermissionDenied, codes.PermissionDenied, codes.OK, codes.OK, codes.OK},
			secs(1.5, 2.5, 4.5, 8.5, 1.5, 1.5)},
		{"PermissionDeniedRetries(2)", []interceptor.VisibleOption{interceptor.PermissionDeniedRetries(2)},
			[]codes.Code{codes.NotFound, codes.PermissionDenied, codes.PermissionDenied, codes.PermissionDenied},
			secs(1.5, 2.5, 4.5)},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, withFake(func(s *iamtest.Server) { s.SetPropagationDelay(10 * time.Second) }), withGRPC(), failedAttemptsOnly())
			g.fake.SetPropagationCodes(codes.NotFound, codes.PermissionDenied)
			sa := g.createAccount(t, "robot-new")
			got, err := interceptor.WaitVisible(context.Background(), g.retrier, "get robot-new",
				func(ctx context.Context) (*adminpb.ServiceAccount, error) {
					return g.admin.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: sa.GetName()})
				}, c.opts...)
			var seen []codes.Code
			for _, call := range g.callsOf(iamtest.MethodGetServiceAccount) {
				seen = append(seen, call.Code)
			}
			if !slices.Equal(seen, c.codes) {
				t.Fatalf("the server answered %v; want %v", seen, c.codes)
			}
			if w := g.clock.Sleeps(); !slices.Equal(w, c.waits) {
				t.Fatalf("waits %v; want %v", w, c.waits)
			}
			if c.codes[len(c.codes)-1] == codes.OK {
				if err != nil || got.GetEmail() != sa.GetEmail() {
					t.Fatalf("got %v, %v; want the account", got, err)
				}
				return
			}
			if status.Code(err) != codes.PermissionDenied || got != nil {
				t.Fatalf("got %v, %v; want the server's PERMISSION_DENIED", got, err)
			}
		})
	}
}
