package policy_test

import (
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/interceptor/policy"
)

func TestCanonicalMember(t *testing.T) {
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
