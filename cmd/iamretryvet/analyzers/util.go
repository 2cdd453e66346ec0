package analyzers

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/types/typeutil"
)

// The iamretry packages whose functions the analyzers know.
const (
	interceptorPkg = "github.com/iamretry/iamretry/interceptor"
	policyPkg      = "github.com/iamretry/iamretry/interceptor/policy"
	rolePkg        = "github.com/iamretry/iamretry/interceptor/role"
	denyPkg        = "github.com/iamretry/iamretry/interceptor/deny"
	adminPkg       = "cloud.google.com/go/iam/admin/apiv1"
)

// gapicPkgs are the GAPIC client packages of the IAM APIs (and of Resource
// Manager, whose clients carry the IAM methods of projects and folders).
var gapicPkgs = map[string]bool{
	adminPkg:                                    true,
	"cloud.google.com/go/iam/apiv1":             true,
	"cloud.google.com/go/iam/apiv2":             true,
	"cloud.google.com/go/iam/apiv3":             true,
	"cloud.google.com/go/iam/apiv3beta":         true,
	"cloud.google.com/go/iam/credentials/apiv1": true,
	"cloud.google.com/go/resourcemanager/apiv3": true,
}

// discoveryPkgs are the discovery (google.golang.org/api) packages whose
// NewService builds an IAM client.
var discoveryPkgs = map[string]bool{
	"google.golang.org/api/iam/v1":                  true,
	"google.golang.org/api/iam/v2":                  true,
	"google.golang.org/api/iamcredentials/v1":       true,
	"google.golang.org/api/cloudresourcemanager/v3": true,
}

// callee returns the function or method call calls statically (the generic
// origin of an instance), or nil.
func callee(info *types.Info, call *ast.CallExpr) *types.Func {
	fn, _ := typeutil.Callee(info, call).(*types.Func)
	if fn == nil {
		return nil
	}
	return fn.Origin()
}

// pkgPath is the path of fn's package ("" for none).
func pkgPath(fn *types.Func) string {
	if fn == nil || fn.Pkg() == nil {
		return ""
	}
	return fn.Pkg().Path()
}

// isMethod reports whether fn is a method (of a concrete type or an
// interface).
func isMethod(fn *types.Func) bool {
	return fn != nil && fn.Signature().Recv() != nil
}

// isCloudMethod reports whether fn is a method named name of a Google Cloud
// Go client (cloud.google.com/go or google.golang.org/api): the IAM methods
// are mixed into many clients.
func isCloudMethod(fn *types.Func, names ...string) bool {
	if !isMethod(fn) {
		return false
	}
	p := pkgPath(fn)
	if !strings.HasPrefix(p, "cloud.google.com/go/") && !strings.HasPrefix(p, "google.golang.org/api/") {
		return false
	}
	for _, n := range names {
		if fn.Name() == n {
			return true
		}
	}
	return false
}

// isIAMCall reports whether fn is a method of an IAM API client: GAPIC
// (gRPC or REST), its generated stubs, or a discovery service or call.
func isIAMCall(fn *types.Func) bool {
	if !isMethod(fn) {
		return false
	}
	p := pkgPath(fn)
	return gapicPkgs[p] || discoveryPkgs[p] || gapicPkgs[strings.TrimSuffix(p, "/iampb")] ||
		p == "cloud.google.com/go/iam/apiv1/iampb" || p == "google.golang.org/api/cloudresourcemanager/v1"
}

// isIamretry reports whether fn is the iamretry function or method
// pkg.name (recv the receiver's type name, "" for a function).
func isIamretry(fn *types.Func, pkg, recv, name string) bool {
	if fn == nil || pkgPath(fn) != pkg || fn.Name() != name {
		return false
	}
	r := fn.Signature().Recv()
	if recv == "" {
		return r == nil
	}
	if r == nil {
		return false
	}
	t := r.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Name() == recv
}

// isDo reports whether fn is (*interceptor.Retrier).Do.
func isDo(fn *types.Func) bool { return isIamretry(fn, interceptorPkg, "Retrier", "Do") }

// isOwner reports whether fn owns the retries of what it runs: Retrier.Do,
// WaitVisible, Transact, or an Updater's Update.
func isOwner(fn *types.Func) bool {
	return isDo(fn) ||
		isIamretry(fn, interceptorPkg, "", "WaitVisible") ||
		isIamretry(fn, interceptorPkg, "", "Transact") ||
		isIamretry(fn, policyPkg, "Updater", "Update") ||
		isIamretry(fn, rolePkg, "Updater", "Update") ||
		isIamretry(fn, denyPkg, "Updater", "Update")
}

