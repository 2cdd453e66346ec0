package fakeiam

import "strings"

// AnyMethod is the method key that stands for every method in the fault
// injection setters (FailNext, SetFailureRate, SetLatency, ...) and in
// CountCalls. A setting made for a named method takes precedence over the one
// made for AnyMethod.
const AnyMethod = "*"

// Full gRPC method names of google.iam.v1.IAMPolicy, the generic IAM policy
// service that any resource name can be passed to.
const (
	MethodGetIamPolicy       = "/google.iam.v1.IAMPolicy/GetIamPolicy"
	MethodSetIamPolicy       = "/google.iam.v1.IAMPolicy/SetIamPolicy"
	MethodTestIamPermissions = "/google.iam.v1.IAMPolicy/TestIamPermissions"
)

// Full gRPC method names of google.iam.admin.v1.IAM that the fake implements.
// Every other method of that service answers UNIMPLEMENTED.
const (
	MethodListServiceAccounts     = "/google.iam.admin.v1.IAM/ListServiceAccounts"
	MethodGetServiceAccount       = "/google.iam.admin.v1.IAM/GetServiceAccount"
	MethodCreateServiceAccount    = "/google.iam.admin.v1.IAM/CreateServiceAccount"
	MethodDeleteServiceAccount    = "/google.iam.admin.v1.IAM/DeleteServiceAccount"
	MethodCreateServiceAccountKey = "/google.iam.admin.v1.IAM/CreateServiceAccountKey"
	MethodGetRole                 = "/google.iam.admin.v1.IAM/GetRole"
	MethodListRoles               = "/google.iam.admin.v1.IAM/ListRoles"
	MethodAdminGetIamPolicy       = "/google.iam.admin.v1.IAM/GetIamPolicy"
	MethodAdminSetIamPolicy       = "/google.iam.admin.v1.IAM/SetIamPolicy"
	MethodAdminTestIamPermissions = "/google.iam.admin.v1.IAM/TestIamPermissions"
)

// Full gRPC method names of the IAM methods of google.cloud.resourcemanager.v3
// Projects, Folders and Organizations. Every other method of those services
// answers UNIMPLEMENTED.
const (
	MethodProjectsGetIamPolicy            = "/google.cloud.resourcemanager.v3.Projects/GetIamPolicy"
	MethodProjectsSetIamPolicy            = "/google.cloud.resourcemanager.v3.Projects/SetIamPolicy"
	MethodProjectsTestIamPermissions      = "/google.cloud.resourcemanager.v3.Projects/TestIamPermissions"
	MethodFoldersGetIamPolicy             = "/google.cloud.resourcemanager.v3.Folders/GetIamPolicy"
	MethodFoldersSetIamPolicy             = "/google.cloud.resourcemanager.v3.Folders/SetIamPolicy"
	MethodFoldersTestIamPermissions       = "/google.cloud.resourcemanager.v3.Folders/TestIamPermissions"
	MethodOrganizationsGetIamPolicy       = "/google.cloud.resourcemanager.v3.Organizations/GetIamPolicy"
	MethodOrganizationsSetIamPolicy       = "/google.cloud.resourcemanager.v3.Organizations/SetIamPolicy"
	MethodOrganizationsTestIamPermissions = "/google.cloud.resourcemanager.v3.Organizations/TestIamPermissions"
)

// readVerbs are the method-name prefixes of calls that change nothing.
var readVerbs = []string{"Get", "List", "Test", "Query", "Search", "Lint"}

// isWrite reports whether method (a full gRPC method name) changes state on
// the server, judged by its verb: everything but Get*, List*, Test*, Query*,
// Search* and Lint* is a write. Lost answers configured for AnyMethod apply to
// write methods only.
func isWrite(method string) bool {
	name := method[strings.LastIndexByte(method, '/')+1:]
	for _, v := range readVerbs {
		if strings.HasPrefix(name, v) {
			return false
		}
	}
	return name != ""
}
