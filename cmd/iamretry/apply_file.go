package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/google/cel-go/cel"
	yaml "go.yaml.in/yaml/v3"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// The apply file, YAML or JSON (JSON is read by the same parser, so both
// have one schema and errors carry lines in both):
//
//	resources:
//	  - resource: projects/my-project        # any name "iamretry policy" routes
//	    add:                                  # grants to ensure present
//	      - {role: roles/viewer, member: "user:alice@example.com"}
//	      - role: roles/storage.objectViewer
//	        member: "group:readers@example.com"
//	        condition: {title: until-2027, expression: 'request.time < timestamp("2027-01-01T00:00:00Z")'}
//	    remove:                               # grants to ensure absent
//	      - {role: roles/editor, member: "user:bob@example.com"}
//
//	    bindings:                             # authoritative per role and condition
//	      - {role: roles/run.admin, members: ["group:deployers@example.com"]}
//
// Keys: the top level has resources, roles and deny (apply_file_roles.go);
// a resource has resource, add, remove and bindings; a grant has role,
// member and condition; a binding role, members and condition; a condition
// has title, expression and description. Any other key is an error, so a
// typo is never ignored. Members not named are left alone.
var (
	fileKeys      = []string{"resources", "roles", "deny"}
	resourceKeys  = []string{"resource", "add", "remove", "bindings"}
	grantKeys     = []string{"role", "member", "condition"}
	bindingKeys   = []string{"role", "members", "condition"}
	conditionKeys = []string{"title", "expression", "description"}
)

// applyFile is a parsed and completely validated apply file.
type applyFile struct {
	name      string // as given to -f ("<stdin>" for -)
	resources []*applyResource
}

// applyResource is one resource of the file and the grants to converge.
type applyResource struct {
	line  int
	name  string // as written in the file
	key   string // the full resource name, //SERVICE/RELATIVE_NAME: the Updater's resource
	route route  // where its policy lives (routes.go)
	rel   string // the relative name sent to it
	add   []grant
	rm    []grant
	bind  []binding // authoritative: role and condition hold exactly these members

	kind int        // kindPolicy (the fields above), kindRole or kindDeny
	role *applyRole // kindRole: name is the role, key the same
	deny *applyDeny // kindDeny: name is the policy, key the same
}

// binding is one authoritative entry of a resource's bindings list.
type binding struct {
	line    int
	role    string
	members []string
	cond    *expr.Expr
}

// grant is one (role, member, condition) of an add or remove list.
type grant struct {
	line   int
	role   string
	member string
	cond   *expr.Expr
}

// mutation is the library's Mutation for g.
func (g grant) mutation(add bool) policy.Mutation {
	if add {
		return policy.AddConditionalBinding(g.role, g.member, g.cond)
	}
	return policy.RemoveConditionalBinding(g.role, g.member, g.cond)
}

// String is the grant as the plan and errors show it.
func (g grant) String() string {
	return g.role + conditionSuffix(g.cond) + "  " + g.member
}

// fileError is one mistake in the file, at a line (0: the file as a whole).
type fileError struct {
	line int
	msg  string
}

// fileErrors is every mistake found in a file: the command prints each as
// FILE:LINE: what is wrong, and sends nothing.
type fileErrors struct {
	file string
	errs []fileError
}

func (e *fileErrors) Error() string {
	var b strings.Builder
	for i, fe := range e.errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.file)
		if fe.line > 0 {
			b.WriteString(":" + strconv.Itoa(fe.line))
		}
		b.WriteString(": " + fe.msg)
	}
	return b.String()
}

// Bounds on what a file may cost: its size, and the grants it reaches
// through aliases (*anchor): a few kilobytes of aliases of aliased lists
// would otherwise expand to millions of grants (a "billion laughs").
const (
	maxApplyFileBytes     = 16 << 20
	maxApplyAliasedGrants = 10000
)