// ctorKind tells an IAM client constructor's kind: "grpc" for a GAPIC gRPC
// constructor, "rest" for a GAPIC REST one or a discovery NewService, "".
func ctorKind(fn *types.Func) string {
	if fn == nil || isMethod(fn) {
		return ""
	}
	p, n := pkgPath(fn), fn.Name()
	switch {
	case discoveryPkgs[p] && n == "NewService":
		return "rest"
	case gapicPkgs[p] && strings.HasPrefix(n, "New") && strings.HasSuffix(n, "RESTClient"):
		return "rest"
	case gapicPkgs[p] && strings.HasPrefix(n, "New") && strings.HasSuffix(n, "Client"):
		return "grpc"
	}
	return ""
}

// importsInterceptor reports whether the package imports iamretry's
// interceptor.
func importsInterceptor(pkg *types.Package) bool {
	for _, p := range pkg.Imports() {
		if p.Path() == interceptorPkg {
			return true
		}
	}
	return false
}

// report reports at n unless the line of n ends with
// "//iamretryvet:ignore NAME ..." naming this analyzer.
func report(pass *analysis.Pass, n ast.Node, format string, args ...any) {
	pos := n.Pos()
	line := pass.Fset.Position(pos).Line
	for _, f := range pass.Files {
		if pos < f.FileStart || pos >= f.FileEnd {
			continue
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if pass.Fset.Position(c.Slash).Line != line {
					continue
				}
				fields := strings.Fields(strings.TrimPrefix(c.Text, "//iamretryvet:ignore"))
				if strings.HasPrefix(c.Text, "//iamretryvet:ignore ") && len(fields) > 0 && fields[0] == pass.Analyzer.Name {
					return
				}
			}
		}
	}
	pass.ReportRangef(n, format, args...)
}

// funcBodies calls f with every top-level function body of the package
// (function and method declarations, and function literals outside them),
// and the stack leading to it.
func funcBodies(pass *analysis.Pass, f func(body *ast.BlockStmt)) {
	for _, file := range pass.Files {
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				if n.Body != nil {
					f(n.Body)
				}
				return false
			case *ast.FuncLit:
				f(n.Body)
				return false
			}
			return true
		})
	}
}

// inspectShallow walks n, not descending into function literals.
func inspectShallow(n ast.Node, f func(ast.Node) bool) {
	ast.Inspect(n, func(m ast.Node) bool {
		if _, ok := m.(*ast.FuncLit); ok && m != n {
			return false
		}
		return f(m)
	})
}

// localVar returns the variable id refers to when it is declared inside
// body, else nil.
func localVar(info *types.Info, body ast.Node, e ast.Expr) *types.Var {
	id, ok := ast.Unparen(e).(*ast.Ident)
	if !ok {
		return nil
	}
	v, _ := info.ObjectOf(id).(*types.Var)
	if v == nil || v.Pos() < body.Pos() || v.Pos() >= body.End() {
		return nil
	}
	return v
}

// rootVar is the variable at the root of a selector, index or star
// expression (x in x.f.g, x[i], *x), else nil.
func rootVar(info *types.Info, e ast.Expr) *types.Var {
	for {
		switch x := ast.Unparen(e).(type) {
		case *ast.SelectorExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.Ident:
			v, _ := info.ObjectOf(x).(*types.Var)
			return v
		default:
			return nil
		}
	}
}

// assigned is one assignment to a variable (or to a field of it) in a body.
type assigned struct {
	lhs ast.Expr // the variable, or the field (x.f) assigned
	rhs ast.Expr // the value, or the call whose results are assigned
}

// assignments returns every assignment in body to v or to a part of v.
func assignments(info *types.Info, body ast.Node, v *types.Var) []assigned {
	var out []assigned
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				if rootVar(info, l) != v {
					continue
				}
				if len(n.Lhs) == len(n.Rhs) {
					out = append(out, assigned{l, n.Rhs[i]})
				} else if len(n.Rhs) == 1 {
					out = append(out, assigned{l, n.Rhs[0]})
				}
			}
		case *ast.ValueSpec:
			for i, id := range n.Names {
				if info.Defs[id] != v {
					continue
				}
				if len(n.Names) == len(n.Values) {
					out = append(out, assigned{id, n.Values[i]})
				} else if len(n.Values) == 1 {
					out = append(out, assigned{id, n.Values[0]})
				}
			}
		}
		return true
	})
	return out
}

