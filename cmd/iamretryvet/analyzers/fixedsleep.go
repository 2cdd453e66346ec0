package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// FixedSleep reports a loop around an IAM client call that goes round again
// after the call failed and sleeps a constant between tries (time.Sleep or
// time.After of a constant): every client waits alike, a synchronised wave
// (the thundering herd the guidance warns of). A loop that sleeps only
// after a success (paging, polling for a state) is not reported. The fix:
// the Retrier (interceptor.NewClient, or Retrier.Do), whose backoff is
// exponential and jittered.
var FixedSleep = &analysis.Analyzer{
	Name: "fixedsleep",
	Doc:  "report retry loops around IAM calls that sleep a constant with no jitter",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#FixedSleep",
	Run:  runFixedSleep,
}

func isFixedWait(info *types.Info, c *ast.CallExpr) bool {
	fn := callee(info, c)
	if pkgPath(fn) != "time" || isMethod(fn) || (fn.Name() != "Sleep" && fn.Name() != "After") || len(c.Args) != 1 {
		return false
	}
	return isConst(info, c.Args[0])
}

func runFixedSleep(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	funcBodies(pass, func(body *ast.BlockStmt) {
		loops(body, func(loop ast.Stmt, lb *ast.BlockStmt) {
			cs := shallowCalls(info, lb, isIAMCall)
			if len(cs) == 0 || rangeVarsIn(info, loop, cs) {
				return
			}
			fixed := false
			inspectShallow(lb, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok && isFixedWait(info, c) {
					fixed = true
				}
				return !fixed
			})
			if fixed && retriesOnError(info, loop, lb, errVars(info, lb, cs)) {
				report(pass, loop, "this loop retries an IAM call after a fixed sleep: every client waits alike, a synchronised wave; use the Retrier (interceptor.NewClient or Retrier.Do), whose backoff is exponential with jitter")
			}
		})
	})
	return nil, nil
}
