package iamtest

import (
	"fmt"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// Custom role and service account life-cycle windows, on the fake's clock.
const (
	// RoleUndeleteWindow is how long a deleted custom role can be undeleted
	// (https://cloud.google.com/iam/docs/creating-custom-roles#deleting-custom-role:
	// "You can undelete a role within 7 days"). After it the role is purged:
	// GetRole answers NOT_FOUND, ListRoles omits it and its bindings leave
	// every policy.
	RoleUndeleteWindow = fakeiam.RoleUndeleteWindow
	// RolePurgeWindow is how long, after RoleUndeleteWindow, a purged role's
	// ID stays taken (CreateRole answers FAILED_PRECONDITION): "the role
	// enters a permanent deletion process that lasts 30 days".
	RolePurgeWindow = fakeiam.RolePurgeWindow
	// AccountUndeleteWindow is how long a deleted service account can be
	// undeleted (UndeleteServiceAccount's comment: "IAM permanently removes
	// the service account 30 days later").
	AccountUndeleteWindow time.Duration = fakeiam.AccountUndeleteWindow
	// MaxServiceAccountsPerProject is the default of SetServiceAccountQuota
	// (https://cloud.google.com/iam/quotas: 100 service accounts per project).
	MaxServiceAccountsPerProject = fakeiam.MaxServiceAccountsPerProject
)

// SetServiceAccountQuota sets how many service accounts a project may hold:
// one more CreateServiceAccount answers RESOURCE_EXHAUSTED (HTTP 429)
// "Maximum number of service accounts on project reached.", as IAM does.
// Default: MaxServiceAccountsPerProject (100). It panics if n < 1.
func (s *Server) SetServiceAccountQuota(n int) {
	if n < 1 {
		panic(fmt.Sprintf("iamtest: SetServiceAccountQuota(%d): the quota must be at least 1", n))
	}
	s.fake.SetServiceAccountQuota(n)
}

// CustomRole returns a copy of the custom role name (projects/P/roles/ID or
// organizations/O/roles/ID) as the fake stores it, deleted ones included
// until they are purged, or nil. It is no call: nothing is logged and no
// fault applies.
func (s *Server) CustomRole(name string) *adminpb.Role { return s.fake.CustomRole(name) }

// SetCallerPermissions makes TestIamPermissions on resource answer only the
// permissions asked for that are among perms: the caller holds exactly
// perms there (none when perms is empty). Default (and after
// ResetCallerPermissions): the caller holds every well-formed permission. A
// resource that does not exist answers the empty set whatever this says, as
// google/iam/v1/iam_policy.proto documents. It panics on a permission that
// is not SERVICE.RESOURCE.VERB.
func (s *Server) SetCallerPermissions(resource string, perms ...string) {
	for _, p := range perms {
		if strings.Count(p, ".") < 2 || strings.ContainsAny(p, "* /") {
			panic(fmt.Sprintf("iamtest: SetCallerPermissions: permission %q is not SERVICE.RESOURCE.VERB", p))
		}
	}
	s.fake.SetCallerPermissions(resource, perms...)
}

// ResetCallerPermissions restores the default on resource: the caller holds
// every well-formed permission.
func (s *Server) ResetCallerPermissions(resource string) { s.fake.ResetCallerPermissions(resource) }

// SetProjectsWithoutOrganization makes the fake treat every project as one
// outside an organization, whose last owner cannot be removed: a
// SetIamPolicy on projects/P that leaves roles/owner without a member while
// the stored policy has one answers INVALID_ARGUMENT "Request contains an
// invalid argument." with a google.rpc.BadRequest saying why. Default: off
// (projects are taken to be in an organization, where the rule does not
// apply).
func (s *Server) SetProjectsWithoutOrganization(on bool) { s.fake.SetProjectsWithoutOrganization(on) }

// SetRESTQueryBindsBodyFields chooses whether, on the REST face, a query
// parameter naming a request field is bound to it on a method whose whole
// request is the body (body: "*", such as :setIamPolicy and :getIamPolicy).
// google/api/http.proto says such a method has no query parameters; what
// Google's front end does with one is unverified. Default: off, such
// parameters are ignored. Methods without a body (GET, DELETE) and with a
// field body (PATCH of a role) bind them either way.
func (s *Server) SetRESTQueryBindsBodyFields(on bool) { s.fake.SetRESTQueryBindsBodyFields(on) }
