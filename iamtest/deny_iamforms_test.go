package iamtest_test

import (
	"strings"
	"testing"

	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"

	"github.com/iamretry/iamretry/iamtest"
)

// TestDenySlashPrincipals: subject and attribute values may hold "/", as
// Workload Identity Federation's do for GitHub Actions (its subject
// repo:ORG/REPO:ref:refs/heads/BRANCH and its attribute.repository
// ORG/REPO: https://cloud.google.com/iam/docs/workload-identity-federation-with-deployment-pipelines;
// the forms: https://cloud.google.com/iam/docs/principal-identifiers). Both
// faces store them as written.
func TestDenySlashPrincipals(t *testing.T) {
	t.Parallel()
	principals := []string{
		"principalSet://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/attribute.repository/my-org/my-repo",
		"principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/github/subject/repo:my-org/my-repo:ref:refs/heads/main",
		"principalSet://iam.googleapis.com/locations/global/workforcePools/altostrat/attribute.team/eng/platform",
		"principal://iam.googleapis.com/locations/global/workforcePools/altostrat/subject/org/unit/raha",
	}
	srv := iamtest.NewServer(t)
	for face, c := range denyFaces(t, srv) {
		var rules []*iamv2pb.PolicyRule
		for _, p := range principals {
			r := denyRule(p, "iam.googleapis.com/roles.list")
			r.GetDenyRule().ExceptionPrincipals = []string{p}
			rules = append(rules, r)
		}
		got := createDeny(t, c, "slashes-"+strings.ToLower(face), rules...)
		for i, p := range principals {
			if d := got.GetRules()[i].GetDenyRule(); d.GetDeniedPrincipals()[0] != p || d.GetExceptionPrincipals()[0] != p {
				t.Errorf("%s: rule %d stored %v, want %s", face, i, d, p)
			}
		}
	}
}
