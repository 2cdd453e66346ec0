package analyzers

import (
	"go/ast"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
)

// RESTLROPoll reports, in a package that calls interceptor.NewRESTClient,
// a Poll, Wait or WaitWithInterval of a long-running operation (a
// cloud.google.com/go type named ...Operation) given no gax.WithRetry: a
// GAPIC REST client keeps its operations client private, out of
// NewRESTClient's reach, so gax retries each GetOperation poll above the
// Retrier, two owners multiplying the attempts. Not reported: an operation
// of a client built otherwise in that function (interceptor.NewClient, a
// constructor called directly), or a call whose options are not all known
// (a spread opts..., a variable of unknown value). The fix: pass
// gax.WithRetry(nil) to every Poll and Wait.
var RESTLROPoll = &analysis.Analyzer{
	Name: "restlropoll",
	Doc:  "report long-running operation polls whose gax retries stay on above a REST client's Retrier",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#RESTLROPoll",
	Run:  runRESTLROPoll,
}

const gaxPkg = "github.com/googleapis/gax-go/v2"

// operationPoll returns the name (pkg.Type) of the operation type whose
// poll fn is (Poll, Wait or WaitWithInterval of a cloud.google.com/go type
// named ...Operation, taking ...gax.CallOption last), or "".
func operationPoll(fn *types.Func) string {
	if !isMethod(fn) || !strings.HasPrefix(pkgPath(fn), "cloud.google.com/go/") {
		return ""
	}
	switch fn.Name() {
	case "Poll", "Wait", "WaitWithInterval":
	default:
		return ""
	}
	sig := fn.Signature()
	t := sig.Recv().Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || !strings.HasSuffix(n.Obj().Name(), "Operation") || !sig.Variadic() {
		return ""
	}
	last, _ := sig.Params().At(sig.Params().Len() - 1).Type().(*types.Slice)
	if last == nil || !isNamed(last.Elem(), gaxPkg, "CallOption") {
		return ""
	}
	return fn.Pkg().Name() + "." + n.Obj().Name()
}

func isNewRESTClient(fn *types.Func) bool {
	return isIamretry(fn, interceptorPkg, "", "NewRESTClient")
}

// isOtherClient reports whether fn builds a Google Cloud client whose
// operations NewRESTClient's Retrier does not carry: interceptor.NewClient
// (which turns gax's retries off in its LROClient too), or a GAPIC
// constructor called directly (gax is then the only owner).
func isOtherClient(fn *types.Func) bool {
	return isIamretry(fn, interceptorPkg, "", "NewClient") ||
		!isMethod(fn) && strings.HasPrefix(pkgPath(fn), "cloud.google.com/go/") &&
			strings.HasPrefix(fn.Name(), "New") && strings.HasSuffix(fn.Name(), "Client")
}

// plainOption reports whether e is for sure a gax call option other than
// WithRetry: a call of another gax-go option, or a local variable assigned
// only such calls.
func plainOption(info *types.Info, body ast.Node, e ast.Expr, seen map[*types.Var]bool) bool {
	if c, ok := ast.Unparen(e).(*ast.CallExpr); ok {
		fn := callee(info, c)
		return pkgPath(fn) == gaxPkg && !isMethod(fn) && fn.Name() != "WithRetry"
	}
	v := localVar(info, body, e)
	if v == nil || seen[v] {
		return false
	}
	seen[v] = true
	as := assignments(info, body, v)
	for _, a := range as {
		if !plainOption(info, body, a.rhs, seen) {
			return false
		}
	}
	return len(as) > 0
}

func runRESTLROPoll(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	rest := false
	for _, f := range pass.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			rest = rest || calls(info, isNewRESTClient)(n)
			return !rest
		})
	}
	if !rest {
		return nil, nil
	}
	funcBodies(pass, func(body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fn := callee(info, call)
			op := operationPoll(fn)
			if op == "" || call.Ellipsis.IsValid() {
				return true
			}
			for _, a := range call.Args[fn.Signature().Params().Len()-1:] {
				if !plainOption(info, body, a, map[*types.Var]bool{}) {
					return true
				}
			}
			if recv := receiver(call); recv != nil && !reaches(info, body, recv, calls(info, isNewRESTClient)) &&
				reaches(info, body, recv, calls(info, isOtherClient)) {
				return true
			}
			report(pass, call, "%s.%s polls with gax's retries on, above the Retrier (a REST client keeps its operations client private, out of interceptor.NewRESTClient's reach): pass gax.WithRetry(nil)", op, fn.Name())
			return true
		})
	})
	return nil, nil
}
