package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// NestedOwner reports Retrier.Do, WaitVisible, Transact or an Updater's
// Update called inside the function given to Retrier.Do or to a Transact's
// Read or Write, directly or through other functions, of the same package
// or of packages it imports (known by analysis facts). Each owner retries
// what it runs, so the attempts multiply and the outer deadline is
// overrun. The fix: one owner per call; call the inner owner outside, or
// the plain client inside.
var NestedOwner = &analysis.Analyzer{
	Name:      "nestedowner",
	Doc:       "report a retry owner (Retrier.Do, WaitVisible, Transact, Updater.Update) nested in another",
	URL:       "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#NestedOwner",
	Run:       runNestedOwner,
	FactTypes: []analysis.Fact{new(callsOwner)},
}

// UnsafeRetry reports, in a function given to Retrier.Do, a call of
// CreateServiceAccountKey or another Create of the admin client: Do
// replays it after an ambiguous failure, and each replay may create one
// more (a key minted twice). The fix: call it outside Do, once.
var UnsafeRetry = &analysis.Analyzer{
	Name: "unsaferetry",
	Doc:  "report Create calls of the IAM admin client inside Retrier.Do",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#UnsafeRetry",
	Run:  runUnsafeRetry,
}

// callsOwner is the fact that a function calls a retry owner (named by
// Owner), directly or through other functions of its package.
type callsOwner struct{ Owner string }

func (*callsOwner) AFact()           {}
func (f *callsOwner) String() string { return "callsOwner(" + f.Owner + ")" }

// ownedFuncs calls f with the body of each function literal the package
// hands to an owner to run (Do's f, Transact's Read and Write), and the
// expression of each function named instead.
func ownedFuncs(pass *analysis.Pass, f func(owner *ast.CallExpr, fn ast.Expr)) {
	info := pass.TypesInfo
	funcBodies(pass, func(body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			c := callee(info, call)
			switch {
			case isDo(c) && len(call.Args) >= 3:
				f(call, call.Args[2])
			case isIamretry(c, interceptorPkg, "", "Transact") && len(call.Args) >= 3:
				lit := ast.Unparen(call.Args[2])
				if u, ok := lit.(*ast.UnaryExpr); ok {
					lit = u.X
				}
				if v := localVar(info, body, lit); v != nil {
					for _, a := range assignments(info, body, v) {
						if _, ok := a.lhs.(*ast.Ident); ok {
							lit = a.rhs
						}
					}
				}
				for _, name := range []string{"Read", "Write"} {
					if e, _ := field(info, body, lit, name); e != nil {
						f(call, e)
					}
				}
			}
			return true
		})
	})
}

func ownerName(fn *types.Func) string {
	if r := fn.Signature().Recv(); r != nil {
		t := r.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			return fn.Pkg().Name() + "." + n.Obj().Name() + "." + fn.Name()
		}
	}
	return fn.Pkg().Name() + "." + fn.Name()
}

func runNestedOwner(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	// Facts: which functions of the package call an owner, to a fixpoint.
	decls := map[*types.Func]*ast.FuncDecl{}
	for _, file := range pass.Files {
		for _, d := range file.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
					decls[fn] = fd
				}
			}
		}
	}
	if !importsOwner(pass.Pkg) && len(pass.AllObjectFacts()) == 0 {
		return nil, nil // nothing here can reach an owner
	}
	owns := map[*types.Func]string{}
	ownerOf := func(fn *types.Func) string {
		if fn == nil {
			return ""
		}
		if isOwner(fn) {
			return ownerName(fn)
		}
		if o, ok := owns[fn]; ok {
			return o
		}
		var fact callsOwner
		if fn.Pkg() != pass.Pkg && pass.ImportObjectFact(fn, &fact) {
			return fact.Owner
		}
		return ""
	}
	for changed := true; changed; {
		changed = false
		for fn, fd := range decls {
			if _, ok := owns[fn]; ok {
				continue
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if c, ok := n.(*ast.CallExpr); ok {
					if o := ownerOf(callee(info, c)); o != "" {
						if _, ok := owns[fn]; !ok {
							owns[fn], changed = o, true
						}
					}
				}
				return true
			})
		}
	}
	for fn, o := range owns {
		pass.ExportObjectFact(fn, &callsOwner{Owner: o})
	}

	ownedFuncs(pass, func(outer *ast.CallExpr, e ast.Expr) {
		outerName := ownerName(callee(info, outer))
		if lit := funcLitOf(e); lit != nil {
			ast.Inspect(lit.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fn := callee(info, c)
				switch {
				case fn == nil:
				case isOwner(fn):
					report(pass, c, "%s inside the function given to %s: both retry, so attempts multiply and the outer deadline is overrun; keep one owner per call (call the client directly here, or %[1]s outside)", ownerName(fn), outerName)
				case ownerOf(fn) != "":
					report(pass, c, "%s calls %s, inside the function given to %s: both retry, so attempts multiply and the outer deadline is overrun; keep one owner per call", fn.Name(), ownerOf(fn), outerName)
				}
				return true
			})
			return
		}
		var fn *types.Func
		switch x := ast.Unparen(e).(type) {
		case *ast.Ident:
			fn, _ = info.Uses[x].(*types.Func)
		case *ast.SelectorExpr:
			fn, _ = info.Uses[x.Sel].(*types.Func)
		}
		if o := ownerOf(fn); o != "" {
			report(pass, e, "%s calls %s, and is given to %s: both retry, so attempts multiply and the outer deadline is overrun; keep one owner per call", fn.Name(), o, outerName)
		}
	})
	return nil, nil
}

func runUnsafeRetry(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	ownedFuncs(pass, func(outer *ast.CallExpr, e ast.Expr) {
		lit := funcLitOf(e)
		if lit == nil || !isDo(callee(info, outer)) {
			return
		}
		ast.Inspect(lit.Body, func(n ast.Node) bool {
			c, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if fn := callee(info, c); isMethod(fn) && pkgPath(fn) == adminPkg && len(fn.Name()) > 6 && fn.Name()[:6] == "Create" {
				report(pass, c, "Retrier.Do replays %s after an ambiguous failure, and each replay may create one more: call it once, outside Do (the interceptor never replays it)", fn.Name())
			}
			return true
		})
	})
	return nil, nil
}

// importsOwner reports whether pkg is or imports a package of iamretry's
// owners (interceptor, policy, role, deny).
func importsOwner(pkg *types.Package) bool {
	is := func(p string) bool { return p == interceptorPkg || p == policyPkg || p == rolePkg || p == denyPkg }
	if is(pkg.Path()) {
		return true
	}
	for _, p := range pkg.Imports() {
		if is(p.Path()) {
			return true
		}
	}
	return false
}