// fileParser walks the YAML node tree of an apply file, collecting every
// error with its line.
type fileParser struct {
	errs    []fileError
	aliased int  // grants reached through an alias so far
	tooMany bool // aliased passed maxApplyAliasedGrants: the walk stops
}

// expand counts a grant reached through an alias; it reports false (and
// records the error once) when the file's aliases expand too far.
func (p *fileParser) expand(line int) bool {
	p.aliased++
	if p.aliased <= maxApplyAliasedGrants {
		return true
	}
	if !p.tooMany {
		p.tooMany = true
		p.errorf(line, "the file's aliases (*anchor) expand to more than %d grants; write the grants out, or share fewer through aliases", maxApplyAliasedGrants)
	}
	return false
}

func (p *fileParser) errorf(line int, format string, args ...any) {
	p.errs = append(p.errs, fileError{line: line, msg: fmt.Sprintf(format, args...)})
}

// yamlLine matches the line yaml.v3 puts in its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseApplyFile reads and validates an apply file: its syntax, its keys,
// every resource (by the routes "iamretry policy" reaches, and for
// --transport rest by the REST adapters) and every grant (roles by the
// CLI's rule, members and conditions by the library's mutations, so the
// file refuses exactly what the Updater would). It returns every error at
// once, as *fileErrors.
func parseApplyFile(name string, r io.Reader, transport string) (*applyFile, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxApplyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if len(data) > maxApplyFileBytes {
		return nil, &fileErrors{file: name, errs: []fileError{{msg: fmt.Sprintf("the file is larger than %d MiB; split it into several files", maxApplyFileBytes>>20)}}}
	}
	p := &fileParser{}
	f := &applyFile{name: name}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case errors.Is(err, io.EOF):
		p.errorf(0, "the file is empty; it lists resources: see 'iamretry apply -h' for an example")
	case err != nil:
		msg := err.Error()
		line := 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = msg[len(m[0]):]
		}
		p.errorf(line, "not valid YAML or JSON: %s", strings.TrimPrefix(msg, "yaml: "))
	default:
		var extra yaml.Node
		if err := dec.Decode(&extra); err == nil {
			p.errorf(extra.Line, "a second YAML document; put every resource in the one resources list")
		} else if !errors.Is(err, io.EOF) {
			p.errorf(0, "after the first document: %v", err)
		}
		p.file(f, &doc, transport)
	}
	if len(p.errs) > 0 {
		slices.SortStableFunc(p.errs, func(a, b fileError) int { return a.line - b.line })
		return nil, &fileErrors{file: name, errs: p.errs}
	}
	return f, nil
}

// deref follows an alias (*anchor) to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "nothing"
		}
		return "the value " + strconv.Quote(n.Value)
	}
	return "something else"
}

// fields checks that n is a mapping with keys from allowed only, each once,
// and returns the value of each key given. what names the mapping for
// messages ("a grant").
func (p *fileParser) fields(n *yaml.Node, what string, allowed []string) map[string]*yaml.Node {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n.Line, "%s must be a mapping with keys %s; found %s", what, strings.Join(allowed, ", "), kindName(n))
		return nil
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		switch {
		case k.Kind != yaml.ScalarNode:
			p.errorf(k.Line, "%s has a key that is not a name", what)
		case !slices.Contains(allowed, k.Value):
			hint := ""
			if k.Value == "<<" {
				hint = "; merge keys (<<) are not supported, repeat the keys"
			}
			p.errorf(k.Line, "unknown key %q in %s (the keys are %s)%s", k.Value, what, strings.Join(allowed, ", "), hint)
		case out[k.Value] != nil:
			p.errorf(k.Line, "key %q given twice in %s", k.Value, what)
		default:
			out[k.Value] = v
		}
	}
	return out
}

