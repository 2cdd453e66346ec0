package iamtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// seedFile is the JSON form LoadSeed reads (see its doc).
type seedFile struct {
	Projects []struct {
		ID     string          `json:"id"`
		Number int64           `json:"number"`
		Policy json.RawMessage `json:"policy"`
	} `json:"projects"`
	Folders       []seedResource `json:"folders"`
	Organizations []seedResource `json:"organizations"`
	Accounts      []struct {
		Project   string          `json:"project"`
		AccountID string          `json:"accountId"`
		Policy    json.RawMessage `json:"policy"`
	} `json:"serviceAccounts"`
	Users       []string `json:"users"`
	Groups      []string `json:"groups"`
	CustomRoles []struct {
		Parent string          `json:"parent"`
		RoleID string          `json:"roleId"`
		Role   json.RawMessage `json:"role"`
	} `json:"customRoles"`
	DenyPolicies []struct {
		Name   string          `json:"name"`
		Policy json.RawMessage `json:"policy"`
	} `json:"denyPolicies"`
	Policies map[string]json.RawMessage `json:"policies"`
}

type seedResource struct {
	Name   string          `json:"name"`
	Policy json.RawMessage `json:"policy"`
}

// LoadSeed stores what a seed file (JSON) describes, as the Seed* methods
// do: no fault, no logged call, visible at once. Its fields, all optional:
//
//	projects         [{id, number, policy}]: a number registers the project (RegisterProject)
//	folders          [{name: "folders/N", policy}]
//	organizations    [{name: "organizations/N", policy}]
//	serviceAccounts  [{project, accountId, policy}]
//	users, groups    ["EMAIL", ...]: the users and groups that exist (SetKnownPrincipals)
//	customRoles      [{parent, roleId, role}]: role is a google.iam.admin.v1.Role
//	denyPolicies     [{name, policy}]: policy is a google.iam.v2.Policy
//	policies         {"RESOURCE": policy, ...}: any other resource's
//
// Policies are google.iam.v1.Policy in the REST JSON form ({"version": 3,
// "bindings": [{"role", "members", "condition"}]}). It returns an error
// naming the entry at fault; what was stored before it stays.
func (s *Server) LoadSeed(data []byte) error {
	var f seedFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("iamtest: LoadSeed: %w", err)
	}
	fail := func(at string, err error) error {
		if st, ok := status.FromError(err); ok {
			err = fmt.Errorf("%s", st.Message())
		}
		return fmt.Errorf("iamtest: LoadSeed: %s: %w", at, err)
	}
	for i, p := range f.Projects {
		at := fmt.Sprintf("projects[%d] (%s)", i, p.ID)
		if !validProjectID(p.ID) {
			return fail(at, fmt.Errorf("invalid project ID %q: 6 to 30 lowercase letters, digits or hyphens, starting with a letter", p.ID))
		}
		if p.Number < 0 {
			return fail(at, fmt.Errorf("invalid project number %d", p.Number))
		}
		if p.Number > 0 {
			s.RegisterProject(p.ID, p.Number)
		}
	}
	var principals []string
	for _, u := range f.Users {
		principals = append(principals, "user:"+u)
	}
	for _, g := range f.Groups {
		principals = append(principals, "group:"+g)
	}
	if len(principals) > 0 {
		if err := s.knownPrincipals(principals); err != nil {
			return fail("users, groups", err)
		}
	}
	for i, a := range f.Accounts {
		at := fmt.Sprintf("serviceAccounts[%d] (%s)", i, a.AccountID)
		sa, err := s.seedServiceAccount(a.Project, a.AccountID)
		if err != nil {
			return fail(at, err)
		}
		if err := s.seedJSONPolicy(sa.GetName(), a.Policy); err != nil {
			return fail(at, err)
		}
	}
	adm := &adminService{s: s}
	for i, r := range f.CustomRoles {
		at := fmt.Sprintf("customRoles[%d] (%s)", i, r.RoleID)
		role := new(adminpb.Role)
		if err := unmarshalSeed(r.Role, role); err != nil {
			return fail(at, err)
		}
		if _, err := adm.CreateRole(context.Background(), &adminpb.CreateRoleRequest{Parent: r.Parent, RoleId: r.RoleID, Role: role}); err != nil {
			return fail(at, err)
		}
	}
	for i, p := range f.Projects {
		if err := s.seedJSONPolicy("projects/"+p.ID, p.Policy); err != nil {
			return fail(fmt.Sprintf("projects[%d] (%s)", i, p.ID), err)
		}
	}
	for kind, list := range map[string][]seedResource{"folders": f.Folders, "organizations": f.Organizations} {
		for i, r := range list {
			if rest, ok := strings.CutPrefix(r.Name, kind+"/"); !ok || rest == "" || strings.Contains(rest, "/") {
				return fail(fmt.Sprintf("%s[%d]", kind, i), fmt.Errorf("name %q is not %s/ID", r.Name, kind))
			}
			if err := s.seedJSONPolicy(r.Name, r.Policy); err != nil {
				return fail(fmt.Sprintf("%s[%d] (%s)", kind, i, r.Name), err)
			}
		}
	}
	for res, p := range f.Policies {
		if err := s.seedJSONPolicy(res, p); err != nil {
			return fail("policies["+res+"]", err)
		}
	}
	for i, d := range f.DenyPolicies {
		at := fmt.Sprintf("denyPolicies[%d] (%s)", i, d.Name)
		p := new(iamv2pb.Policy)
		if err := unmarshalSeed(d.Policy, p); err != nil {
			return fail(at, err)
		}
		if _, err := s.seedDenyPolicy(d.Name, p); err != nil {
			return fail(at, err)
		}
	}
	return nil
}

// seedJSONPolicy stores the JSON policy raw (none: nothing) on resource.
func (s *Server) seedJSONPolicy(resource string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	p := new(iampb.Policy)
	if err := unmarshalSeed(raw, p); err != nil {
		return err
	}
	_, err := s.seedValidPolicy(resource, p)
	return err
}

// unmarshalSeed reads a message of a seed file: unknown names refused.
func unmarshalSeed(raw json.RawMessage, m proto.Message) error {
	if len(raw) == 0 {
		return nil
	}
	if err := protojson.Unmarshal(raw, m); err != nil {
		return fmt.Errorf("%s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

// SetKnownPrincipals makes SetIamPolicy refuse a grant to a user or group
// (user:EMAIL, group:EMAIL) not among members with INVALID_ARGUMENT "User
// EMAIL does not exist." ("Group EMAIL ..."), as IAM refuses a member it
// does not know. Members a policy already holds are not checked again; case
// does not matter there. A deny policy's email must be written in the case
// given here (lower case for anyone not listed), as IAM refuses a mismatch.
// No members, the default, turns it off: every user and group exists. It
// panics on a member that is not user:EMAIL or group:EMAIL.
func (s *Server) SetKnownPrincipals(members ...string) {
	if err := s.knownPrincipals(members); err != nil {
		panic("iamtest: SetKnownPrincipals: " + err.Error())
	}
}

func (s *Server) knownPrincipals(members []string) error {
	var known map[string]string
	for _, m := range members {
		kind, email, _ := strings.Cut(m, ":")
		if (kind != "user" && kind != "group") || !strings.Contains(email, "@") {
			return fmt.Errorf("member %q is not user:EMAIL or group:EMAIL", m)
		}
		if known == nil {
			known = map[string]string{}
		}
		known[canonicalMember(m)] = m
	}
	st := s.state
	st.mu.Lock()
	st.principals = known
	st.mu.Unlock()
	return nil
}
