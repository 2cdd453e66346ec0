package deny_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/type/expr"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// goodPrincipals are one of each form IAM documents for deny rules.
var goodPrincipals = []string{
	"principalSet://goog/public:all",
	"principal://goog/subject/alice@example.com",
	"principalSet://goog/group/admins@example.com",
	"principal://iam.googleapis.com/projects/-/serviceAccounts/robot@my-project.iam.gserviceaccount.com",
	"principalSet://goog/cloudIdentityCustomerId/C01Abc35",
	"principal://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/subject/raha@altostrat.com",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/group/admins",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/attribute.department/sales",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/*",
	"principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/subject/system:serviceaccount:ns:ksa",
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/group/ops",
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/attribute.env/prod",
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/*",
	"principalSet://cloudresourcemanager.googleapis.com/projects/123456789012/type/ServiceAccount",
	"principalSet://cloudresourcemanager.googleapis.com/organizations/123/type/ServiceAgent",
	"deleted:principal://goog/subject/alice@example.com?uid=1234567890",
	"deleted:principalSet://goog/group/admins@example.com?uid=1234567890",
	"deleted:principal://iam.googleapis.com/projects/-/serviceAccounts/robot@my-project.iam.gserviceaccount.com?uid=1234567890",
	"deleted:principal://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/subject/raha@altostrat.com",
}

// slashPrincipals are documented forms whose value holds "/": Workload
// Identity Federation as GitHub Actions uses it.
var slashPrincipals = []string{
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/attribute.repository/my-org/my-repo",
	"principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/subject/repo:my-org/my-repo:ref:refs/heads/main",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/attribute.team/eng/platform",
	"principal://iam.googleapis.com/locations/global/workforcePools/altostrat-contractors/subject/org/unit/raha",
}

// badPrincipals, each with a piece of the error it must get.
var badPrincipals = map[string]string{
	"":                       "empty",
	"user:alice@example.com": "allow-policy member",
	"serviceAccount:robot@p.iam.gserviceaccount.com": "allow-policy member",
	"allUsers":                                            "principalSet://goog/public:all",
	"principal://goog/subject/alice":                      "email address",
	"principal://goog/subject/a b@example.com":            "white space",
	"principalSet://goog/group/":                          "email address",
	"principal://example.com/alice":                       "a deny-policy principal is one of",
	"principalSet://goog/cloudIdentityCustomerId/C01-Abc": "letters and digits",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/Pool/*":                              "pool ID",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/pool/*/x":                            "ends the identifier",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/pool/members/x":                      "group/GROUP_ID",
	"principal://iam.googleapis.com/locations/global/workforcePools/pool/group/x":                           `expected "subject"`,
	"principal://iam.googleapis.com/projects/my-project/locations/global/workloadIdentityPools/p/subject/s": "number",
	"principalSet://cloudresourcemanager.googleapis.com/projects/123/type/User":                             "ServiceAccount",
	"deleted:principal://goog/subject/alice@example.com":                                                    "unique ID",
	"deleted:principal://goog/subject/alice@example.com?uid=abc":                                            "unique ID",
}

var goodPermissions = []string{"iam.googleapis.com/roles.delete", "cloudresourcemanager.googleapis.com/projects.setIamPolicy", "storage.googleapis.com/buckets.get"}

var badPermissions = map[string]string{
	"iam.roles.delete":                 "IAM v1 permission",
	"iam.googleapis.com/roles":         "RESOURCE.ACTION",
	"iam.googleapis.com/roles..delete": "RESOURCE.ACTION",
	"iam/roles.delete":                 "fully qualified domain name",
	"IAM.googleapis.com/roles.delete":  "fully qualified domain name",
	"iam.googleapis.com/*.delete":      "RESOURCE.ACTION",
	"iam.googleapis.com/*":             "RESOURCE.ACTION",
	"iam.googleapis.com/roles.del*":    "RESOURCE.ACTION",
	"iam.googleapis.com/*.*.*":         "RESOURCE.ACTION",
	"":                                 "SERVICE_FQDN/RESOURCE.ACTION",
}