// str returns the string value of a key; ok false (and an error recorded)
// when it is missing where required, or not a string.
func (p *fileParser) str(m map[string]*yaml.Node, key, what string, line int, required bool) (string, int, bool) {
	v, found := m[key]
	if !found {
		if required {
			p.errorf(line, "%s has no %s", what, key)
		}
		return "", line, !required
	}
	v = deref(v)
	if v.Kind != yaml.ScalarNode || v.ShortTag() == "!!null" {
		p.errorf(v.Line, "%s of %s must be a string; found %s", key, what, kindName(v))
		return "", v.Line, false
	}
	if v.ShortTag() != "!!str" {
		p.errorf(v.Line, "%s of %s must be a string; found %s (quote it)", key, what, kindName(v))
		return "", v.Line, false
	}
	return v.Value, v.Line, true
}

// list returns the items of a list-valued key (nil when absent).
func (p *fileParser) list(m map[string]*yaml.Node, key, what string) []*yaml.Node {
	v, found := m[key]
	if !found {
		return nil
	}
	v = deref(v)
	if v.Kind != yaml.SequenceNode {
		p.errorf(v.Line, "%s of %s must be a list; found %s", key, what, kindName(v))
		return nil
	}
	return v.Content
}

func (p *fileParser) file(f *applyFile, doc *yaml.Node, transport string) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.errorf(0, "the file is empty; it lists resources: see 'iamretry apply -h' for an example")
			return
		}
		root = root.Content[0]
	}
	top := p.fields(root, "the file", fileKeys)
	if top == nil {
		return
	}
	if top["resources"] == nil && top["roles"] == nil && top["deny"] == nil {
		p.errorf(deref(root).Line, "the file has no resources list (nor roles, nor deny)")
		return
	}
	for _, key := range []string{"resources", "roles", "deny"} {
		if v := top[key]; v != nil && deref(v).Kind == yaml.SequenceNode && len(deref(v).Content) == 0 {
			p.errorf(deref(v).Line, "the %s list is empty", key)
		}
	}
	seen := map[string]int{} // key -> line
	for _, list := range []struct {
		key   string
		parse func(*yaml.Node) (*applyResource, bool)
	}{{"roles", p.role}, {"deny", p.denyPolicy}} {
		for _, it := range p.list(top, list.key, "the file") {
			if p.tooMany {
				return
			}
			if it.Kind == yaml.AliasNode && !p.expand(deref(it).Line) {
				return
			}
			r, valid := list.parse(it)
			if r == nil {
				continue
			}
			if first, dup := seen[r.key]; dup {
				p.errorf(r.line, "%q is listed twice (first at line %d); list each once", r.name, first)
				continue
			}
			seen[r.key] = r.line
			if valid {
				f.resources = append(f.resources, r)
			}
		}
	}
	items := p.list(top, "resources", "the file")
	for _, it := range items {
		if p.tooMany {
			return
		}
		r, valid := p.resource(it, transport)
		if r == nil || r.key == "" {
			continue
		}
		k := sameResource(r)
		if first, dup := seen[k]; dup {
			p.errorf(r.line, "resource %q is listed twice (first at line %d); list each resource once", r.name, first)
			continue
		}
		seen[k] = r.line
		if valid {
			f.resources = append(f.resources, r)
		}
	}
}

// sameResource is r's key with the spellings of one resource made one: a
// service account's project, which IAM reads from the account ("-" is any
// project), is dropped.
func sameResource(r *applyResource) string {
	if matches("projects/*/serviceAccounts/*", r.rel) {
		_, id, _ := strings.Cut(strings.TrimPrefix(r.rel, "projects/"), "/serviceAccounts/")
		return "//" + r.route.host + "/projects/-/serviceAccounts/" + id
	}
	return r.key
}

