package iamtest

import (
	"testing"

	"github.com/iamretry/iamretry/internal/fakeiam"
)

// TestMethodsAreTheFakes checks that every Method constant is the name the
// fake uses.
func TestMethodsAreTheFakes(t *testing.T) {
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
	if want := 23 + len(denyMethods); len(knownMethods) != want {
		t.Errorf("knownMethods has %d entries, want %d", len(knownMethods), want)
	}
}
