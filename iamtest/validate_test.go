package iamtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestMembers(t *testing.T) {
	t.Parallel()
	valid := []string{
		"allUsers", "allAuthenticatedUsers",
		"user:alice@example.com", "serviceAccount:sa@p.iam.gserviceaccount.com", "group:ops@example.com",
		"domain:example.com",
		"principal://iam.googleapis.com/locations/global/workforcePools/pool/subject/alice",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/pool/*",
		"deleted:user:alice@example.com?uid=123456789012345678901",
		"deleted:serviceAccount:sa@p.iam.gserviceaccount.com?uid=123",
		"deleted:group:ops@example.com?uid=42",
	}
	for _, m := range valid {
		if err := validateMember(m); err != nil {
			t.Errorf("validateMember(%q) = %v", m, err)
		}
	}
	invalid := []string{
		"", "alice@example.com", "allusers", "user:", "user:alice", "user:@example.com",
		"serviceAccount:sa", "group:x@", "domain:", "domain:a@example.com", "principal:alice",
		"principalSet:", "deleted:user:alice@example.com", "deleted:user:alice@example.com?uid=",
		"deleted:domain:example.com?uid=1", "projectOwner:p", "user:alice @example.com", "User:alice@example.com",
	}
	for _, m := range invalid {
		err := validateMember(m)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), fmt.Sprintf("%q", m)) {
			t.Errorf("validateMember(%q) = %v, want INVALID_ARGUMENT naming it", m, err)
		}
	}
}

func TestRoles(t *testing.T) {
	t.Parallel()
	for _, r := range []string{"roles/viewer", "roles/iam.serviceAccountUser", "projects/p/roles/custom", "organizations/1/roles/custom"} {
		if err := validateRole(r); err != nil {
			t.Errorf("validateRole(%q) = %v", r, err)
		}
	}
	for _, r := range []string{"", "viewer", "roles/", "roles/a/b", "folders/1/roles/x", "projects/p/roles/", "projects//roles/x", "projects/p/role/x"} {
		err := validateRole(r)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), fmt.Sprintf("%q", r)) {
			t.Errorf("validateRole(%q) = %v, want INVALID_ARGUMENT naming it", r, err)
		}
	}
}

// TestValidationOnWrite checks that SetIamPolicy refuses each bad value with
// INVALID_ARGUMENT naming it, and stores nothing.
func TestValidationOnWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "projects/v"
	cases := []struct {
		name string
		p    *iampb.Policy
		want string
	}{
		{"member", &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "alice@example.com")}}, `"alice@example.com"`},
		{"role", &iampb.Policy{Bindings: []*iampb.Binding{binding("viewer", "user:a@example.com")}}, `"viewer"`},
		{"condition title", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"},
			Condition: &expr.Expr{Expression: "true"}}}}, "title"},
		{"condition expression", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"},
			Condition: &expr.Expr{Title: "t"}}}}, "expression"},
		{"audit member", &iampb.Policy{AuditConfigs: []*iampb.AuditConfig{{Service: "allServices", AuditLogConfigs: []*iampb.AuditLogConfig{
			{LogType: iampb.AuditLogConfig_DATA_READ, ExemptedMembers: []string{"bob"}}}}}}, `"bob"`},
	}
	for _, c := range cases {
		req := &iampb.SetIamPolicyRequest{Resource: res, Policy: c.p}
		if c.p.AuditConfigs != nil {
			req.UpdateMask = maskOf("audit_configs")
		}
		_, err := f.policy.SetIamPolicy(ctx, req)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), c.want) {
			t.Errorf("%s: got %v, want INVALID_ARGUMENT mentioning %s", c.name, err, c.want)
		}
	}
	if f.srv.CountCalls(MethodSetIamPolicy) != len(cases) || len(f.srv.Policy(res).Bindings) != 0 {
		t.Fatal("a refused write was stored")
	}
}

func TestEmptyBindingsDroppedAndMerged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	got := must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/e", Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{
			binding("roles/owner"),
			binding("roles/viewer", "user:a@example.com", "user:a@example.com"),
			binding("roles/viewer", "user:b@example.com"),
			{Role: "roles/editor", Members: []string{}},
		}}}))
	if len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/viewer" ||
		strings.Join(got.Bindings[0].Members, ",") != "user:a@example.com,user:b@example.com" {
		t.Fatalf("stored %v", got.Bindings)
	}
}

func TestPrincipalLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	members := func(n int, prefix string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("user:%s%d@example.com", prefix, i)
		}
		return out
	}
	// 1,500 entries is allowed, even when a principal appears in two bindings.
	ok := &iampb.Policy{Bindings: []*iampb.Binding{
		binding("roles/viewer", members(750, "u")...),
		binding("roles/editor", members(750, "u")...),
	}}
	must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/l", Policy: ok}))
	// One more entry, counted across bindings, is refused.
	tooMany := &iampb.Policy{Bindings: []*iampb.Binding{
		binding("roles/viewer", members(750, "u")...),
		binding("roles/editor", members(751, "u")...),
	}}
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/l", Policy: tooMany})
	wantCode(t, err, codes.InvalidArgument, "The number of members in the policy (1,501) is larger than the maximum allowed size 1,500.")
	// Duplicates within one binding count once.
	dup := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", append(members(1500, "d"), members(10, "d")...)...)}}
	must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/l", Policy: dup}))
}
