package interceptor_test

// End-to-end tests of the RoundTripper: the real discovery clients
// (google.golang.org/api/iam/v1, cloudresourcemanager/v3) and GAPIC REST
// clients against the fake's REST face over loopback HTTP, on the virtual
// clock.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	crmadapter "github.com/iamretry/iamretry/interceptor/policy/crmv3"
	iamadapter "github.com/iamretry/iamretry/interceptor/policy/iamv1"
)

// attemptHeaders returns the x-retry-attempt headers of the logged calls of
// method, joined by commas.
func (g *rig) attemptHeaders(method iamtest.Method) string {
	var out []string
	for _, c := range g.fake.Calls() {
		if c.Method == method {
			out = append(out, c.Attempt)
		}
	}
	return strings.Join(out, ",")
}

// restClientCase is one client's policy read.
type restClientCase struct {
	name   string
	method iamtest.Method // as the fake logs it
	get    func(ctx context.Context, g *rig) error
}

func restClientCases() []restClientCase {
	return []restClientCase{
		{"iam/v1", iamtest.MethodAdminGetIamPolicy, func(ctx context.Context, g *rig) error {
			_, err := g.iam.Projects.ServiceAccounts.GetIamPolicy(g.restSA).Context(ctx).Do()
			return err
		}},
		{"cloudresourcemanager/v3", iamtest.MethodProjectsGetIamPolicy, func(ctx context.Context, g *rig) error {
			_, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Context(ctx).Do()
			return err
		}},
		{"GAPIC IamPolicy REST", iamtest.MethodAdminGetIamPolicy, func(ctx context.Context, g *rig) error {
			_, err := g.restPolicy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: g.restSA})
			return err
		}},
		{"GAPIC Projects REST", iamtest.MethodProjectsGetIamPolicy, func(ctx context.Context, g *rig) error {
			_, err := g.project.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
			return err
		}},
	}
}

func TestRESTDocumentedWaitsOn503x3(t *testing.T) {
	t.Parallel()
	for _, c := range restClientCases() {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, withREST(nil))
			g.fake.FailNext(c.method, 3, codes.Unavailable)
			if err := c.get(context.Background(), g); err != nil {
				t.Fatal(err)
			}
			want := []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond, 4500 * time.Millisecond}
			if got := g.clock.Sleeps(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("waits %v, want %v", got, want)
			}
			if got := g.attemptHeaders(c.method); got != ",1,2,3" {
				t.Fatalf("attempt headers %q, want \",1,2,3\"", got)
			}
		})
	}
}

func TestRESTNotFoundOnlyWithOptIn(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	get := func(ctx context.Context) error {
		_, err := g.iam.Projects.ServiceAccounts.Get(g.restSA).Context(ctx).Do()
		return err
	}
	g.fake.FailNext(iamtest.MethodGetServiceAccount, 2, codes.NotFound)
	var ge *googleapi.Error
	if err := get(context.Background()); !errors.As(err, &ge) || ge.Code != 404 {
		t.Fatalf("without the opt-in: %v, want the 404", err)
	}
	if n := g.fake.CountCalls(iamtest.MethodGetServiceAccount); n != 1 {
		t.Fatalf("without the opt-in: %d calls, want 1", n)
	}
	g.reset()
	if err := get(interceptor.RetryNotFoundContext(context.Background())); err != nil {
		t.Fatalf("with the opt-in: %v", err)
	}
	if n := g.fake.CountCalls(iamtest.MethodGetServiceAccount); n != 2 {
		t.Fatalf("with the opt-in: %d calls, want 2", n)
	}
}

