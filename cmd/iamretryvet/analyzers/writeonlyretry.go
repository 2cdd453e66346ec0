package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// WriteOnlyRetry reports a loop that calls SetIamPolicy, UpdateRole (admin)
// or UpdatePolicy (IAM v2) and goes round again after it failed, with no
// matching read (GetIamPolicy, GetRole, GetPolicy) inside the loop; and a
// function given to Retrier.Do that writes so without reading. The write
// carries the etag of a read made once: after ABORTED it fails again and
// again. The fix: rerun the read with the write (policy.Updater,
// role.Updater, deny.Updater, interceptor.Transact).
var WriteOnlyRetry = &analysis.Analyzer{
	Name: "writeonlyretry",
	Doc:  "report loops and Retrier.Do functions that retry an IAM write without the read before it",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#WriteOnlyRetry",
	Run:  runWriteOnlyRetry,
}

// isWrite reports whether fn writes an object guarded by an etag.
func isWrite(fn *types.Func) bool {
	return isCloudMethod(fn, "SetIamPolicy") ||
		(isMethod(fn) && pkgPath(fn) == adminPkg && fn.Name() == "UpdateRole") ||
		(isMethod(fn) && pkgPath(fn) == "cloud.google.com/go/iam/apiv2" && fn.Name() == "UpdatePolicy")
}

// isRead reports whether fn reads what a write may change, or runs a whole
// read-modify-write.
func isRead(fn *types.Func) bool {
	return isCloudMethod(fn, "GetIamPolicy", "GetRole", "GetPolicy") || isOwner(fn) && !isDo(fn)
}

func runWriteOnlyRetry(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	funcBodies(pass, func(body *ast.BlockStmt) {
		loops(body, func(loop ast.Stmt, lb *ast.BlockStmt) {
			writes := shallowCalls(info, lb, isWrite)
			if len(writes) == 0 || rangeVarsIn(info, loop, writes) || hasRead(info, lb) {
				return
			}
			if retriesOnError(info, loop, lb, errVars(info, lb, writes)) {
				report(pass, loop, "this loop retries %s alone after it fails: its etag stays stale, so it fails again; rerun the read with the write (policy.Updater, role.Updater, deny.Updater or interceptor.Transact)", name(info, writes[0]))
			}
		})
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isDo(callee(info, call)) || len(call.Args) < 3 {
				return true
			}
			f := funcLitOf(call.Args[2])
			if f == nil {
				return true
			}
			var w *ast.CallExpr
			ast.Inspect(f.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && w == nil && isWrite(callee(info, c)) {
					w = c
				}
				return w == nil
			})
			if w != nil && !hasRead(info, f.Body) {
				report(pass, call, "Retrier.Do retries %s alone: its etag stays stale, so a conflict fails again; rerun the read with the write (policy.Updater, role.Updater, deny.Updater or interceptor.Transact)", name(info, w))
			}
			return true
		})
	})
	return nil, nil
}

// hasRead reports whether n calls a read.
func hasRead(info *types.Info, n ast.Node) bool {
	found := false
	ast.Inspect(n, func(m ast.Node) bool {
		if c, ok := m.(*ast.CallExpr); ok && isRead(callee(info, c)) {
			found = true
		}
		return !found
	})
	return found
}

// name is the name of the function call calls.
func name(info *types.Info, call *ast.CallExpr) string {
	if fn := callee(info, call); fn != nil {
		return fn.Name()
	}
	return "the call"
}