// reaches reports whether pred holds for a node of e, or of any value
// assigned (in body) to a local variable e mentions, followed transitively.
func reaches(info *types.Info, body ast.Node, e ast.Node, pred func(ast.Node) bool) bool {
	seen := map[*types.Var]bool{}
	var walk func(n ast.Node) bool
	walk = func(n ast.Node) bool {
		found := false
		ast.Inspect(n, func(m ast.Node) bool {
			if found {
				return false
			}
			if pred(m) {
				found = true
				return false
			}
			if id, ok := m.(*ast.Ident); ok {
				if v := localVar(info, body, id); v != nil && !seen[v] {
					seen[v] = true
					for _, a := range assignments(info, body, v) {
						if walk(a.rhs) {
							found = true
							return false
						}
					}
				}
			}
			return true
		})
		return found
	}
	return walk(e)
}

// calls returns a predicate true of a call whose callee is matched by f.
func calls(info *types.Info, f func(*types.Func) bool) func(ast.Node) bool {
	return func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		return ok && f(callee(info, c))
	}
}

// isConst reports whether e is a constant expression.
func isConst(info *types.Info, e ast.Expr) bool {
	tv, ok := info.Types[e]
	return ok && tv.Value != nil
}

// isEmpty reports whether e is nil, "" or an empty byte slice literal.
func isEmpty(info *types.Info, e ast.Expr) bool {
	e = ast.Unparen(e)
	if tv, ok := info.Types[e]; ok {
		if tv.IsNil() {
			return true
		}
		if tv.Value != nil && tv.Value.Kind() == constant.String && constant.StringVal(tv.Value) == "" {
			return true
		}
	}
	switch x := e.(type) {
	case *ast.CompositeLit:
		return len(x.Elts) == 0
	case *ast.CallExpr: // []byte("") or []byte(nil)
		if tv, ok := info.Types[x.Fun]; ok && tv.IsType() && len(x.Args) == 1 {
			return isEmpty(info, x.Args[0])
		}
	}
	return false
}

// loops calls f with every for and range loop in body (function literals
// included), innermost last.
func loops(body ast.Node, f func(loop ast.Stmt, loopBody *ast.BlockStmt)) {
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ForStmt:
			f(n, n.Body)
		case *ast.RangeStmt:
			f(n, n.Body)
		}
		return true
	})
}

// shallowCalls returns the calls in the loop body for which match holds,
// outside function literals and nested loops.
func shallowCalls(info *types.Info, loopBody *ast.BlockStmt, match func(*types.Func) bool) []*ast.CallExpr {
	var out []*ast.CallExpr
	inspectShallow(loopBody, func(n ast.Node) bool {
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return false
		case *ast.CallExpr:
			if match(callee(info, n.(*ast.CallExpr))) {
				out = append(out, n.(*ast.CallExpr))
			}
		}
		return true
	})
	return out
}

// errVars returns the variables of body assigned (in whole or in part)
// from an expression that contains one of the calls.
func errVars(info *types.Info, body ast.Node, cs []*ast.CallExpr) map[*types.Var]bool {
	out := map[*types.Var]bool{}
	contains := func(e ast.Node) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			for _, c := range cs {
				if n == c {
					found = true
				}
			}
			return !found
		})
		return found
	}
	ast.Inspect(body, func(n ast.Node) bool {
		a, ok := n.(*ast.AssignStmt)
		if !ok {
			return true
		}
		for _, r := range a.Rhs {
			if !contains(r) {
				continue
			}
			for _, l := range a.Lhs {
				if v := rootVar(info, l); v != nil && types.Identical(v.Type(), types.Universe.Lookup("error").Type()) {
					out[v] = true
				}
			}
		}
		return true
	})
	return out
}

// mentions reports whether e mentions one of vars.
func mentions(info *types.Info, e ast.Node, vars map[*types.Var]bool) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok {
			if v, ok := info.Uses[id].(*types.Var); ok && vars[v] {
				found = true
			}
		}
		return !found
	})
	return found
}

// exits reports whether the statement list ends by leaving the loop it is
// in: return, break, goto, a labelled continue, or a call that does not
// return (panic, os.Exit, log.Fatal, t.Fatal).
func exits(info *types.Info, list []ast.Stmt) bool {
	if len(list) == 0 {
		return false
	}
	switch s := list[len(list)-1].(type) {
	case *ast.ReturnStmt:
		return true
	case *ast.BranchStmt:
		return s.Tok == token.BREAK || s.Tok == token.GOTO || (s.Tok == token.CONTINUE && s.Label != nil)
	case *ast.BlockStmt:
		return exits(info, s.List)
	case *ast.ExprStmt:
		if c, ok := s.X.(*ast.CallExpr); ok {
			if id, ok := ast.Unparen(c.Fun).(*ast.Ident); ok && id.Name == "panic" {
				return true
			}
			if fn := callee(info, c); fn != nil {
				switch n := fn.Name(); {
				case n == "Exit" && pkgPath(fn) == "os", strings.HasPrefix(n, "Fatal"), n == "FailNow", n == "Skip", n == "Skipf", n == "SkipNow":
					return true
				}
			}
		}
	case *ast.IfStmt:
		if s.Else != nil {
			var els []ast.Stmt
			switch e := s.Else.(type) {
			case *ast.BlockStmt:
				els = e.List
			case *ast.IfStmt:
				els = []ast.Stmt{e}
			}
			return exits(info, s.Body.List) && exits(info, els)
		}
	}
	return false
}

