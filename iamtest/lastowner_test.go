package iamtest_test

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

// TestLastOwnerOfProjectWithoutOrganization: with
// SetProjectsWithoutOrganization, removing the last owner of a project is
// refused 400 over gRPC (resourcemanager v3 Projects) and REST
// (cloudresourcemanager/v3), as Resource Manager refuses it for a project
// outside an organization
// (https://cloud.google.com/resource-manager/docs/access-control-proj); off,
// it is allowed.
func TestLastOwnerOfProjectWithoutOrganization(t *testing.T) {
	t.Parallel()
	srv := iamtest.NewServer(t)
	ctx := context.Background()
	owner := &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/owner", Members: []string{"serviceAccount:o@p.iam.gserviceaccount.com"}}}}
	srv.SeedPolicy("projects/p", owner)
	pc, err := resourcemanager.NewProjectsClient(ctx, srv.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	srv.SetProjectsWithoutOrganization(true)
	cur, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"}, noRetry)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Etag: cur.Etag,
		Bindings: []*iampb.Binding{{Role: "roles/viewer", Members: []string{"user:a@example.com"}}}}}, noRetry)
	wantErr(t, "gRPC: removing the last owner", err, codes.InvalidArgument, "")

	svc, err := crm.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: &crm.Policy{}}).Do()
	wantHTTP(t, "REST: removing the last owner", err, 400, "")

	srv.SetProjectsWithoutOrganization(false)
	if _, err := svc.Projects.SetIamPolicy("projects/p", &crm.SetIamPolicyRequest{Policy: &crm.Policy{}}).Do(); err != nil {
		t.Fatalf("inside an organization (the default): %v", err)
	}
}