// TestRuleValidation: every documented form is accepted, in denied and
// exception principals alike (PublicAll only as denied); malformed
// principals and permissions are refused by AddRule and RemoveRule alike,
// before any call, INVALID_ARGUMENT naming the value and what is wrong.
func TestRuleValidation(t *testing.T) {
	e := newEnv(t, "grpc", nil)
	e.seed(rule(0))
	ctx := context.Background()
	good := deny.Rule{DeniedPrincipals: goodPrincipals, ExceptionPrincipals: goodPrincipals[1:],
		DeniedPermissions: goodPermissions, ExceptionPermissions: goodPermissions[:1]}
	if _, err := e.u.Update(ctx, policyName, deny.AddRule(good)); err != nil {
		t.Fatalf("documented forms refused: %v", err)
	}
	if e.count(good) != 1 {
		t.Fatal("the rule was not added")
	}
	e.srv.ResetCalls()

	refused := func(t *testing.T, r deny.Rule, want ...string) {
		t.Helper()
		for _, c := range []deny.Change{deny.AddRule(r), deny.RemoveRule(r)} {
			_, err := e.u.Update(ctx, policyName, c)
			if status.Code(err) != grpccodes.InvalidArgument {
				t.Fatalf("%+v: %v, want INVALID_ARGUMENT", r, err)
			}
			for _, w := range want {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
		}
	}
	for p, why := range badPrincipals {
		refused(t, deny.Rule{DeniedPrincipals: []string{p}, DeniedPermissions: goodPermissions}, "DeniedPrincipals", why)
		refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], ExceptionPrincipals: []string{p}, DeniedPermissions: goodPermissions}, "ExceptionPrincipals", why)
	}
	for p, why := range badPermissions {
		refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], DeniedPermissions: []string{p}}, "DeniedPermissions", why)
		refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], DeniedPermissions: goodPermissions, ExceptionPermissions: []string{p}}, "ExceptionPermissions", why)
	}
	refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], ExceptionPrincipals: []string{deny.PublicAll}, DeniedPermissions: goodPermissions}, "cannot be an exception")
	refused(t, deny.Rule{DeniedPermissions: goodPermissions}, "DeniedPrincipals is empty")
	refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1]}, "DeniedPermissions is empty")
	refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], DeniedPermissions: goodPermissions, Description: strings.Repeat("x", 257)}, "257 characters")
	refused(t, deny.Rule{DeniedPrincipals: goodPrincipals[:1], DeniedPermissions: goodPermissions, Condition: &expr.Expr{}}, "empty expression")
	// Every bad value is named, not only the first.
	refused(t, deny.Rule{DeniedPrincipals: []string{"user:a@example.com", "group:b@example.com"}, DeniedPermissions: []string{"iam.roles.delete"}},
		"user:a@example.com", "group:b@example.com", "iam.roles.delete")

	for _, bad := range [][]deny.Change{nil, {{}}} {
		if _, err := e.u.Update(ctx, policyName, bad...); status.Code(err) != grpccodes.InvalidArgument {
			t.Fatalf("changes %v: %v, want INVALID_ARGUMENT", bad, err)
		}
	}
	// A bad change is counted from 1 ("N of M"), as policy's Mutations and
	// role's Changes are.
	if _, err := e.u.Update(ctx, policyName, deny.AddRule(rule(1)), deny.Change{}); !strings.Contains(err.Error(), "change 2 of 2 is the zero Change") {
		t.Fatalf("a zero second change: %v; want it named change 2 of 2", err)
	}
	for _, name := range []string{"", "policies/x/denypolicies", "policies/cloudresourcemanager.googleapis.com/projects/p/denypolicies/x", "projects/p/denypolicies/x"} {
		_, err := e.u.Update(ctx, name, deny.AddRule(rule(1)))
		if status.Code(err) != grpccodes.InvalidArgument || !strings.Contains(err.Error(), "policies/{attachment_point}/denypolicies/{policy_id}") {
			t.Fatalf("name %q: %v", name, err)
		}
	}
	if n := e.srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Fatalf("%d calls made for refused input, want 0", n)
	}
}

