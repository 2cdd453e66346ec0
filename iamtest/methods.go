package iamtest

import (
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
)

// Method is the full gRPC name of a method the fake serves, such as
// MethodGetIamPolicy, or AnyMethod. Controls accept only these values.
type Method string

// String returns the full gRPC method name.
func (m Method) String() string { return string(m) }

// AnyMethod stands for every method in the controls and in CountCalls. A
// setting made for a named method wins over the AnyMethod one.
const AnyMethod Method = "*"

// Methods of google.iam.v1.IAMPolicy, the generic policy service that any
// resource name can be passed to (iam/apiv1's IamPolicyClient).
const (
	MethodGetIamPolicy       Method = iampb.IAMPolicy_GetIamPolicy_FullMethodName
	MethodSetIamPolicy       Method = iampb.IAMPolicy_SetIamPolicy_FullMethodName
	MethodTestIamPermissions Method = iampb.IAMPolicy_TestIamPermissions_FullMethodName
)

// Methods of google.iam.admin.v1.IAM (iam/admin/apiv1's IamClient) that the
// fake implements.
const (
	MethodListServiceAccounts     Method = "/google.iam.admin.v1.IAM/ListServiceAccounts"
	MethodGetServiceAccount       Method = "/google.iam.admin.v1.IAM/GetServiceAccount"
	MethodCreateServiceAccount    Method = "/google.iam.admin.v1.IAM/CreateServiceAccount"
	MethodDeleteServiceAccount    Method = "/google.iam.admin.v1.IAM/DeleteServiceAccount"
	MethodCreateServiceAccountKey Method = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"
	MethodGetRole                 Method = "/google.iam.admin.v1.IAM/GetRole"
	MethodListRoles               Method = "/google.iam.admin.v1.IAM/ListRoles"
	MethodAdminGetIamPolicy       Method = "/google.iam.admin.v1.IAM/GetIamPolicy"
	MethodAdminSetIamPolicy       Method = "/google.iam.admin.v1.IAM/SetIamPolicy"
	MethodAdminTestIamPermissions Method = "/google.iam.admin.v1.IAM/TestIamPermissions"
)

// IAM methods of google.cloud.resourcemanager.v3 Projects, Folders and
// Organizations (resourcemanager/apiv3's clients).
const (
	MethodProjectsGetIamPolicy            Method = resourcemanagerpb.Projects_GetIamPolicy_FullMethodName
	MethodProjectsSetIamPolicy            Method = resourcemanagerpb.Projects_SetIamPolicy_FullMethodName
	MethodProjectsTestIamPermissions      Method = resourcemanagerpb.Projects_TestIamPermissions_FullMethodName
	MethodFoldersGetIamPolicy             Method = resourcemanagerpb.Folders_GetIamPolicy_FullMethodName
	MethodFoldersSetIamPolicy             Method = resourcemanagerpb.Folders_SetIamPolicy_FullMethodName
	MethodFoldersTestIamPermissions       Method = resourcemanagerpb.Folders_TestIamPermissions_FullMethodName
	MethodOrganizationsGetIamPolicy       Method = resourcemanagerpb.Organizations_GetIamPolicy_FullMethodName
	MethodOrganizationsSetIamPolicy       Method = resourcemanagerpb.Organizations_SetIamPolicy_FullMethodName
	MethodOrganizationsTestIamPermissions Method = resourcemanagerpb.Organizations_TestIamPermissions_FullMethodName
)

// readVerbs are the method-name prefixes of calls that change nothing.
var readVerbs = []string{"Get", "List", "Test", "Query", "Search", "Lint"}

// isWrite reports whether method (a full gRPC method name) changes state on
// the server, judged by its verb: everything but Get*, List*, Test*, Query*,
// Search* and Lint* is a write. Lost answers configured for AnyMethod apply to
// write methods only.
func isWrite(method Method) bool {
	name := string(method)[strings.LastIndexByte(string(method), '/')+1:]
	for _, v := range readVerbs {
		if strings.HasPrefix(name, v) {
			return false
		}
	}
	return name != ""
}
