// Package iamv1 adapts the IAM v1 discovery client
// (google.golang.org/api/iam/v1) to role.Client, so that a role.Updater
// changes custom roles over REST: projects.roles and organizations.roles
// Get and Patch (with updateMask), and roles.Get for predefined roles. It
// is its own package so that the role package does not import every
// discovery client.
//
// The discovery client has no retries of its own: give its *http.Client a
// Retrier's RoundTripper (interceptor.NewRESTClient does) for the calls
// made outside an Updater; the Updater owns the retries of its own calls,
// and the RoundTripper passes them through.
package iamv1

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	iam "google.golang.org/api/iam/v1"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/interceptor/role"
)

// Roles returns s's roles as a role.Client: GetRole reads
// projects/P/roles/ID (s.Projects.Roles), organizations/O/roles/ID
// (s.Organizations.Roles) and roles/ID (s.Roles); UpdateRole patches the
// first two with the request's update_mask as updateMask. Another name is
// refused INVALID_ARGUMENT before any request. gax options do not apply to
// a discovery client and are ignored (it never retries on its own). A nil s
// gives a nil Client, which role.NewUpdater refuses.
func Roles(s *iam.Service) role.Client {
	if s == nil {
		return nil
	}
	return client{s: s}
}

type client struct{ s *iam.Service }

func (c client) GetRole(ctx context.Context, req *adminpb.GetRoleRequest, _ ...gax.CallOption) (*adminpb.Role, error) {
	name := req.GetName()
	var (
		r   *iam.Role
		err error
	)
	switch kind(name) {
	case "projects":
		r, err = c.s.Projects.Roles.Get(name).Context(ctx).Do()
	case "organizations":
		r, err = c.s.Organizations.Roles.Get(name).Context(ctx).Do()
	case "roles":
		r, err = c.s.Roles.Get(name).Context(ctx).Do()
	default:
		return nil, badName(name)
	}
	if err != nil {
		return nil, err
	}
	return toProto(r)
}

func (c client) UpdateRole(ctx context.Context, req *adminpb.UpdateRoleRequest, _ ...gax.CallOption) (*adminpb.Role, error) {
	name := req.GetName()
	body := new(iam.Role)
	if err := fromProto(req.GetRole(), body); err != nil {
		return nil, err
	}
	mask, err := maskJSON(req.GetUpdateMask())
	if err != nil {
		return nil, err
	}
	var r *iam.Role
	switch kind(name) {
	case "projects":
		call := c.s.Projects.Roles.Patch(name, body).Context(ctx)
		if mask != "" {
			call = call.UpdateMask(mask)
		}
		r, err = call.Do()
	case "organizations":
		call := c.s.Organizations.Roles.Patch(name, body).Context(ctx)
		if mask != "" {
			call = call.UpdateMask(mask)
		}
		r, err = call.Do()
	default:
		return nil, badName(name)
	}
	if err != nil {
		return nil, err
	}
	return toProto(r)
}

// kind is the first segment of a role name.
func kind(name string) string {
	k, _, _ := strings.Cut(name, "/")
	return k
}

func badName(name string) error {
	return status.Errorf(grpccodes.InvalidArgument,
		"iamretry/role/iamv1: %q is not a role name the discovery client serves: expected projects/PROJECT_ID/roles/ID, organizations/ORG_ID/roles/ID or (to read) roles/ID", name)
}

var in = protojson.UnmarshalOptions{DiscardUnknown: true}

// toProto converts a discovery Role through its JSON form, which is
// google.iam.admin.v1.Role's (etag as base64, stage by name).
func toProto(r *iam.Role) (*adminpb.Role, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("iamretry/role/iamv1: encoding the role: %w", err)
	}
	out := new(adminpb.Role)
	if err := in.Unmarshal(b, out); err != nil {
		return nil, fmt.Errorf("iamretry/role/iamv1: converting the role to adminpb.Role: %w", err)
	}
	return out, nil
}

// fromProto fills dst from r.
func fromProto(r *adminpb.Role, dst *iam.Role) error {
	b, err := protojson.Marshal(r)
	if err != nil {
		return fmt.Errorf("iamretry/role/iamv1: encoding the role: %w", err)
	}
	if err := json.Unmarshal(b, dst); err != nil {
		return fmt.Errorf("iamretry/role/iamv1: converting adminpb.Role to iam.Role: %w", err)
	}
	return nil
}

// maskJSON is the JSON form of an update mask ("title,includedPermissions"),
// "" for none.
func maskJSON(m *fieldmaskpb.FieldMask) (string, error) {
	if len(m.GetPaths()) == 0 {
		return "", nil
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("iamretry/role/iamv1: encoding the update mask: %w", err)
	}
	var s string
	err = json.Unmarshal(b, &s)
	return s, err
}
