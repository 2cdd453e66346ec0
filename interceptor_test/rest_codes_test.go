package interceptor_test

import (
	"context"
	"strings"
	"testing"
	"time"

	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	crmadapter "github.com/iamretry/iamretry/interceptor/policy/crmv3"
)

// TestRESTUpdaterReadsTheServersCodes pins the Updater's decisions over REST
// clients, which hand it a *googleapi.Error (discovery) or a gax APIError
// whose own status only guesses from the HTTP status (GAPIC REST: every 400
// INVALID_ARGUMENT): the code comes from the JSON body. A stale etag
// answered 400 FAILED_PRECONDITION is judged a conflict and rerun; a grant
// to an account not visible yet (400 INVALID_ARGUMENT "... does not exist")
// fails at once naming the opt-in, and lands with it; status.Code of what
// Update returns is the server's code.
func TestRESTUpdaterReadsTheServersCodes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		client func(g *rig) policy.Client
	}{
		{"discovery crmv3.Projects", func(g *rig) policy.Client { return crmadapter.Projects(g.crm) }},
		{"GAPIC ProjectsRESTClient", func(g *rig) policy.Client { return g.project }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g := newRig(t, withREST(nil))
			updater := func(opts ...interceptor.Option) *policy.Updater {
				r, err := interceptor.New(append([]interceptor.Option{
					interceptor.WithClock(g.clock), interceptor.WithRandom(halfRandom)}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				u, err := policy.NewUpdater(tc.client(g), r)
				if err != nil {
					t.Fatal(err)
				}
				return u
			}

			// A stale etag answered FAILED_PRECONDITION: a conflict, rerun.
			g.fake.SetStaleEtagCode(codes.FailedPrecondition)
			g.fake.ConcurrentWriteNext(iamtest.MethodProjectsSetIamPolicy, 1)
			g.fake.ResetCalls()
			if _, err := updater().Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", "user:a@example.com")); err != nil {
				t.Fatalf("stale etag answered FAILED_PRECONDITION: %v; want a rerun that lands", err)
			}
			if n := g.fake.CountCalls(iamtest.MethodProjectsSetIamPolicy); n != 2 {
				t.Fatalf("%d writes, want 2 (the refused one and the rerun)", n)
			}

			// A grant to an account created moments ago.
			g.fake.SetPropagationDelay(10 * time.Second)
			sa, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "fresh-robot"}).Do()
			if err != nil {
				t.Fatal(err)
			}
			member := "serviceAccount:" + sa.Email
			_, err = updater().Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", member))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "WithRetryNotFound") {
				t.Fatalf("without the opt-in: code %v, %v; want INVALID_ARGUMENT naming the opt-in", status.Code(err), err)
			}
			if _, err := updater(interceptor.WithRetryNotFound()).Update(ctx, "projects/p1", policy.AddBinding("roles/viewer", member)); err != nil {
				t.Fatalf("with the opt-in: %v; want the grant to land once the account is visible", err)
			}

			// A project the caller cannot see: PERMISSION_DENIED, as the code.
			g.fake.RegisterProject("known-project", 1)
			_, err = updater().Update(ctx, "projects/other-project", policy.AddBinding("roles/viewer", "user:a@example.com"))
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("unknown project: code %v (%v), want PERMISSION_DENIED", status.Code(err), err)
			}
		})
	}
}
