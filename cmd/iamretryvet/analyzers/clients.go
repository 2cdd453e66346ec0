package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// UnwiredClient reports, in a package that imports iamretry's interceptor,
// a direct call of an IAM client constructor (GAPIC gRPC or REST: admin,
// iam/apiv1, apiv2, apiv3, credentials, resourcemanager/apiv3; discovery
// NewService of iam/v1, iam/v2, iamcredentials/v1, cloudresourcemanager/v3)
// that is not wired by hand: a gRPC one given the Retrier's interceptor
// (GAXStacked's concern), or a REST one whose option.WithHTTPClient client
// carries the Retrier's RoundTripper. A client of a fake or an emulator
// (its options reach iamtest's Server or option.WithoutAuthentication) is
// not reported. The fix: interceptor.NewClient or
// interceptor.NewRESTClient.
var UnwiredClient = &analysis.Analyzer{
	Name: "unwiredclient",
	Doc:  "report IAM clients built without the Retrier in a package that uses iamretry",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#UnwiredClient",
	Run:  runUnwiredClient,
}

// GAXStacked reports a GAPIC gRPC client given the Retrier's interceptor
// as a dial option whose CallOptions never reach
// interceptor.DisableGAXRetries in that function: gax retries above the
// interceptor multiply the attempts. A client that escapes the function
// (returned, stored, passed on) is not reported. The fix:
// interceptor.NewClient, or DisableGAXRetries(c.CallOptions).
var GAXStacked = &analysis.Analyzer{
	Name: "gaxstacked",
	Doc:  "report GAPIC clients given the Retrier's interceptor whose gax retries stay on",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#GAXStacked",
	Run:  runGAXStacked,
}

func isInterceptorFace(fn *types.Func) bool {
	return isIamretry(fn, interceptorPkg, "Retrier", "UnaryClientInterceptor") ||
		isIamretry(fn, interceptorPkg, "", "UnaryClientInterceptor")
}

func isRoundTripper(fn *types.Func) bool {
	return isIamretry(fn, interceptorPkg, "Retrier", "RoundTripper")
}

// ctorCalls calls f with each IAM client constructor call in the package,
// its kind, the body of the function it is in, and the statement it is.
func ctorCalls(pass *analysis.Pass, f func(call *ast.CallExpr, kind string, body *ast.BlockStmt)) {
	info := pass.TypesInfo
	funcBodies(pass, func(body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				fn := callee(info, call)
				if k := ctorKind(fn); k != "" {
					f(call, k, body)
				}
			}
			return true
		})
	})
}

// wiredBy reports whether the constructor call's options reach a call
// matched by face.
func wiredBy(info *types.Info, body ast.Node, call *ast.CallExpr, face func(*types.Func) bool) bool {
	for _, a := range call.Args[min(1, len(call.Args)):] {
		if reaches(info, body, a, calls(info, face)) {
			return true
		}
	}
	return false
}

func runUnwiredClient(pass *analysis.Pass) (any, error) {
	if !importsInterceptor(pass.Pkg) {
		return nil, nil
	}
	info := pass.TypesInfo
	ctorCalls(pass, func(call *ast.CallExpr, kind string, body *ast.BlockStmt) {
		fn := callee(info, call)
		if ofFake(info, body, call) {
			return
		}
		if kind == "grpc" {
			if wiredBy(info, body, call, isInterceptorFace) {
				return
			}
			report(pass, call, "%s.%s builds a client the Retrier never sees: build it with interceptor.NewClient(ctx, r, %[1]s.%[2]s, opts...)", fn.Pkg().Name(), fn.Name())
			return
		}
		if wiredBy(info, body, call, isRoundTripper) {
			return
		}
		report(pass, call, "%s.%s builds a client the Retrier never sees: build it with interceptor.NewRESTClient(ctx, r, %[1]s.%[2]s, opts...)", fn.Pkg().Name(), fn.Name())
	})
	return nil, nil
}

func runGAXStacked(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	ctorCalls(pass, func(call *ast.CallExpr, kind string, body *ast.BlockStmt) {
		if kind != "grpc" || !wiredBy(info, body, call, isInterceptorFace) {
			return
		}
		c := clientVar(info, body, call)
		if c == nil || escapes(info, body, c) {
			return
		}
		disabled := false
		ast.Inspect(body, func(n ast.Node) bool {
			if x, ok := n.(*ast.CallExpr); ok && isIamretry(callee(info, x), interceptorPkg, "", "DisableGAXRetries") {
				disabled = disabled || mentions(info, x, map[*types.Var]bool{c: true})
			}
			return !disabled
		})
		if !disabled {
			fn := callee(info, call)
			report(pass, call, "%s.%s's gax retries stay on above the Retrier's interceptor, multiplying attempts: call interceptor.DisableGAXRetries(%s.CallOptions), or build it with interceptor.NewClient", fn.Pkg().Name(), fn.Name(), c.Name())
		}
	})
	return nil, nil
}

// clientVar returns the local variable the constructor call's client is
// assigned to, or nil.
func clientVar(info *types.Info, body ast.Node, call *ast.CallExpr) *types.Var {
	var out *types.Var
	escaped := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if len(n.Rhs) == 1 && ast.Unparen(n.Rhs[0]) == call && len(n.Lhs) > 0 {
				out = localVar(info, body, n.Lhs[0])
				escaped = out == nil
			}
		case *ast.ValueSpec:
			if len(n.Values) == 1 && ast.Unparen(n.Values[0]) == call {
				out, _ = info.Defs[n.Names[0]].(*types.Var)
			}
		}
		return out == nil && !escaped
	})
	return out
}

// escapes reports whether v leaves the function: any use of it other than
// as the operand of a selector (a method call, a field).
func escapes(info *types.Info, body ast.Node, v *types.Var) bool {
	esc := false
	var parent []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			parent = parent[:len(parent)-1]
			return false
		}
		if id, ok := n.(*ast.Ident); ok && info.Uses[id] == v && len(parent) > 0 {
			switch p := parent[len(parent)-1].(type) {
			case *ast.SelectorExpr:
				if p.X != id {
					esc = true
				}
			case *ast.AssignStmt:
				lhs := false
				for _, l := range p.Lhs {
					lhs = lhs || l == id
				}
				esc = esc || !lhs
			default:
				esc = true
			}
		}
		parent = append(parent, n)
		return true
	})
	return esc
}
