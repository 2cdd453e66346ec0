package iamtest

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	celcommon "github.com/google/cel-go/common"
	celast "github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	celparser "github.com/google/cel-go/parser"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// IAM Conditions are CEL expressions
// (https://cloud.google.com/iam/docs/conditions-overview#cel): the fake
// parses them with cel-go, as a write or LintPolicy would, and reports the
// parse errors. It does not type-check them (which attributes and functions
// IAM declares, and where, is more than the fake knows), so what it refuses
// is what no CEL parser accepts.

// celErrors parses expr and returns its parse errors, nil when it parses.
func celErrors(expr string) []*celcommon.Error {
	_, errs := celparser.Parse(celcommon.NewTextSource(expr))
	if errs == nil || len(errs.GetErrors()) == 0 {
		return nil
	}
	return errs.GetErrors()
}

// maxLogicalOperators is the most logical operators (&&, ||, !) one
// condition expression may hold:
// https://cloud.google.com/iam/docs/conditions-overview#limitations.
const maxLogicalOperators = 12

// logicalOperators counts the &&, || and ! of a parsed expression.
func logicalOperators(expr string) int {
	a, errs := celparser.Parse(celcommon.NewTextSource(expr))
	if errs != nil && len(errs.GetErrors()) > 0 {
		return 0
	}
	root := celast.NavigateAST(a)
	n := 0
	for _, op := range []string{operators.LogicalAnd, operators.LogicalOr, operators.LogicalNot} {
		n += len(celast.MatchDescendants(root, celast.FunctionMatcher(op)))
	}
	return n
}

// checkCondition refuses a condition expression that is not valid CEL with
// INVALID_ARGUMENT naming the role and cel-go's description of the problem.
func checkCondition(role, expr string) error {
	errs := celErrors(expr)
	if errs == nil {
		return nil
	}
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, fmt.Sprintf("%d:%d: %s", e.Location.Line(), e.Location.Column()+1, e.Message))
	}
	return status.Errorf(codes.InvalidArgument,
		"invalid condition in binding for role %q: the expression is not valid CEL: %s", role, strings.Join(msgs, "; "))
}

// LintPolicy lints the condition of the request (LintPolicyRequest.condition;
// a request without one answers UNIMPLEMENTED)
// as IAM's linter reports a parse failure: one LintResult per parse error,
// level CONDITION, severity ERROR, field condition.expression, at the
// error's offset in the expression. An expression that parses answers no
// result: the fake cannot know the rest of what IAM's linter checks.
func (a *adminService) LintPolicy(_ context.Context, req *adminpb.LintPolicyRequest) (*adminpb.LintPolicyResponse, error) {
	c := req.GetCondition()
	if c == nil {
		// Linting anything but a condition is left unserved, as UNIMPLEMENTED.
		return nil, status.Error(codes.Unimplemented, "iamtest: LintPolicy lints a condition only; this request names none")
	}
	if strings.TrimSpace(c.GetExpression()) == "" {
		return nil, status.Error(codes.InvalidArgument, "invalid condition: the expression must not be empty")
	}
	src := celcommon.NewTextSource(c.GetExpression())
	resp := &adminpb.LintPolicyResponse{}
	for _, e := range celErrors(c.GetExpression()) {
		off, _ := src.LocationOffset(e.Location)
		resp.LintResults = append(resp.LintResults, &adminpb.LintResult{
			Level:              adminpb.LintResult_CONDITION,
			ValidationUnitName: "LintValidationUnits/ConditionCompileCheck",
			Severity:           adminpb.LintResult_ERROR,
			FieldName:          "condition.expression",
			LocationOffset:     off,
			DebugMessage:       e.Message,
		})
	}
	return resp, nil
}
