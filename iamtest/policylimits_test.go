package iamtest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
)

// Issue 31, item 3: the limits of a conditional binding, on the gRPC face
// (iam/apiv1) and the REST one (cloudresourcemanager v3). Source:
// https://cloud.google.com/iam/docs/conditions-overview ("You cannot use
// conditions when you grant legacy basic roles, including Owner
// (roles/owner), Editor (roles/editor), and Viewer (roles/viewer). Also, you
// cannot use conditions when you grant roles to all users (allUsers) or all
// authenticated users (allAuthenticatedUsers)"; "Limitations": at most 12
// logical operators in one expression) and
// https://cloud.google.com/iam/docs/policies#limits (at most 20 bindings of
// one role and principal with different conditions).
func TestConditionalBindingLimits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	const when = `request.time < timestamp("2030-01-01T00:00:00Z")`
	cond := func(e string) *expr.Expr { return &expr.Expr{Title: "t", Expression: e} }
	set := func(role, member string, e string) error {
		_, err := c.setPolicy("folders/1", &iampb.Policy{Version: 3, Bindings: []*iampb.Binding{
			{Role: role, Members: []string{member}, Condition: cond(e)}}})
		return err
	}
	setREST := func(role, member, e string) error {
		_, err := svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: &crm.Policy{Version: 3,
			Bindings: []*crm.Binding{{Role: role, Members: []string{member}, Condition: &crm.Expr{Title: "t", Expression: e}}}}}).Do()
		return err
	}
	refused := func(what string, grpcErr, restErr error, words string) {
		t.Helper()
		if status.Code(grpcErr) != codes.InvalidArgument || !strings.Contains(status.Convert(grpcErr).Message(), words) {
			t.Errorf("%s over gRPC: %v, want INVALID_ARGUMENT naming %q", what, grpcErr, words)
		}
		var gerr *googleapi.Error
		if !errors.As(restErr, &gerr) || gerr.Code != http.StatusBadRequest || !strings.Contains(gerr.Message, words) {
			t.Errorf("%s over REST: %v, want 400 naming %q", what, restErr, words)
		}
	}
	for _, role := range []string{"roles/owner", "roles/editor", "roles/viewer"} {
		refused("a condition on "+role, set(role, "user:a@example.com", when), setREST(role, "user:a@example.com", when), "basic roles")
	}
	for _, m := range []string{"allUsers", "allAuthenticatedUsers"} {
		refused("a condition for "+m, set("roles/storage.objectViewer", m, when), setREST("roles/storage.objectViewer", m, when), m)
	}
	// 12 logical operators pass, 13 do not (&&, || and ! each count).
	twelve := "true" + strings.Repeat(" && true", 10) + " || !false" // 10 && + 1 || + 1 !
	if err := set("roles/browser", "user:a@example.com", twelve); err != nil {
		t.Fatalf("12 logical operators: %v", err)
	}
	thirteen := twelve + " && true"
	refused("13 logical operators", set("roles/browser", "user:a@example.com", thirteen),
		setREST("roles/browser", "user:a@example.com", thirteen), "13 logical operators")

	// 20 conditional bindings of one role and principal pass, 21 do not.
	bindings := func(n int) *iampb.Policy {
		p := &iampb.Policy{Version: 3}
		for i := range n {
			p.Bindings = append(p.Bindings, &iampb.Binding{Role: "roles/browser", Members: []string{"user:a@example.com"},
				Condition: cond(fmt.Sprintf(`request.time < timestamp("20%02d-01-01T00:00:00Z")`, 30+i))})
		}
		return p
	}
	if _, err := c.setPolicy("folders/2", bindings(20)); err != nil {
		t.Fatalf("20 conditional bindings: %v", err)
	}
	_, err = c.setPolicy("folders/3", bindings(21))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "more than the maximum of 20") {
		t.Fatalf("21 conditional bindings: %v", err)
	}
}

// Issue 31, item 3: the 1,500 principals of a policy count its audit-log
// exemptions too. Source: https://cloud.google.com/iam/docs/policies#principals-per-policy-limit
// ("up to a total of 1,500 principals in role bindings and audit logging
// exemptions"); the message is IAM's for the principal limit.
func TestPrincipalLimitCountsAuditExemptions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	users := func(from, n int) []string {
		var ms []string
		for i := range n {
			ms = append(ms, fmt.Sprintf("user:u%d@example.com", from+i))
		}
		return ms
	}
	policyOf := func(members, exempted int) *iampb.Policy {
		return &iampb.Policy{
			Bindings: []*iampb.Binding{{Role: "roles/browser", Members: users(0, members)}},
			AuditConfigs: []*iampb.AuditConfig{{Service: "allServices", AuditLogConfigs: []*iampb.AuditLogConfig{{
				LogType: iampb.AuditLogConfig_DATA_READ, ExemptedMembers: users(members, exempted)}}}},
		}
	}
	set := func(resource string, p *iampb.Policy) error {
		_, err := c.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: resource, Policy: p,
			UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"bindings", "audit_configs", "etag"}}}, noRetry)
		return err
	}
	if err := set("folders/1", policyOf(1400, 100)); err != nil {
		t.Fatalf("1,400 members and 100 exemptions: %v", err)
	}
	const msg = "The number of members in the policy (1,501) is larger than the maximum allowed size 1,500."
	err = set("folders/2", policyOf(1400, 101))
	wantStatus(t, err, codes.InvalidArgument, msg)

	p := policyOf(1400, 101)
	rp := &crm.Policy{AuditConfigs: []*crm.AuditConfig{{Service: "allServices", AuditLogConfigs: []*crm.AuditLogConfig{{
		LogType: "DATA_READ", ExemptedMembers: p.AuditConfigs[0].AuditLogConfigs[0].ExemptedMembers}}}},
		Bindings: []*crm.Binding{{Role: "roles/browser", Members: p.Bindings[0].Members}}}
	_, err = svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: rp, UpdateMask: "bindings,auditConfigs,etag"}).Do()
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest || !strings.Contains(gerr.Message, msg) {
		t.Fatalf("REST: %v, want 400 %q", err, msg)
	}
}
