package policy_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/iamretry/iamretry/interceptor/policy"
)

func TestCanonicalMember(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"user:Alice@Example.COM":                         "user:alice@example.com",
		"serviceAccount:Robot@P.iam.gserviceaccount.com": "serviceAccount:robot@p.iam.gserviceaccount.com",
		"group:Ops@Example.com":                          "group:ops@example.com",
		"domain:Example.COM":                             "domain:example.com",
		"deleted:user:Bob@Example.com?uid=123ABC":        "deleted:user:bob@example.com?uid=123ABC",
		"deleted:serviceAccount:R@p.com?uid=9":           "deleted:serviceAccount:r@p.com?uid=9",
		"allUsers":                                       "allUsers",
		"allAuthenticatedUsers":                          "allAuthenticatedUsers",
		"principal://iam.googleapis.com/Pools/X":         "principal://iam.googleapis.com/Pools/X",
		"principalSet://goog/Subject/ABC":                "principalSet://goog/Subject/ABC",
		"projectOwner:My-Project":                        "projectOwner:My-Project",
		// Prefixes are case-sensitive: IAM's are written as they are.
		"User:Alice@Example.com": "User:Alice@Example.com",
	} {
		if got := policy.CanonicalMember(in); got != want {
			t.Errorf("CanonicalMember(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMemberCanonicalisation: the mutations compare members as IAM does.
func TestMemberCanonicalisation(t *testing.T) {
	t.Parallel()
	p := &iampb.Policy{Bindings: []*iampb.Binding{
		{Role: "roles/viewer", Members: []string{"user:Alice@Example.com", "deleted:user:Bob@Example.com?uid=42"}},
	}}
	mustApply(t, p, policy.AddBinding("roles/viewer", "user:alice@example.com"), false)
	mustApply(t, p, policy.AddBinding("roles/viewer", "user:ALICE@EXAMPLE.COM"), false)
	// A different prefix is a different principal.
	mustApply(t, p, policy.AddBinding("roles/viewer", "group:alice@example.com"), true)
	// The deleted member as IAM writes it; another uid is another principal.
	mustApply(t, p, policy.RemoveBinding("roles/viewer", "deleted:user:bob@example.com?uid=43"), false)
	mustApply(t, p, policy.RemoveBinding("roles/viewer", "deleted:user:BOB@example.com?uid=42"), true)
	mustApply(t, p, policy.RemoveMember("user:alice@EXAMPLE.com"), true)
	if got := members(p, ""); len(got) != 1 || got["group:alice@example.com"] != 1 {
		t.Fatalf("members left: %v", got)
	}
	// A new member is written in its canonical form.
	mustApply(t, p, policy.AddBinding("roles/editor", "user:Carol@Example.com"), true)
	if got := members(p, "roles/editor"); got["user:carol@example.com"] != 1 {
		t.Fatalf("editor members: %v", got)
	}
}

// documentedMembers has a member of every form IAM documents (see
// memberForms in members.go for the sources).
var documentedMembers = []string{
	"allUsers",
	"allAuthenticatedUsers",
	"user:alice@example.com",
	"serviceAccount:robot@my-project.iam.gserviceaccount.com",
	"serviceAccount:my-other-app@appspot.gserviceaccount.com",
	"serviceAccount:my-project.svc.id.goog[my-namespace/my-kubernetes-sa]",
	"serviceAccount:example.com:my-project.svc.id.goog[default/ksa]",
	"group:admins@example.com",
	"domain:example.com",
	"principal://iam.googleapis.com/locations/global/workforcePools/my-pool/subject/raha@altostrat.com",
	"principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/subject/my-subject",
	"principal://goog/subject/alice@example.com",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/group/admins",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/attribute.department/eng",
	"principalSet://iam.googleapis.com/locations/global/workforcePools/my-pool/*",
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/group/g",
	"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/my-pool/*",
	"principalSet://cloudresourcemanager.googleapis.com/projects/123456789012/type/ServiceAccount",
	"principalSet://goog/group/admins@example.com",
	"deleted:user:alice@example.com?uid=123456789012345678901",
	"deleted:serviceAccount:my-other-app@appspot.gserviceaccount.com?uid=123456789012345678901",
	"deleted:group:admins@example.com?uid=123456789012345678901",
	"deleted:principal://iam.googleapis.com/locations/global/workforcePools/my-pool-id/subject/my-subject-attribute-value",
	"projectOwner:my-project",
	"projectEditor:my-project",
	"projectViewer:my-project",
}

// malformedMembers are refused by every mutation, each for its reason.
var malformedMembers = []string{
	"",
	"alice@example.com",        // no prefix
	"user:alice@example.com ",  // trailing space
	" user:alice@example.com",  // leading space
	"user:alice@example.com\n", // newline
	"user:",                    // no value
	"user:alice",               // not an email
	"user:alice@",              // not an email
	"user:@example.com",        // not an email
	"User:alice@example.com",   // prefixes are case-sensitive
	"usr:alice@example.com",    // no such form
	"allusers",                 // case
	"serviceAccount:my-project.svc.id.goog[ns]",     // no KSA
	"serviceAccount:my-project.svc.id.goog[ns/ksa",  // unclosed
	"serviceAccount:.svc.id.goog[ns/ksa]",           // no project
	"serviceAccount:my-project.svc.id.goog[/ksa]",   // no namespace
	"serviceAccount:my-project.svc.id.goog[ns/a/b]", // two slashes
	"group:admins",                        // not an email
	"domain:alice@example.com",            // not a domain
	"domain:",                             // empty
	"principal://",                        // no host or path
	"principal://iam.googleapis.com",      // no path
	"principalSet://",                     // no host or path
	"deleted:user:alice@example.com",      // no uid
	"deleted:user:alice@example.com?uid=", // empty uid
	"deleted:domain:example.com?uid=1",    // no such deleted form
	"deleted:principal://",                // no host or path
	"projectOwner:",                       // no project
}

// TestMemberFormsIAMDocumentsAreAccepted: every documented form can be
// granted and revoked, by each mutation.
func TestMemberFormsIAMDocumentsAreAccepted(t *testing.T) {
	t.Parallel()
	for _, m := range documentedMembers {
		p := &iampb.Policy{}
		if _, err := policy.AddBinding("roles/viewer", m)(p); err != nil {
			t.Errorf("AddBinding(%q): %v", m, err)
			continue
		}
		if _, err := policy.AddConditionalBinding("roles/editor", m, weekdays)(p); err != nil {
			t.Errorf("AddConditionalBinding(%q): %v", m, err)
		}
		if ch, err := policy.RemoveBinding("roles/viewer", m)(p); err != nil || !ch {
			t.Errorf("RemoveBinding(%q) = %v, %v; want changed", m, ch, err)
		}
		if ch, err := policy.RemoveMember(m)(p); err != nil || !ch {
			t.Errorf("RemoveMember(%q) = %v, %v; want changed", m, ch, err)
		}
		if len(p.GetBindings()) != 0 {
			t.Errorf("%q: bindings left %v", m, p.GetBindings())
		}
	}
}

// TestRemoveRefusesExactlyWhatAddRefuses: a member that AddBinding refuses
// is refused by RemoveBinding, RemoveConditionalBinding and RemoveMember
// too (with INVALID_ARGUMENT), rather than matching nothing and leaving the
// principal its role; and every documented member is accepted by all.
func TestRemoveRefusesExactlyWhatAddRefuses(t *testing.T) {
	t.Parallel()
	held := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:alice@example.com"}}}}
	for _, m := range append(append([]string(nil), malformedMembers...), documentedMembers...) {
		muts := map[string]policy.Mutation{
			"AddBinding":               policy.AddBinding("roles/viewer", m),
			"AddConditionalBinding":    policy.AddConditionalBinding("roles/viewer", m, weekdays),
			"RemoveBinding":            policy.RemoveBinding("roles/viewer", m),
			"RemoveConditionalBinding": policy.RemoveConditionalBinding("roles/viewer", m, weekdays),
			"RemoveMember":             policy.RemoveMember(m),
		}
		var refusedBy []string
		for name, mut := range muts {
			_, err := mut(proto.Clone(held).(*iampb.Policy))
			if err != nil {
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), fmt.Sprintf("%q", m)) {
					t.Errorf("%s(%q): %v, want INVALID_ARGUMENT naming the member", name, m, err)
				}
				refusedBy = append(refusedBy, name)
			}
		}
		malformed := slices.Contains(malformedMembers, m)
		if malformed && len(refusedBy) != len(muts) || !malformed && len(refusedBy) != 0 {
			slices.Sort(refusedBy)
			t.Errorf("member %q (malformed: %v) refused by %v; want all five or none", m, malformed, refusedBy)
		}
	}
	// The role and the condition too.
	for name, mut := range map[string]policy.Mutation{
		"RemoveBinding(empty role)":               policy.RemoveBinding("", "user:alice@example.com"),
		"RemoveBinding(role with space)":          policy.RemoveBinding("roles/viewer ", "user:alice@example.com"),
		"RemoveConditionalBinding(untitled cond)": policy.RemoveConditionalBinding("roles/viewer", "user:alice@example.com", &expr.Expr{Expression: "true"}),
		"RemoveConditionalBinding(empty cond)":    policy.RemoveConditionalBinding("roles/viewer", "user:alice@example.com", &expr.Expr{Title: "t"}),
	} {
		if _, err := mut(proto.Clone(held).(*iampb.Policy)); status.Code(err) != codes.InvalidArgument {
			t.Errorf("%s: %v, want INVALID_ARGUMENT as AddBinding gives", name, err)
		}
	}
}

// TestWorkloadIdentityMemberCanonicalForm: a Workload Identity member is
// compared and written like any service account.
func TestWorkloadIdentityMemberCanonicalForm(t *testing.T) {
	t.Parallel()
	m := "serviceAccount:My-Project.svc.id.goog[ns/ksa]"
	if got, want := policy.CanonicalMember(m), "serviceAccount:my-project.svc.id.goog[ns/ksa]"; got != want {
		t.Errorf("CanonicalMember(%q) = %q, want %q", m, got, want)
	}
	p := &iampb.Policy{}
	mustApply(t, p, policy.AddBinding("roles/iam.workloadIdentityUser", m), true)
	mustApply(t, p, policy.AddBinding("roles/iam.workloadIdentityUser", "serviceAccount:my-project.svc.id.goog[ns/ksa]"), false)
	mustApply(t, p, policy.RemoveMember(m), true)
}
