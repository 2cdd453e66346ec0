package main

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv2"
	iampb2 "cloud.google.com/go/iam/apiv2/iampb"
	gax "github.com/googleapis/gax-go/v2"
	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
	"github.com/iamretry/iamretry/interceptor/role"
)

// The apply file's roles and deny lists (apply_file.go has resources):
//
//	roles:
//	  - role: projects/my-project/roles/deployer
//	    title: Deployer                 # optional; so are description and stage
//	    create_if_absent: true          # CreateRole with these fields; default false
//	    add_permissions: [run.services.update]
//	    remove_permissions: [run.services.delete]
//	    # or permissions: [...], authoritative (what export writes)
//	deny:
//	  - policy: policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/no-key-creation
//	    create_if_absent: true
//	    add_rules:
//	      - denied_principals: [principalSet://goog/public:all]
//	        exception_principals: [principalSet://goog/group/admins@example.com]
//	        denied_permissions: [iam.googleapis.com/serviceAccountKeys.create]
//	        exception_permissions: []
//	        denial_condition: {title: ..., expression: ...}   # optional
//	        description: ...                                  # optional
//	    remove_rules: []                # same shape as add_rules
var (
	roleKeys     = []string{"role", "title", "description", "stage", "create_if_absent", "add_permissions", "remove_permissions", "permissions"}
	denyKeys     = []string{"policy", "create_if_absent", "add_rules", "remove_rules"}
	denyRuleKeys = []string{"denied_principals", "exception_principals", "denied_permissions", "exception_permissions", "denial_condition", "description"}
)

// applyRole is one entry of the file's roles list: a custom role and what
// to change of it, through the library's role Updater.
type applyRole struct {
	title, description *string
	stage              *adminpb.Role_RoleLaunchStage
	createIfAbsent     bool
	add, remove        []string
	permissions        []string // authoritative, when authoritative
	authoritative      bool
}

// applyDeny is one entry of the file's deny list: a deny policy and the
// rules to ensure present and absent, through the library's deny Updater.
type applyDeny struct {
	attachment     string // the attachment point: deny changes of one run one at a time
	createIfAbsent bool
	add, remove    []deny.Rule
}

// Kinds of the entries of a file.
const (
	kindPolicy = iota // resources: an allow policy
	kindRole          // roles: a custom role
	kindDeny          // deny: a deny policy
)

// boolean returns the value of a boolean key (false when absent).
func (p *fileParser) boolean(m map[string]*yaml.Node, key, what string) (bool, bool) {
	v, found := m[key]
	if !found {
		return false, true
	}
	v = deref(v)
	if v.Kind != yaml.ScalarNode || v.ShortTag() != "!!bool" {
		p.errorf(v.Line, "%s of %s must be true or false; found %s", key, what, kindName(v))
		return false, false
	}
	return v.Value == "true", true
}

// strings returns the strings of a list-valued key; ok false (errors
// recorded) when an item is not a string.
func (p *fileParser) strs(m map[string]*yaml.Node, key, what string) ([]string, bool) {
	ok := true
	var out []string
	for _, it := range p.list(m, key, what) {
		it = deref(it)
		if it.Kind != yaml.ScalarNode || it.ShortTag() != "!!str" {
			p.errorf(it.Line, "an item of %s of %s must be a string; found %s", key, what, kindName(it))
			ok = false
			continue
		}
		out = append(out, it.Value)
	}
	return out, ok
}

