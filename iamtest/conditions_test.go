package iamtest_test

import (
	"context"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// badCEL does not parse: the call of timestamp is not closed.
const badCEL = `request.time < timestamp("2027-01-01T00:00:00Z"`

// TestConditionsAreCEL: a condition expression that is not valid CEL is
// refused INVALID_ARGUMENT on write, with a message naming the problem, over
// gRPC and REST; a valid one is stored (IAM Conditions are CEL:
// https://cloud.google.com/iam/docs/conditions-overview#cel). LintPolicy
// reports the same parse error (LintResult level CONDITION, severity ERROR,
// google/iam/admin/v1/iam.proto) and nothing for an expression that parses.
func TestConditionsAreCEL(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	c := newClients(t, srv)
	ctx := context.Background()
	write := func(e string) error {
		_, err := c.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Version: 3,
			Bindings: []*iampb.Binding{{Role: "roles/browser", Members: []string{"user:a@example.com"},
				Condition: &expr.Expr{Title: "until 2027", Expression: e}}}}}, noRetry)
		return err
	}
	wantErr(t, "gRPC write of bad CEL", write(badCEL), codes.InvalidArgument, "not valid CEL")
	if err := write(`request.time < timestamp("2027-01-01T00:00:00Z")`); err != nil {
		t.Fatalf("valid CEL refused: %v", err)
	}

	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Projects.SetIamPolicy("projects/q", &crm.SetIamPolicyRequest{Policy: &crm.Policy{Version: 3,
		Bindings: []*crm.Binding{{Role: "roles/browser", Members: []string{"user:a@example.com"},
			Condition: &crm.Expr{Title: "t", Expression: "resource.name.startsWith("}}}}}).Do()
	wantHTTP(t, "REST write of bad CEL", err, 400, "not valid CEL")

	lint, err := c.admin.LintPolicy(ctx, &adminpb.LintPolicyRequest{FullResourceName: "//cloudresourcemanager.googleapis.com/projects/p",
		LintObject: &adminpb.LintPolicyRequest_Condition{Condition: &expr.Expr{Expression: badCEL}}}, noRetry)
	if err != nil || len(lint.LintResults) == 0 {
		t.Fatalf("LintPolicy: %v, %v", lint, err)
	}
	r := lint.LintResults[0]
	if r.Level != adminpb.LintResult_CONDITION || r.Severity != adminpb.LintResult_ERROR || r.FieldName != "condition.expression" || r.DebugMessage == "" {
		t.Fatalf("lint result %v", r)
	}
	ok, err := c.admin.LintPolicy(ctx, &adminpb.LintPolicyRequest{
		LintObject: &adminpb.LintPolicyRequest_Condition{Condition: &expr.Expr{Expression: `resource.name.startsWith("projects/p")`}}}, noRetry)
	if err != nil || len(ok.LintResults) != 0 {
		t.Fatalf("LintPolicy of valid CEL: %v, %v", ok, err)
	}

	rest := newIAMREST(t, srv)
	rl, err := rest.IamPolicies.LintPolicy(&iamv1.LintPolicyRequest{Condition: &iamv1.Expr{Expression: badCEL}}).Do()
	if err != nil || len(rl.LintResults) == 0 || !strings.Contains(rl.LintResults[0].Severity, "ERROR") {
		t.Fatalf("REST lintPolicy: %v, %v", rl, err)
	}
}