// TestRuleEqual: lists compare as sets; every other field must be equal.
func TestRuleEqual(t *testing.T) {
	a := deny.Rule{Description: "d", DeniedPrincipals: []string{"p1", "p2"}, DeniedPermissions: []string{"x", "y"},
		Condition: &expr.Expr{Expression: "e"}}
	b := deny.Rule{Description: "d", DeniedPrincipals: []string{"p2", "p1", "p2"}, DeniedPermissions: []string{"y", "x"},
		ExceptionPrincipals: []string{}, Condition: &expr.Expr{Expression: "e"}}
	if !a.Equal(b) || !b.Equal(a) {
		t.Fatal("rules equal as sets compare unequal")
	}
	for _, c := range []func(r *deny.Rule){
		func(r *deny.Rule) { r.Description = "other" },
		func(r *deny.Rule) { r.DeniedPrincipals = []string{"p1"} },
		func(r *deny.Rule) { r.ExceptionPrincipals = []string{"p3"} },
		func(r *deny.Rule) { r.DeniedPermissions = []string{"x"} },
		func(r *deny.Rule) { r.ExceptionPermissions = []string{"x"} },
		func(r *deny.Rule) { r.Condition = nil },
		func(r *deny.Rule) { r.Condition = &expr.Expr{Expression: "e", Title: "t"} },
	} {
		o := a
		c(&o)
		if a.Equal(o) {
			t.Fatalf("%+v equals %+v", a, o)
		}
	}
}

// TestNewUpdaterRefuses: bad arguments, each named, and no Updater.
func TestNewUpdaterRefuses(t *testing.T) {
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() (*deny.Updater, error){
		"needs a Client":       func() (*deny.Updater, error) { return deny.NewUpdater(nil, r) },
		"Retrier it runs on":   func() (*deny.Updater, error) { return deny.NewUpdater(nil, nil) },
		"not built by":         func() (*deny.Updater, error) { return deny.NewUpdater(nil, &interceptor.Retrier{}) },
		"option 1 of 1 is nil": func() (*deny.Updater, error) { return deny.NewUpdater(nil, r, nil) },
		"WithPollInterval(0s)": func() (*deny.Updater, error) { return deny.NewUpdater(nil, r, deny.WithPollInterval(0)) },
		"unknown schedule":     func() (*deny.Updater, error) { return deny.NewUpdater(nil, r, deny.WithConflictBackoff(9)) },
	}
	for want, f := range cases {
		u, err := f()
		if u != nil || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, %v", want, u, err)
		}
	}
}

// TestSlashPrincipalsAccepted: principals whose value holds "/" (the
// subject and attribute values of Workload and Workforce Identity
// Federation, https://cloud.google.com/iam/docs/principal-identifiers) go
// through the Updater and the fake on both faces, as denied and exception
// principals, in AddRule and RemoveRule alike.
func TestSlashPrincipalsAccepted(t *testing.T) {
	t.Parallel()
	for _, tr := range transports {
		e := newEnv(t, tr, nil)
		e.seed(rule(0))
		for _, p := range slashPrincipals {
			r := deny.Rule{DeniedPrincipals: []string{p}, ExceptionPrincipals: []string{p}, DeniedPermissions: []string{"iam.googleapis.com/roles.delete"}}
			if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(r)); err != nil {
				t.Fatalf("%s: AddRule(%s): %v", tr, p, err)
			}
			if n := e.count(r); n != 1 {
				t.Fatalf("%s: %s: %d rules stored, want 1", tr, p, n)
			}
			if _, err := e.u.Update(context.Background(), policyName, deny.RemoveRule(r)); err != nil {
				t.Fatalf("%s: RemoveRule(%s): %v", tr, p, err)
			}
			if n := e.count(r); n != 0 {
				t.Fatalf("%s: %s: %d rules left, want 0", tr, p, n)
			}
		}
	}
}
