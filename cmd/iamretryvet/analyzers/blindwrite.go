package analyzers

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/analysis"
)

// BlindWrite reports a SetIamPolicy call (a GAPIC client's, gRPC or REST,
// or a discovery client's SetIamPolicy(resource, req)) whose policy was
// built in that function from a literal without an etag from a read, or
// whose etag was cleared after the read: such a write overwrites whatever
// changed meanwhile. A policy of unknown provenance (a parameter, a field)
// is not reported, nor a write through a client of a fake or an emulator
// (setting it up; see UnwiredClient). The fix: policy.Updater.
var BlindWrite = &analysis.Analyzer{
	Name: "blindwrite",
	Doc:  "report SetIamPolicy of a policy built from a literal, or whose etag was cleared, instead of one read by GetIamPolicy",
	URL:  "https://pkg.go.dev/github.com/iamretry/iamretry/cmd/iamretryvet/analyzers#BlindWrite",
	Run:  runBlindWrite,
}

func runBlindWrite(pass *analysis.Pass) (any, error) {
	info := pass.TypesInfo
	funcBodies(pass, func(body *ast.BlockStmt) {
		ast.Inspect(body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || !isCloudMethod(callee(info, call), "SetIamPolicy") || len(call.Args) < 2 {
				return true
			}
			if recv := receiver(call); recv != nil && ofFake(info, body, recv) {
				return true
			}
			if why := blindPolicy(info, body, call.Args[1]); why != "" {
				report(pass, call, "SetIamPolicy writes a policy %s: it overwrites concurrent changes; read, change and write with the etag through policy.Updater", why)
			}
			return true
		})
	})
	return nil, nil
}

// blindPolicy returns why the request req writes a blind policy ("" when it
// does not, or cannot be told).
func blindPolicy(info *types.Info, body ast.Node, req ast.Expr) string {
	policy, _ := field(info, body, req, "Policy")
	if policy == nil {
		return ""
	}
	lit, etag, cleared := provenance(info, body, policy)
	switch {
	case cleared:
		return "whose etag was cleared after the read"
	case lit && (etag == nil || isEmpty(info, etag)):
		return "built from a literal, with no etag"
	}
	return ""
}

// field finds the value given to the named field of the struct (or
// pointer to struct) e: in e's composite literal, or in one assigned to
// the local variable e in body, or assigned to e.name. nil when unknown.
func field(info *types.Info, body ast.Node, e ast.Expr, name string) (ast.Expr, bool) {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok {
		e = ast.Unparen(u.X)
	}
	if lit, ok := e.(*ast.CompositeLit); ok {
		for _, el := range lit.Elts {
			if kv, ok := el.(*ast.KeyValueExpr); ok {
				if k, ok := kv.Key.(*ast.Ident); ok && k.Name == name {
					return kv.Value, true
				}
			}
		}
		return nil, true
	}
	v := localVar(info, body, e)
	if v == nil {
		return nil, false
	}
	var out ast.Expr
	for _, a := range assignments(info, body, v) {
		if sel, ok := a.lhs.(*ast.SelectorExpr); ok && sel.Sel.Name == name && rootVar(info, sel.X) == v {
			out = a.rhs
			continue
		}
		if _, ok := a.lhs.(*ast.Ident); ok {
			if f, _ := field(info, body, a.rhs, name); f != nil {
				out = f
			}
		}
	}
	return out, true
}

// provenance tells where the policy p comes from: lit when it is built from
// a composite literal in body (etag: the Etag it is given, nil for none);
// cleared when it was read but its etag set empty afterwards.
func provenance(info *types.Info, body ast.Node, p ast.Expr) (lit bool, etag ast.Expr, cleared bool) {
	p = ast.Unparen(p)
	if u, ok := p.(*ast.UnaryExpr); ok {
		p = ast.Unparen(u.X)
	}
	if _, ok := p.(*ast.CompositeLit); ok {
		if isNamed(info.TypeOf(p), "cloud.google.com/go/iam", "Policy") {
			// admin's iam.Policy wraps the proto: its provenance is the proto's.
			if in, _ := field(info, body, p, "InternalProto"); in != nil {
				return provenance(info, body, in)
			}
			return true, nil, false
		}
		etag, _ = field(info, body, p, "Etag")
		return true, etag, false
	}
	v := localVar(info, body, p)
	if v == nil {
		return false, nil, false
	}
	read := false
	for _, a := range assignments(info, body, v) {
		switch l := a.lhs.(type) {
		case *ast.Ident:
			rhs := ast.Unparen(a.rhs)
			if u, ok := rhs.(*ast.UnaryExpr); ok {
				rhs = ast.Unparen(u.X)
			}
			switch rhs.(type) {
			case *ast.CompositeLit:
				lit = true
				etag, _ = field(info, body, rhs, "Etag")
			case *ast.CallExpr:
				if b, ok := typeutilCallee(info, rhs.(*ast.CallExpr)).(*types.Builtin); ok && b.Name() == "new" {
					lit = true
				} else {
					read = true
				}
			}
		case *ast.SelectorExpr:
			if l.Sel.Name == "Etag" && rootVar(info, l.X) == v {
				if isEmpty(info, a.rhs) {
					cleared = read
					if lit {
						etag = nil
					}
				} else {
					etag, cleared = a.rhs, false
				}
			}
		}
	}
	return lit, etag, cleared
}
