package interceptor_test

import (
	"context"
	"strings"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamapi "cloud.google.com/go/iam/apiv1"
	iamv2 "cloud.google.com/go/iam/apiv2"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/api/option"

	"github.com/iamretry/iamretry/interceptor"
)

// TestNewRESTClientGivenGRPCConstructor (issue 33 item 2): the GAPIC gRPC
// constructors themselves, given to NewRESTClient, get an error naming the
// mistake (use NewClient), not the constructor's "WithHTTPClient is
// incompatible with gRPC dial options".
func TestNewRESTClientGivenGRPCConstructor(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	opts := g.fake.RESTClientOptions()
	for name, try := range map[string]func() error{
		"admin.NewIamClient": func() error {
			_, err := interceptor.NewRESTClient(ctx, g.retrier, admin.NewIamClient, opts...)
			return err
		},
		"iamv2.NewPoliciesClient": func() error {
			_, err := interceptor.NewRESTClient(ctx, g.retrier, iamv2.NewPoliciesClient, opts...)
			return err
		},
		"iamapi.NewIamPolicyClient": func() error {
			_, err := interceptor.NewRESTClient(ctx, g.retrier, iamapi.NewIamPolicyClient, opts...)
			return err
		},
		"resourcemanager.NewProjectsClient": func() error {
			_, err := interceptor.NewRESTClient(ctx, g.retrier, resourcemanager.NewProjectsClient, opts...)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := try()
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range []string{"NewRESTClient", "gRPC", "use NewClient"} {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not name %q", err, w)
				}
			}
		})
	}
	// A REST constructor's own error stays its own.
	_, err := interceptor.NewRESTClient(ctx, g.retrier, iamapi.NewIamPolicyRESTClient, append(opts, option.WithAPIKey("k"), option.WithCredentialsJSON([]byte("{}")))...)
	if err != nil && strings.Contains(err.Error(), "use NewClient") {
		t.Fatalf("a REST constructor's error named NewClient: %v", err)
	}
}