// resource checks one resource of the list; it returns it with valid false
// when something in it is wrong (r.key is set when its name routes), and
// nil when it has no usable name.
func (p *fileParser) resource(n *yaml.Node, transport string) (r *applyResource, valid bool) {
	line := deref(n).Line
	viaAlias := n.Kind == yaml.AliasNode
	m := p.fields(n, "a resource", resourceKeys)
	if m == nil {
		return nil, false
	}
	name, nline, ok := p.str(m, "resource", "a resource", line, true)
	if !ok {
		return nil, false
	}
	r = &applyResource{line: line, name: name}
	valid = true
	rt, rel, err := resolve(name)
	if err != nil {
		p.errorf(nline, "%s", flagless(err))
		valid = false
	} else {
		r.route, r.rel = rt, rel
		r.key = "//" + rt.host + "/" + rel
		if why := projectsProblem(rel); why != "" {
			p.errorf(nline, "resource %q: %s", name, why)
			valid = false
		}
		if _, ok := restAdapters[rt.grpcService]; transport == transportREST && !ok {
			p.errorf(nline, "resource %q: --transport rest reaches %s (through cloudresourcemanager/v3 and iam/v1); use --transport grpc, the default, for this file", name, restKinds)
			valid = false
		}
	}
	what := fmt.Sprintf("resource %q", name)
	type key struct{ role, member, cond string }
	seen := map[key]int{}
	for _, list := range []struct {
		name string
		out  *[]grant
	}{{"add", &r.add}, {"remove", &r.rm}} {
		listAlias := m[list.name] != nil && m[list.name].Kind == yaml.AliasNode
		for _, it := range p.list(m, list.name, what) {
			if (viaAlias || listAlias || it.Kind == yaml.AliasNode) && !p.expand(deref(it).Line) {
				return r, false
			}
			g, ok := p.grant(it, list.name == "add", what)
			if !ok {
				valid = false
				continue
			}
			k := key{g.role, policy.CanonicalMember(g.member), conditionSuffix(g.cond)}
			if first, dup := seen[k]; dup {
				p.errorf(g.line, "%s: the grant of %s to %s is listed twice (first at line %d); list each grant once, in add or in remove",
					what, g.role+conditionSuffix(g.cond), g.member, first)
				valid = false
				continue
			}
			seen[k] = g.line
			*list.out = append(*list.out, g)
		}
	}
	owned := map[string]int{} // role and condition -> line of its bindings entry
	listAlias := m["bindings"] != nil && m["bindings"].Kind == yaml.AliasNode
	for _, it := range p.list(m, "bindings", what) {
		if (viaAlias || listAlias || it.Kind == yaml.AliasNode) && !p.expand(deref(it).Line) {
			return r, false
		}
		b, ok := p.binding(it, what)
		if !ok {
			valid = false
			continue
		}
		id := b.role + condKey(b.cond)
		if first, dup := owned[id]; dup {
			p.errorf(b.line, "%s: the binding of %s is listed twice in bindings (first at line %d); give each role and condition once", what, b.role+conditionSuffix(b.cond), first)
			valid = false
			continue
		}
		owned[id] = b.line
		r.bind = append(r.bind, b)
	}
	for _, list := range []struct {
		name string
		gs   []grant
	}{{"add", r.add}, {"remove", r.rm}} {
		for _, g := range list.gs {
			if bl, ok := owned[g.role+condKey(g.cond)]; ok {
				p.errorf(g.line, "%s: %s is owned by the bindings entry at line %d, which sets its members exactly; list %s there, not under %s", what, g.role+conditionSuffix(g.cond), bl, g.member, list.name)
				valid = false
			}
		}
	}
	_, hasAdd := m["add"]
	_, hasRm := m["remove"]
	_, hasBind := m["bindings"]
	if !hasAdd && !hasRm && !hasBind {
		p.errorf(line, "%s has none of add, remove and bindings; say what to ensure", what)
		valid = false
	}
	return r, valid
}

// condKey is a condition as the identity of a binding: the same role with
// another condition is another binding.
func condKey(c *expr.Expr) string {
	if c == nil {
		return ""
	}
	return "\x00" + c.GetTitle() + "\x00" + c.GetExpression() + "\x00" + c.GetDescription()
}