// role checks one entry of the roles list: the name of a custom role, and
// each change by the library's own role changes (run on an empty role).
func (p *fileParser) role(n *yaml.Node) (*applyResource, bool) {
	line := deref(n).Line
	m := p.fields(n, "a role", roleKeys)
	if m == nil {
		return nil, false
	}
	name, nline, ok := p.str(m, "role", "a role", line, true)
	if !ok {
		return nil, false
	}
	what := fmt.Sprintf("role %q", name)
	r := &applyResource{line: line, name: name, key: name, kind: kindRole, role: &applyRole{}}
	ar := r.role
	valid := true
	if err := checkRole(name); err != nil {
		p.errorf(nline, "%s", flagless(err))
		valid = false
	} else if strings.HasPrefix(name, "roles/") {
		p.errorf(nline, "%s: %s", what, role.ErrPredefined)
		valid = false
	} else if why := projectsProblem(name); why != "" {
		p.errorf(nline, "%s: %s", what, why)
		valid = false
	}
	for _, f := range []struct {
		key string
		p   **string
	}{{"title", &ar.title}, {"description", &ar.description}} {
		if _, found := m[f.key]; found {
			v, _, ok := p.str(m, f.key, what, line, false)
			if !ok {
				valid = false
				continue
			}
			*f.p = &v
		}
	}
	if _, found := m["stage"]; found {
		v, sline, ok := p.str(m, "stage", what, line, false)
		if ok {
			if s, known := adminpb.Role_RoleLaunchStage_value[v]; known {
				stage := adminpb.Role_RoleLaunchStage(s)
				ar.stage = &stage
			} else {
				var names []string
				for k := range adminpb.Role_RoleLaunchStage_value {
					names = append(names, k)
				}
				slices.Sort(names)
				p.errorf(sline, "%s: stage %q: want one of %s", what, v, strings.Join(names, ", "))
				valid = false
			}
		} else {
			valid = false
		}
	}
	var okb bool
	if ar.createIfAbsent, okb = p.boolean(m, "create_if_absent", what); !okb {
		valid = false
	}
	var ok1, ok2, ok3 bool
	ar.add, ok1 = p.strs(m, "add_permissions", what)
	ar.remove, ok2 = p.strs(m, "remove_permissions", what)
	ar.permissions, ok3 = p.strs(m, "permissions", what)
	_, ar.authoritative = m["permissions"]
	valid = valid && ok1 && ok2 && ok3
	if ar.authoritative && (m["add_permissions"] != nil || m["remove_permissions"] != nil) {
		p.errorf(line, "%s: permissions sets the role's permissions exactly; give it, or add_permissions and remove_permissions, not both", what)
		valid = false
	}
	for _, perm := range ar.add {
		if slices.Contains(ar.remove, perm) {
			p.errorf(line, "%s: permission %q is in both add_permissions and remove_permissions", what, perm)
			valid = false
		}
	}
	// The library's own checks of each change (run on an empty role).
	for _, c := range ar.changes() {
		if _, err := c(&adminpb.Role{}); err != nil {
			p.errorf(line, "%s: %s", what, status.Convert(err).Message())
			valid = false
		}
	}
	if !ar.authoritative && ar.title == nil && ar.description == nil && ar.stage == nil && len(ar.add) == 0 && len(ar.remove) == 0 && !ar.createIfAbsent {
		p.errorf(line, "%s has nothing to change; give add_permissions, remove_permissions, permissions, title, description or stage", what)
		valid = false
	}
	return r, valid
}

// changes are the role's changes, as the library's role Updater runs them.
func (ar *applyRole) changes() []role.Change {
	var cs []role.Change
	if ar.title != nil {
		cs = append(cs, role.SetTitle(*ar.title))
	}
	if ar.description != nil {
		cs = append(cs, role.SetDescription(*ar.description))
	}
	if ar.stage != nil {
		cs = append(cs, role.SetStage(*ar.stage))
	}
	if len(ar.add) > 0 {
		cs = append(cs, role.AddPermissions(ar.add...))
	}
	if len(ar.remove) > 0 {
		cs = append(cs, role.RemovePermissions(ar.remove...))
	}
	if ar.authoritative {
		want := ar.permissions
		cs = append(cs, role.AddPermissions(want...), func(r *adminpb.Role) (bool, error) {
			var drop []string
			for _, have := range r.GetIncludedPermissions() {
				if !slices.Contains(want, have) {
					drop = append(drop, have)
				}
			}
			if len(drop) == 0 {
				return false, nil
			}
			return role.RemovePermissions(drop...)(r)
		})
	}
	return cs
}

