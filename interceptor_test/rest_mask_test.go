package interceptor_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// TestRESTLostSetIamPolicyWithBindingsMaskIsNotReplayed is the REST face of
// TestLostSetIamPolicyWithBindingsMaskIsNotReplayed (issue 10 item 1),
// through the RoundTripper, the discovery client and a GAPIC REST client:
// writer A reads projects/p1 and writes it back with its etag and an
// updateMask; the write commits and its answer is lost (503); writer B then
// grants a role. With updateMask "bindings" IAM (and the fake) need not
// check the etag, so a replay would succeed and wipe B's grant: it is not
// replayed and A gets the 503. With "bindings,etag", or no mask, the etag
// is checked: the replay is made and refused with 409 ABORTED. A Retrier
// told that everything is safe shows what the rule prevents.
func TestRESTLostSetIamPolicyWithBindingsMaskIsNotReplayed(t *testing.T) {
	t.Parallel()
	const resource = "projects/p1"
	type writeFunc func(ctx context.Context, g *rig, etag, mask string) error
	clients := []struct {
		name  string
		write writeFunc
	}{
		{"cloudresourcemanager/v3", func(ctx context.Context, g *rig, etag, mask string) error {
			_, err := g.crm.Projects.SetIamPolicy(resource, &crm.SetIamPolicyRequest{UpdateMask: mask, Policy: &crm.Policy{
				Etag: etag, Bindings: []*crm.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}},
			}}).Context(ctx).Do()
			return err
		}},
		{"GAPIC Projects REST", func(ctx context.Context, g *rig, etag, mask string) error {
			raw, err := base64.StdEncoding.DecodeString(etag) // the discovery client's etag is base64
			if err != nil {
				return err
			}
			req := &iampb.SetIamPolicyRequest{Resource: resource, Policy: &iampb.Policy{
				Etag: raw, Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}},
			}}
			if mask != "" {
				req.UpdateMask = &fieldmaskpb.FieldMask{Paths: strings.Split(mask, ",")}
			}
			_, err = g.project.SetIamPolicy(ctx, req)
			return err
		}},
	}
	cases := []struct {
		name          string
		mask          string
		opts          []interceptor.Option
		wantHTTP      int
		wantWrites    int // A's setIamPolicy attempts
		wantBSurvives bool
	}{
		{"mask bindings: not replayed", "bindings", nil, http.StatusServiceUnavailable, 1, true},
		{"mask bindings,etag: replayed, refused", "bindings,etag", nil, http.StatusConflict, 2, true},
		{"no mask: replayed, refused", "", nil, http.StatusConflict, 2, true},
		{"mask bindings, everything declared safe: the grant is lost", "bindings",
			[]interceptor.Option{interceptor.WithSafeToRetry(func(string, any) bool { return true })}, http.StatusOK, 2, false},
	}
	for _, cl := range clients {
		for _, tc := range cases {
			t.Run(cl.name+"/"+tc.name, func(t *testing.T) {
				ctx := context.Background()
				var armed atomic.Bool
				var bErr error
				var plain *crm.Service // writer B: no RoundTripper
				g := newRig(t, withREST(func(h http.Handler) http.Handler {
					return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						h.ServeHTTP(w, r)
						// Right after A's first write committed (and its
						// answer was lost), B grants, before A hears of it.
						if strings.HasSuffix(r.URL.Path, ":setIamPolicy") && armed.CompareAndSwap(true, false) {
							bErr = grantAsBOverREST(ctx, plain, resource)
						}
					})
				}), withRetrier(tc.opts...))
				var err error
				if plain, err = crm.NewService(ctx, option.WithEndpoint(g.restSrv.URL+"/"), option.WithHTTPClient(g.restSrv.Client())); err != nil {
					t.Fatal(err)
				}
				p, err := g.crm.Projects.GetIamPolicy(resource, &crm.GetIamPolicyRequest{}).Context(ctx).Do()
				if err != nil {
					t.Fatal(err)
				}
				g.fake.LoseNextAnswers(iamtest.MethodProjectsSetIamPolicy, 1)
				g.reset()
				armed.Store(true)
				err = cl.write(ctx, g, p.Etag, tc.mask)
				if bErr != nil {
					t.Fatalf("writer B: %v", bErr)
				}
				var ge *googleapi.Error
				switch {
				case tc.wantHTTP == http.StatusOK && err != nil:
					t.Errorf("A's setIamPolicy: %v, want success", err)
				case tc.wantHTTP != http.StatusOK && (!errors.As(err, &ge) || ge.Code != tc.wantHTTP):
					t.Errorf("A's setIamPolicy: %v, want HTTP %d", err, tc.wantHTTP)
				}
				if n := g.fake.CountCalls(iamtest.MethodProjectsSetIamPolicy) - 1; n != tc.wantWrites {
					t.Errorf("A's setIamPolicy made %d attempts, want %d (calls %s)", n, tc.wantWrites, g.attemptHeaders(iamtest.MethodProjectsSetIamPolicy))
				}
				final, err := plain.Projects.GetIamPolicy(resource, &crm.GetIamPolicyRequest{}).Context(ctx).Do()
				if err != nil {
					t.Fatal(err)
				}
				if got := crmGrants(final, "roles/editor", "user:b@example.com"); got != tc.wantBSurvives {
					t.Errorf("B's grant in the final policy: %v, want %v", got, tc.wantBSurvives)
				}
				if !crmGrants(final, "roles/viewer", "user:a@example.com") {
					t.Error("A's committed grant is missing")
				}
			})
		}
	}
}

