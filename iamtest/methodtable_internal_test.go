package iamtest

import (
	"testing"
)

// TestMethodTable: the controls accept exactly the Method constants, each
// a method of the descriptors the table is read from, and every served
// method has a REST route from its google.api.http rule.
func TestMethodTable(t *testing.T) {
	t.Parallel()
	constants := []Method{
		MethodGetIamPolicy, MethodSetIamPolicy, MethodTestIamPermissions,
		MethodListServiceAccounts, MethodGetServiceAccount, MethodCreateServiceAccount,
		MethodDeleteServiceAccount, MethodCreateServiceAccountKey, MethodGetRole, MethodListRoles,
		MethodAdminGetIamPolicy, MethodAdminSetIamPolicy, MethodAdminTestIamPermissions,
		MethodProjectsGetIamPolicy, MethodProjectsSetIamPolicy, MethodProjectsTestIamPermissions,
		MethodFoldersGetIamPolicy, MethodFoldersSetIamPolicy, MethodFoldersTestIamPermissions,
		MethodOrganizationsGetIamPolicy, MethodOrganizationsSetIamPolicy, MethodOrganizationsTestIamPermissions,
		MethodUpdateServiceAccount, MethodPatchServiceAccount, MethodUndeleteServiceAccount,
		MethodEnableServiceAccount, MethodDisableServiceAccount, MethodListServiceAccountKeys,
		MethodGetServiceAccountKey, MethodUploadServiceAccountKey, MethodDeleteServiceAccountKey,
		MethodDisableServiceAccountKey, MethodEnableServiceAccountKey, MethodQueryGrantableRoles,
		MethodCreateRole, MethodUpdateRole, MethodDeleteRole, MethodUndeleteRole,
		MethodQueryTestablePermissions,
		MethodListPolicies, MethodGetPolicy, MethodCreatePolicy, MethodUpdatePolicy,
		MethodDeletePolicy, MethodGetOperation,
	}
	for _, m := range constants {
		if !knownMethods[m] {
			t.Errorf("%s is no served method of the table", m)
		}
	}
	if len(knownMethods) != len(constants)+1 {
		t.Errorf("the table serves %d methods, there are %d Method constants", len(knownMethods)-1, len(constants))
	}
	routed := map[Method]bool{}
	for _, rt := range (&Server{}).restRoutes() {
		routed[rt.method.name] = true
	}
	for _, m := range constants {
		if !routed[m] {
			t.Errorf("%s has no REST route", m)
		}
	}
}

// TestParseTemplate: variables spanning several segments, a custom verb,
// and "**".
func TestParseTemplate(t *testing.T) {
	t.Parallel()
	rt, err := parseTemplate("/v1/{name=projects/*/serviceAccounts/*}/keys:upload")
	if err != nil || rt.custom != "upload" || len(rt.segs) != 6 || rt.vars[0] != (pathVar{field: "name", from: 1, to: 5}) {
		t.Fatalf("parseTemplate = %+v, %v", rt, err)
	}
	vals, ok := rt.match([]string{"v1", "projects", "p", "serviceAccounts", "a%40p.iam.gserviceaccount.com", "keys"}, "upload")
	if !ok || vals[0] != "projects/p/serviceAccounts/a@p.iam.gserviceaccount.com" {
		t.Fatalf("match = %q, %v", vals, ok)
	}
	rt, err = parseTemplate("/v1/{resource=**}:getIamPolicy")
	if err != nil || rt.vars[0].to != -1 {
		t.Fatalf("parseTemplate(**) = %+v, %v", rt, err)
	}
	if vals, ok := rt.match([]string{"v1", "a", "b", "c"}, "getIamPolicy"); !ok || vals[0] != "a/b/c" {
		t.Fatalf("match(**) = %q, %v", vals, ok)
	}
	if _, ok := rt.match([]string{"v1"}, "getIamPolicy"); ok {
		t.Fatal("** matched no segment")
	}
	if _, err := parseTemplate("v1/x"); err == nil {
		t.Fatal("a template without a leading / parsed")
	}
}