// denyPolicy checks one entry of the deny list: its name and rules, by the
// library's deny Updater (which refuses malformed names, principals and
// permissions before any call, from its tables).
func (p *fileParser) denyPolicy(n *yaml.Node) (*applyResource, bool) {
	line := deref(n).Line
	m := p.fields(n, "a deny policy", denyKeys)
	if m == nil {
		return nil, false
	}
	name, nline, ok := p.str(m, "policy", "a deny policy", line, true)
	if !ok {
		return nil, false
	}
	what := fmt.Sprintf("deny policy %q", name)
	r := &applyResource{line: line, name: name, key: name, kind: kindDeny, deny: &applyDeny{}}
	ad := r.deny
	valid, nameOK := true, true
	if a, ok := denyAttachment(name); ok {
		ad.attachment = a
		if dec, err := url.PathUnescape(a); err == nil {
			if why := projectsProblem(strings.TrimPrefix(dec, "cloudresourcemanager.googleapis.com/")); why != "" {
				p.errorf(nline, "%s: %s", what, why)
				valid = false
			}
		}
	} else {
		p.errorf(nline, "%s: a deny policy is policies/ATTACHMENT_POINT/denypolicies/ID, the attachment point URL-encoded: policies/cloudresourcemanager.googleapis.com%%2Fprojects%%2Fmy-project/denypolicies/my-policy", what)
		valid, nameOK = false, false
	}
	var okb bool
	if ad.createIfAbsent, okb = p.boolean(m, "create_if_absent", what); !okb {
		valid = false
	}
	var changes []deny.Change
	for _, list := range []struct {
		key string
		out *[]deny.Rule
		mk  func(deny.Rule) deny.Change
	}{{"add_rules", &ad.add, deny.AddRule}, {"remove_rules", &ad.remove, deny.RemoveRule}} {
		for _, it := range p.list(m, list.key, what) {
			rule, rline, ok := p.denyRule(it, what)
			if !ok {
				valid = false
				continue
			}
			// The library's own check of the rule: Update refuses a
			// malformed one before any call.
			if err := denyCheck(name, list.mk(rule)); err != nil && nameOK {
				msg := status.Convert(err).Message()
				if i := strings.Index(msg, "Rule: "); i >= 0 { // after "...: change 1 of 1: AddRule: "
					msg = msg[i+len("Rule: "):]
				}
				p.errorf(rline, "%s: %s", what, msg)
				valid = false
				continue
			}
			*list.out = append(*list.out, rule)
			changes = append(changes, list.mk(rule))
		}
	}
	if valid && len(changes) > 0 {
		if err := denyCheck(name, changes...); err != nil {
			p.errorf(nline, "%s", status.Convert(err).Message())
			valid = false
		}
	}
	return r, valid
}

// denyRule reads one rule of add_rules or remove_rules.
func (p *fileParser) denyRule(n *yaml.Node, what string) (deny.Rule, int, bool) {
	line := deref(n).Line
	kind := "a rule of " + what
	m := p.fields(n, kind, denyRuleKeys)
	if m == nil {
		return deny.Rule{}, line, false
	}
	var r deny.Rule
	var oks [5]bool
	r.DeniedPrincipals, oks[0] = p.strs(m, "denied_principals", kind)
	r.ExceptionPrincipals, oks[1] = p.strs(m, "exception_principals", kind)
	r.DeniedPermissions, oks[2] = p.strs(m, "denied_permissions", kind)
	r.ExceptionPermissions, oks[3] = p.strs(m, "exception_permissions", kind)
	desc, _, okd := p.str(m, "description", kind, line, false)
	r.Description, oks[4] = desc, okd
	if c, found := m["denial_condition"]; found {
		cond, ok := p.condition(c, "the denial condition of "+kind)
		if !ok {
			return r, line, false
		}
		r.Condition = cond
	}
	return r, line, !slices.Contains(oks[:], false)
}

// denyAttachment is the attachment point of a deny policy's name.
func denyAttachment(name string) (string, bool) {
	rest, ok := strings.CutPrefix(name, "policies/")
	if !ok {
		return "", false
	}
	a, id, ok := strings.Cut(rest, "/denypolicies/")
	if !ok || a == "" || id == "" || strings.Contains(id, "/") || strings.Contains(a, "/") {
		return "", false
	}
	return a, true
}

// denyCheck runs the library's checks of a deny Update, which come before
// any call, on a client that is never called: nil when they pass.
func denyCheck(name string, changes ...deny.Change) error {
	r, err := interceptor.New(interceptor.WithMaxAttempts(1))
	if err != nil {
		return err
	}
	u, err := deny.NewUpdater(refusingDenyClient{}, r)
	if err != nil {
		return err
	}
	_, err = u.Update(context.Background(), name, changes...)
	if status.Code(err) == codes.Unimplemented {
		return nil // the checks passed: the Update reached the client
	}
	return err
}

// refusingDenyClient answers every call UNIMPLEMENTED: denyCheck's mark
// that the library's checks passed.
type refusingDenyClient struct{}

func (refusingDenyClient) GetPolicy(context.Context, *iampb2.GetPolicyRequest, ...gax.CallOption) (*iampb2.Policy, error) {
	return nil, status.Error(codes.Unimplemented, "checks only")
}

func (refusingDenyClient) CreatePolicy(context.Context, *iampb2.CreatePolicyRequest, ...gax.CallOption) (*iam.CreatePolicyOperation, error) {
	return nil, status.Error(codes.Unimplemented, "checks only")
}

func (refusingDenyClient) UpdatePolicy(context.Context, *iampb2.UpdatePolicyRequest, ...gax.CallOption) (*iam.UpdatePolicyOperation, error) {
	return nil, status.Error(codes.Unimplemented, "checks only")
}