// binding checks one entry of a bindings list: a role, its members (each a
// member the library accepts, none deleted:, none twice) and an optional
// condition.
func (p *fileParser) binding(n *yaml.Node, what string) (binding, bool) {
	line := deref(n).Line
	kind := "a binding of " + what
	m := p.fields(n, kind, bindingKeys)
	if m == nil {
		return binding{}, false
	}
	b := binding{line: line}
	role, rline, ok := p.str(m, "role", kind, line, true)
	if ok {
		if err := checkRole(role); err != nil {
			p.errorf(rline, "%s", flagless(err))
			ok = false
		} else if why := projectsProblem(role); why != "" {
			p.errorf(rline, "role %q: %s", role, why)
			ok = false
		}
	}
	if _, found := m["members"]; !found {
		p.errorf(line, "%s has no members list; give members: [] to remove the binding", kind)
		ok = false
	}
	seen := map[string]int{}
	for _, it := range p.list(m, "members", kind) {
		it = deref(it)
		if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			p.errorf(it.Line, "a member of %s must be a string; found %s", kind, kindName(it))
			ok = false
			continue
		}
		member := it.Value
		if err := checkMember(member); err != nil {
			p.errorf(it.Line, "%s", flagless(err))
			ok = false
			continue
		}
		if strings.HasPrefix(member, "deleted:") {
			p.errorf(it.Line, "member %q: a deleted principal cannot be granted a role; bindings leave the deleted members of the live policy in place, so leave it out", member)
			ok = false
			continue
		}
		c := policy.CanonicalMember(member)
		if first, dup := seen[c]; dup {
			p.errorf(it.Line, "%s: member %s is listed twice (first at line %d)", kind, member, first)
			ok = false
			continue
		}
		seen[c] = it.Line
		b.members = append(b.members, member)
	}
	if c, found := m["condition"]; found {
		cond, cok := p.condition(c, "the condition of "+kind)
		if !cok {
			return b, false
		}
		b.cond = cond
	}
	if !ok {
		return b, false
	}
	b.role = role
	for _, member := range b.members {
		if _, err := policy.AddConditionalBinding(role, member, b.cond)(&iampb.Policy{}); err != nil {
			p.errorf(line, "%s", strings.TrimPrefix(status.Convert(err).Message(), "iamretry/policy: "))
			return b, false
		}
	}
	return b, true
}

// condition checks a condition mapping: title and expression (CEL) given,
// description optional.
func (p *fileParser) condition(c *yaml.Node, what string) (*expr.Expr, bool) {
	cm := p.fields(c, what, conditionKeys)
	if cm == nil {
		return nil, false
	}
	cwhat := "the condition"
	cline := deref(c).Line
	title, _, ok1 := p.str(cm, "title", cwhat, cline, true)
	exprText, eline, ok2 := p.str(cm, "expression", cwhat, cline, true)
	desc, _, ok3 := p.str(cm, "description", cwhat, cline, false)
	if !ok1 || !ok2 || !ok3 {
		return nil, false
	}
	if why := celSyntax(exprText); why != "" {
		p.errorf(eline, "the condition's expression is not CEL: %s", why)
		return nil, false
	}
	return &expr.Expr{Title: title, Expression: exprText, Description: desc}, true
}