func TestRESTCreateKeyNeverRetriedOn503RetriedOnOptedIn404(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	create := func(ctx context.Context) error {
		_, err := g.iam.Projects.ServiceAccounts.Keys.Create(g.restSA, &iamv1.CreateServiceAccountKeyRequest{}).Context(ctx).Do()
		return err
	}
	g.fake.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.Unavailable)
	if err := create(context.Background()); err == nil {
		t.Fatal("503 on create key: no error")
	}
	if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccountKey); n != 1 {
		t.Fatalf("503 on create key: %d calls, want 1", n)
	}
	if a := g.attempts; len(a) != 1 || a[0].Reason != interceptor.Unsafe || a[0].Method != "/google.iam.admin.v1.IAM/CreateServiceAccountKey" {
		t.Fatalf("attempts %+v, want one Unsafe on CreateServiceAccountKey", a)
	}
	g.reset()
	g.fake.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.NotFound)
	if err := create(interceptor.RetryNotFoundContext(context.Background())); err != nil {
		t.Fatalf("opted-in 404 on create key: %v", err)
	}
	if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccountKey); n != 2 {
		t.Fatalf("opted-in 404 on create key: %d calls, want 2", n)
	}
}

func TestRESTSetIamPolicyReplayedOnlyWithEtag(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	ctx := context.Background()
	p, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	grant := &crm.Binding{Role: "roles/viewer", Members: []string{"user:a@example.com"}}
	for _, tc := range []struct {
		name  string
		etag  string
		calls int
	}{{"with etag", p.Etag, 2}, {"without etag", "", 1}} {
		g.reset()
		g.fake.FailNext(iamtest.MethodProjectsSetIamPolicy, 1, codes.Unavailable)
		_, err := g.crm.Projects.SetIamPolicy("projects/p1", &crm.SetIamPolicyRequest{
			Policy: &crm.Policy{Etag: tc.etag, Bindings: []*crm.Binding{grant}},
		}).Context(ctx).Do()
		if n := g.fake.CountCalls(iamtest.MethodProjectsSetIamPolicy); n != tc.calls {
			t.Errorf("%s: %d calls (err %v), want %d", tc.name, n, err, tc.calls)
		}
	}
}

func TestRESTLostSetAnswerKeepsOtherWritersGrant(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	ctx := context.Background()
	p, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	g.fake.LoseNextAnswers(iamtest.MethodProjectsSetIamPolicy, 1)
	// During the wait after the lost answer, another writer grants.
	var once sync.Once
	g.clock.OnSleep(func(time.Duration) {
		once.Do(func() {
			cur, err := g.restPolicy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
			if err != nil {
				t.Error(err)
				return
			}
			cur.Bindings = append(cur.Bindings, &iampb.Binding{Role: "roles/browser", Members: []string{"user:other@example.com"}})
			if _, err := g.project.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p1", Policy: cur}); err != nil {
				t.Error(err)
			}
		})
	})
	_, err = g.crm.Projects.SetIamPolicy("projects/p1", &crm.SetIamPolicyRequest{Policy: &crm.Policy{
		Etag: p.Etag, Bindings: []*crm.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}},
	}}).Context(ctx).Do()
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Code != 409 {
		t.Fatalf("the replay: %v, want 409 ABORTED (the etag moved)", err)
	}
	got, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do()
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, b := range got.Bindings {
		roles = append(roles, b.Role+"="+strings.Join(b.Members, "+"))
	}
	if s := strings.Join(roles, " "); !strings.Contains(s, "roles/browser=user:other@example.com") || !strings.Contains(s, "roles/viewer=user:a@example.com") {
		t.Fatalf("policy %s: want both the committed write and the other writer's grant", s)
	}
}

func TestRESTRetryAfterAndRetryInfoHonoured(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	first := true
	g := newRig(t, withREST(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ":getIamPolicy") {
				mu.Lock()
				f := first
				first = false
				mu.Unlock()
				if f {
					w.Header().Set("Retry-After", "9")
				}
			}
			h.ServeHTTP(w, r)
		})
	}))
	g.fake.FailNext(iamtest.MethodProjectsGetIamPolicy, 2, codes.Unavailable)
	g.fake.SetRetryInfo(6 * time.Second)
	if _, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Do(); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(g.clock.Sleeps()); got != "[9s 6s]" {
		t.Fatalf("waits %s, want [9s 6s] (Retry-After 9, then RetryInfo 6 over the backoff's 2.5)", got)
	}
}

