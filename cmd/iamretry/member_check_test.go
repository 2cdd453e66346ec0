package main

import (
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestMemberAgreesWithLibrary: the CLI's --member check accepts
// exactly the members the library's mutations accept (DESIGN: every form
// IAM documents, from one table). The CLI had a table of its own that
// refused documented forms: a GKE Workload Identity member
// (serviceAccount:P.svc.id.goog[NS/KSA]), deleted:principal://...,
// projectOwner:P; and accepted principal://host, which the library then
// refused at run time.
func TestMemberAgreesWithLibrary(t *testing.T) {
	for _, m := range []string{
		"user:alice@example.com", "serviceAccount:my-proj.svc.id.goog[ns/ksa]",
		"deleted:principal://iam.googleapis.com/locations/global/workforcePools/p/subject/s",
		"deleted:serviceAccount:sa@p.iam.gserviceaccount.com?uid=1", "deleted:group:g@example.com?uid=2",
		"projectOwner:my-proj", "projectEditor:my-proj", "projectViewer:my-proj",
		"principal://goog/subject/alice@example.com",
		"principalSet://cloudresourcemanager.googleapis.com/projects/1/type/ServiceAccount",
		"", "principal://host", "principal://", "principalSet://host", "serviceAccount:p.svc.id.goog[ns/]",
		"deleted:user:a@example.com", "user:a@b@c", "domain:a/b", "projectOwner:", "allusers", "USER:a@example.com",
		"alice@example.com", "person:alice@example.com", "user:alice", "user:a@example.com ",
	} {
		_, libErr := policy.RemoveMember(m)(&iampb.Policy{})
		cliErr := checkMember(m)
		if (libErr == nil) != (cliErr == nil) {
			t.Errorf("member %q: the library says %v, the CLI says %v", m, libErr, cliErr)
		}
	}
}