// retriesOnError reports whether a loop goes round again after one of the
// errs failed: the loop's condition tests it, a branch taken on the error
// falls through or continues, or a branch taken on success leaves the loop.
func retriesOnError(info *types.Info, loop ast.Stmt, body *ast.BlockStmt, errs map[*types.Var]bool) bool {
	if len(errs) == 0 {
		return false
	}
	if f, ok := loop.(*ast.ForStmt); ok && f.Cond != nil && mentions(info, f.Cond, errs) {
		return true
	}
	retries := false
	inspectShallow(body, func(n ast.Node) bool {
		if retries {
			return false
		}
		switch n.(type) {
		case *ast.ForStmt, *ast.RangeStmt:
			return false
		}
		s, ok := n.(*ast.IfStmt)
		if !ok || !mentions(info, s.Cond, errs) {
			return true
		}
		onSuccess := false // the body runs when the call succeeded
		if b, ok := ast.Unparen(s.Cond).(*ast.BinaryExpr); ok && b.Op == token.EQL {
			if tv, ok := info.Types[b.Y]; ok && tv.IsNil() {
				onSuccess = true
			}
		}
		if onSuccess {
			retries = exits(info, s.Body.List)
		} else {
			last := len(s.Body.List) - 1
			cont := last >= 0
			if cont {
				b, ok := s.Body.List[last].(*ast.BranchStmt)
				cont = ok && b.Tok == token.CONTINUE && b.Label == nil
			}
			retries = cont || !exits(info, s.Body.List)
		}
		return true
	})
	return retries
}

// rangeVarsIn reports whether any of the calls' arguments mentions a
// variable the loop steps through (a range loop's key or value, a for
// loop's variables declared in its init statement): a call made once per
// element is not a retry.
func rangeVarsIn(info *types.Info, loop ast.Stmt, cs []*ast.CallExpr) bool {
	vars := map[*types.Var]bool{}
	var ids []ast.Expr
	switch l := loop.(type) {
	case *ast.RangeStmt:
		ids = []ast.Expr{l.Key, l.Value}
	case *ast.ForStmt:
		if a, ok := l.Init.(*ast.AssignStmt); ok && a.Tok == token.DEFINE {
			ids = a.Lhs
		}
	}
	for _, e := range ids {
		if id, ok := e.(*ast.Ident); ok {
			if v, ok := info.ObjectOf(id).(*types.Var); ok {
				vars[v] = true
			}
		}
	}
	if len(vars) == 0 {
		return false
	}
	for _, c := range cs {
		for _, a := range c.Args {
			if mentions(info, a, vars) {
				return true
			}
		}
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && mentions(info, sel.X, vars) {
			return true
		}
	}
	return false
}

// funcArg returns the function literal (or the body of a same-package
// function named) passed as e, or nil.
func funcLitOf(e ast.Expr) *ast.FuncLit {
	f, _ := ast.Unparen(e).(*ast.FuncLit)
	return f
}

// typeutilCallee is typeutil.Callee: the object called, builtins included.
func typeutilCallee(info *types.Info, call *ast.CallExpr) types.Object {
	return typeutil.Callee(info, call)
}

const iamtestPkg = "github.com/iamretry/iamretry/iamtest"

// ofFake reports whether e (a client, or a constructor call) is built for
// a fake or an emulator: its options reach a method of an iamtest type
// (the Server's ClientOptions, RESTClientOptions or Conn) or
// option.WithoutAuthentication. Such a client is a test's: setting the
// fake up is not a mistake.
func ofFake(info *types.Info, body ast.Node, e ast.Node) bool {
	return reaches(info, body, e, calls(info, func(fn *types.Func) bool {
		return isMethod(fn) && pkgPath(fn) == iamtestPkg ||
			pkgPath(fn) == "google.golang.org/api/option" && fn.Name() == "WithoutAuthentication"
	}))
}

// receiver is the expression a method call is made on (x in x.M(...)),
// or nil.
func receiver(call *ast.CallExpr) ast.Expr {
	if sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr); ok {
		return sel.X
	}
	return nil
}

// isNamed reports whether t (or what it points to) is the named type
// pkg.name.
func isNamed(t types.Type, pkg, name string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == pkg && n.Obj().Name() == name
}
