package iamv1_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor/role/iamv1"
)

// TestRolesRoutesByName: organization roles go to organizations.roles,
// predefined ones are read through roles.get, every field survives the
// conversion both ways, and a name of another form is refused with no
// request sent.
func TestRolesRoutesByName(t *testing.T) {
	ctx := context.Background()
	srv := iamtest.NewServer(t)
	s, err := iam.NewService(ctx, append(srv.RESTClientOptions(), option.WithHTTPClient(srv.HTTPClient()))...)
	if err != nil {
		t.Fatal(err)
	}
	c := iamv1.Roles(s)
	const name = "organizations/123/roles/auditor"
	if _, err := s.Organizations.Roles.Create("organizations/123", &iam.CreateRoleRequest{RoleId: "auditor",
		Role: &iam.Role{Title: "Auditor", IncludedPermissions: []string{"logging.logs.list"}}}).Do(); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetRole(ctx, &adminpb.GetRoleRequest{Name: name})
	if err != nil || got.Title != "Auditor" || len(got.Etag) == 0 || got.Stage != adminpb.Role_ALPHA {
		t.Fatalf("GetRole: %v, %v", got, err)
	}
	upd, err := c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name,
		Role:       &adminpb.Role{Etag: got.Etag, Description: "reads logs", Stage: adminpb.Role_DEPRECATED},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"description", "stage"}}})
	if err != nil || upd.Description != "reads logs" || upd.Stage != adminpb.Role_DEPRECATED || upd.Title != "Auditor" ||
		!slices.Equal(upd.IncludedPermissions, []string{"logging.logs.list"}) {
		t.Fatalf("UpdateRole: %v, %v", upd, err)
	}
	_, err = c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: name,
		Role: &adminpb.Role{Etag: got.Etag, Title: "stale"}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}})
	if !strings.Contains(err.Error(), "409") {
		t.Fatalf("stale etag: %v, want 409", err)
	}
	pre, err := c.GetRole(ctx, &adminpb.GetRoleRequest{Name: "roles/viewer"})
	if err != nil || pre.Stage != adminpb.Role_GA || len(pre.IncludedPermissions) == 0 {
		t.Fatalf("GetRole(roles/viewer): %v, %v", pre, err)
	}
	srv.ResetCalls()
	for _, n := range []string{"folders/1/roles/x", ""} {
		if _, err := c.GetRole(ctx, &adminpb.GetRoleRequest{Name: n}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("GetRole(%q): %v", n, err)
		}
	}
	if _, err := c.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: "roles/viewer", Role: &adminpb.Role{}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("UpdateRole(roles/viewer): %v", err)
	}
	if n := srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Errorf("%d requests sent for names refused", n)
	}
	if iamv1.Roles(nil) != nil {
		t.Error("Roles(nil) is not nil")
	}
}