func (p *fileParser) grant(n *yaml.Node, add bool, what string) (grant, bool) {
	line := deref(n).Line
	kind := "a grant to add"
	if !add {
		kind = "a grant to remove"
	}
	m := p.fields(n, kind+" of "+what, grantKeys)
	if m == nil {
		return grant{}, false
	}
	g := grant{line: line}
	role, rline, okRole := p.str(m, "role", kind+" of "+what, line, true)
	member, mline, okMember := p.str(m, "member", kind+" of "+what, line, true)
	ok := okRole && okMember
	if okRole {
		if err := checkRole(role); err != nil {
			p.errorf(rline, "%s", flagless(err))
			ok = false
		} else if why := projectsProblem(role); why != "" {
			p.errorf(rline, "role %q: %s", role, why)
			ok = false
		}
	}
	if okMember {
		if err := checkMember(member); err != nil {
			p.errorf(mline, "%s", flagless(err))
			ok = false
		} else if add && strings.HasPrefix(member, "deleted:") {
			p.errorf(mline, "member %q: a deleted principal cannot be granted a role (IAM refuses it); grant the principal that replaces it, or list this one under remove to clean it up", member)
			ok = false
		}
	}
	if c, found := m["condition"]; found {
		cond, cok := p.condition(c, "the condition of "+kind+" of "+what)
		if !cok {
			return g, false
		}
		g.cond = cond
	}
	if !ok {
		return g, false
	}
	g.role, g.member = role, member
	// The library's own check of the whole grant (role, member, condition):
	// the file refuses exactly what the Updater's mutation would refuse.
	if _, err := g.mutation(add)(&iampb.Policy{}); err != nil {
		p.errorf(line, "%s", strings.TrimPrefix(status.Convert(err).Message(), "iamretry/policy: "))
		return g, false
	}
	return g, true
}

// flagless rewords a flag's usage error for a file: `--member "x": ...`
// becomes `member "x": ...`.
func flagless(err error) string {
	return strings.TrimPrefix(err.Error(), "--")
}

// celEnv parses condition expressions: syntax only, as IAM's functions and
// variables (request.time, resource.name, ...) are IAM's to check.
var celEnv = sync.OnceValues(func() (*cel.Env, error) { return cel.NewEnv() })

// celSyntax is what is wrong with the syntax of a CEL expression, "" when
// nothing: IAM refuses such a condition, and the other resources of the file
// would converge while this one fails.
func celSyntax(text string) string {
	env, err := celEnv()
	if err != nil {
		return err.Error()
	}
	_, iss := env.Parse(text)
	if iss == nil || iss.Err() == nil {
		return ""
	}
	first, _, _ := strings.Cut(iss.Err().Error(), "\n")
	first = strings.TrimPrefix(first, "ERROR: ")
	if rest, ok := strings.CutPrefix(first, "<input>:"); ok {
		first = "at " + rest
	}
	return first
}

// projectID is the form of a project ID
// (https://cloud.google.com/resource-manager/docs/creating-managing-projects#before_you_begin):
// 6 to 30 lowercase letters, digits and hyphens, starting with a letter,
// not ending with a hyphen.
var projectID = regexp.MustCompile(`^[a-z][a-z0-9-]{4,28}[a-z0-9]$`)

// projectsProblem says why a project named in name (".../projects/X/...")
// cannot exist, "" when each could: X is a project ID, a domain-scoped one
// (example.com:my-project), a project number, or "-" (any project).
func projectsProblem(name string) string {
	parts := strings.Split(name, "/")
	for i := 0; i+1 < len(parts); i += 2 {
		if parts[i] != "projects" {
			continue
		}
		id := parts[i+1]
		if id == "-" || strings.Trim(id, "0123456789") == "" {
			continue
		}
		bare := id
		if domain, rest, scoped := strings.Cut(id, ":"); scoped {
			if !strings.Contains(domain, ".") || strings.ContainsAny(domain, "@") {
				return fmt.Sprintf("%q cannot be a project: a domain-scoped project ID is DOMAIN:ID, such as example.com:my-project", id)
			}
			bare = rest
		}
		if !projectID.MatchString(bare) {
			return fmt.Sprintf("%q cannot be a project: a project ID is 6 to 30 lowercase letters, digits and hyphens, starting with a letter and not ending with a hyphen (or example.com:my-project), and a project number is digits", id)
		}
	}
	return ""
}
