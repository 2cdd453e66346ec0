package iamtest

import (
	"testing"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// TestMethodsAreTheFakes checks that every Method constant is the name the
// fake uses.
func TestMethodsAreTheFakes(t *testing.T) {
	t.Parallel()
	for m, want := range map[Method]string{
		AnyMethod: fakeiam.AnyMethod, MethodGetIamPolicy: fakeiam.MethodGetIamPolicy,
		MethodSetIamPolicy: fakeiam.MethodSetIamPolicy, MethodTestIamPermissions: fakeiam.MethodTestIamPermissions,
		MethodListServiceAccounts: fakeiam.MethodListServiceAccounts, MethodGetServiceAccount: fakeiam.MethodGetServiceAccount,
		MethodCreateServiceAccount: fakeiam.MethodCreateServiceAccount, MethodDeleteServiceAccount: fakeiam.MethodDeleteServiceAccount,
		MethodCreateServiceAccountKey: fakeiam.MethodCreateServiceAccountKey, MethodGetRole: fakeiam.MethodGetRole,
		MethodListRoles: fakeiam.MethodListRoles, MethodAdminGetIamPolicy: fakeiam.MethodAdminGetIamPolicy,
		MethodAdminSetIamPolicy: fakeiam.MethodAdminSetIamPolicy, MethodAdminTestIamPermissions: fakeiam.MethodAdminTestIamPermissions,
		MethodProjectsGetIamPolicy: fakeiam.MethodProjectsGetIamPolicy, MethodProjectsSetIamPolicy: fakeiam.MethodProjectsSetIamPolicy,
		MethodProjectsTestIamPermissions: fakeiam.MethodProjectsTestIamPermissions, MethodFoldersGetIamPolicy: fakeiam.MethodFoldersGetIamPolicy,
		MethodFoldersSetIamPolicy: fakeiam.MethodFoldersSetIamPolicy, MethodFoldersTestIamPermissions: fakeiam.MethodFoldersTestIamPermissions,
		MethodOrganizationsGetIamPolicy: fakeiam.MethodOrganizationsGetIamPolicy, MethodOrganizationsSetIamPolicy: fakeiam.MethodOrganizationsSetIamPolicy,
		MethodOrganizationsTestIamPermissions: fakeiam.MethodOrganizationsTestIamPermissions,
		MethodListPolicies:                    fakeiam.MethodListPolicies, MethodGetPolicy: fakeiam.MethodGetPolicy,
		MethodCreatePolicy: fakeiam.MethodCreatePolicy, MethodUpdatePolicy: fakeiam.MethodUpdatePolicy,
		MethodDeletePolicy: fakeiam.MethodDeletePolicy, MethodGetOperation: fakeiam.MethodGetOperation,
	} {
		if string(m) != want {
			t.Errorf("%s is %q in fakeiam", m, want)
		}
		if !knownMethods[m] {
			t.Errorf("%s is not in knownMethods", m)
		}
	}
	for m, want := range map[Method]string{
		MethodUpdateServiceAccount: fakeiam.MethodUpdateServiceAccount, MethodPatchServiceAccount: fakeiam.MethodPatchServiceAccount,
		MethodUndeleteServiceAccount: fakeiam.MethodUndeleteServiceAccount, MethodEnableServiceAccount: fakeiam.MethodEnableServiceAccount,
		MethodDisableServiceAccount: fakeiam.MethodDisableServiceAccount, MethodListServiceAccountKeys: fakeiam.MethodListServiceAccountKeys,
		MethodGetServiceAccountKey: fakeiam.MethodGetServiceAccountKey, MethodUploadServiceAccountKey: fakeiam.MethodUploadServiceAccountKey,
		MethodDeleteServiceAccountKey: fakeiam.MethodDeleteServiceAccountKey, MethodDisableServiceAccountKey: fakeiam.MethodDisableServiceAccountKey,
		MethodEnableServiceAccountKey: fakeiam.MethodEnableServiceAccountKey, MethodQueryGrantableRoles: fakeiam.MethodQueryGrantableRoles,
		MethodCreateRole: fakeiam.MethodCreateRole, MethodUpdateRole: fakeiam.MethodUpdateRole,
		MethodDeleteRole: fakeiam.MethodDeleteRole, MethodUndeleteRole: fakeiam.MethodUndeleteRole,
		MethodQueryTestablePermissions: fakeiam.MethodQueryTestablePermissions,
	} {
		if string(m) != want {
			t.Errorf("%s is %q in fakeiam", m, want)
		}
		if !knownMethods[m] {
			t.Errorf("%s is not in knownMethods", m)
		}
	}
	if len(knownMethods) != 23+len(adminMethods)+len(denyMethods) {
		t.Errorf("knownMethods has %d entries, want %d", len(knownMethods), 23+len(adminMethods)+len(denyMethods))
	}
}