// grantAsBOverREST is writer B's read-modify-write over REST, with no
// retries: roles/editor to user:b@example.com.
func grantAsBOverREST(ctx context.Context, s *crm.Service, resource string) error {
	p, err := s.Projects.GetIamPolicy(resource, &crm.GetIamPolicyRequest{}).Context(ctx).Do()
	if err != nil {
		return err
	}
	p.Bindings = append(p.Bindings, &crm.Binding{Role: "roles/editor", Members: []string{"user:b@example.com"}})
	_, err = s.Projects.SetIamPolicy(resource, &crm.SetIamPolicyRequest{Policy: p}).Context(ctx).Do()
	return err
}

func crmGrants(p *crm.Policy, role, member string) bool {
	for _, b := range p.Bindings {
		if b.Role == role && slices.Contains(b.Members, member) {
			return true
		}
	}
	return false
}

// TestRESTSetIamPolicyMaskDecidesReplayOn503: a setIamPolicy with an etag
// that fails 503 before the server acted is sent again only when its
// updateMask is empty or names etag, read from the discovery client's JSON
// body by the RoundTripper.
func TestRESTSetIamPolicyMaskDecidesReplayOn503(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	ctx := context.Background()
	for _, tc := range []struct {
		mask  string
		calls int
	}{{"bindings", 1}, {"bindings,etag", 2}, {"etag,bindings", 2}, {"", 2}} {
		p, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Context(ctx).Do()
		if err != nil {
			t.Fatal(err)
		}
		g.reset()
		g.fake.FailNext(iamtest.MethodProjectsSetIamPolicy, 1, grpccodes.Unavailable)
		_, err = g.crm.Projects.SetIamPolicy("projects/p1", &crm.SetIamPolicyRequest{UpdateMask: tc.mask, Policy: &crm.Policy{
			Etag: p.Etag, Bindings: []*crm.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}},
		}}).Context(ctx).Do()
		if n := g.fake.CountCalls(iamtest.MethodProjectsSetIamPolicy); n != tc.calls {
			t.Errorf("updateMask %q: %d calls (err %v), want %d", tc.mask, n, err, tc.calls)
		}
		if wantErr := tc.calls == 1; (err != nil) != wantErr {
			t.Errorf("updateMask %q: err %v, want an error: %v", tc.mask, err, wantErr)
		}
	}
}