func TestRESTBodyReplayWithGetBody(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	g.fake.FailNext(iamtest.MethodTestIamPermissions, 2, codes.Internal)
	// A GAPIC REST client's body is a bytes.Reader: GetBody is set.
	resp, err := g.restPolicy.TestIamPermissions(context.Background(), &iampb.TestIamPermissionsRequest{
		Resource: "buckets/b1", Permissions: []string{"storage.objects.get"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetPermissions(); len(got) != 1 || got[0] != "storage.objects.get" {
		t.Fatalf("permissions %v: the replayed body was not the original", got)
	}
	if n := g.fake.CountCalls(iamtest.MethodTestIamPermissions); n != 3 {
		t.Fatalf("%d calls, want 3", n)
	}
}

// TestRESTUpdaterOverDiscoveryAdapters: N writers through one Updater per
// adapter, under 20% injected failures and 20% lost answers: every change
// lands exactly once.
func TestRESTUpdaterOverDiscoveryAdapters(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		client   func(g *rig) policy.Client
		resource func(g *rig) string
	}{
		{"crmv3.Projects", func(g *rig) policy.Client { return crmadapter.Projects(g.crm) }, func(*rig) string { return "projects/p1" }},
		{"crmv3.Folders", func(g *rig) policy.Client { return crmadapter.Folders(g.crm) }, func(*rig) string { return "folders/123" }},
		{"crmv3.Organizations", func(g *rig) policy.Client { return crmadapter.Organizations(g.crm) }, func(*rig) string { return "organizations/456" }},
		{"iamv1.ServiceAccounts", func(g *rig) policy.Client { return iamadapter.ServiceAccounts(g.iam) }, func(g *rig) string { return g.restSA }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t, withREST(nil))
			g.fake.SetFailureRate(iamtest.AnyMethod, 0.2, codes.Unavailable, codes.Internal)
			g.fake.SetLostAnswerRate(iamtest.AnyMethod, 0.2)
			// One Updater per writer: they do not coalesce, they contend
			// (conflicts on the etag) besides the faults.
			const writers = 8
			resource := tc.resource(g)
			var wg sync.WaitGroup
			for i := range writers {
				r, err := interceptor.New(interceptor.WithClock(g.clock), interceptor.WithRandom(halfRandom),
					interceptor.WithDeadline(time.Hour), interceptor.WithoutRetryBudget())
				if err != nil {
					t.Fatal(err)
				}
				u, err := policy.NewUpdater(tc.client(g), r)
				if err != nil {
					t.Fatal(err)
				}
				wg.Go(func() {
					if _, err := u.Update(context.Background(), resource, policy.AddBinding("roles/viewer", fmt.Sprintf("user:w%d@example.com", i))); err != nil {
						t.Errorf("writer %d: %v", i, err)
					}
				})
			}
			wg.Wait()
			injected := 0
			for _, c := range g.fake.Calls() {
				if c.Injected {
					injected++
				}
			}
			if injected == 0 {
				t.Fatal("no fault was injected")
			}
			t.Logf("%d calls, %d injected failures or lost answers", len(g.fake.Calls()), injected)
			g.fake.ResetFaults()
			p, err := tc.client(g).GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: resource})
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, b := range p.GetBindings() {
				for _, m := range b.GetMembers() {
					seen[b.GetRole()+" "+m]++
				}
			}
			for i := range writers {
				if k := fmt.Sprintf("roles/viewer user:w%d@example.com", i); seen[k] != 1 {
					t.Errorf("%s appears %d times, want once", k, seen[k])
				}
			}
		})
	}
}
