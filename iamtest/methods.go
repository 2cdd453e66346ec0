package iamtest

import "strings"

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
	MethodGetIamPolicy       Method = "/google.iam.v1.IAMPolicy/GetIamPolicy"
	MethodSetIamPolicy       Method = "/google.iam.v1.IAMPolicy/SetIamPolicy"
	MethodTestIamPermissions Method = "/google.iam.v1.IAMPolicy/TestIamPermissions"
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
	MethodProjectsGetIamPolicy            Method = "/google.cloud.resourcemanager.v3.Projects/GetIamPolicy"
	MethodProjectsSetIamPolicy            Method = "/google.cloud.resourcemanager.v3.Projects/SetIamPolicy"
	MethodProjectsTestIamPermissions      Method = "/google.cloud.resourcemanager.v3.Projects/TestIamPermissions"
	MethodFoldersGetIamPolicy             Method = "/google.cloud.resourcemanager.v3.Folders/GetIamPolicy"
	MethodFoldersSetIamPolicy             Method = "/google.cloud.resourcemanager.v3.Folders/SetIamPolicy"
	MethodFoldersTestIamPermissions       Method = "/google.cloud.resourcemanager.v3.Folders/TestIamPermissions"
	MethodOrganizationsGetIamPolicy       Method = "/google.cloud.resourcemanager.v3.Organizations/GetIamPolicy"
	MethodOrganizationsSetIamPolicy       Method = "/google.cloud.resourcemanager.v3.Organizations/SetIamPolicy"
	MethodOrganizationsTestIamPermissions Method = "/google.cloud.resourcemanager.v3.Organizations/TestIamPermissions"
)

// setIamPolicyMethods are the methods ConcurrentWriteNext accepts.
var setIamPolicyMethods = []Method{
	MethodSetIamPolicy, MethodAdminSetIamPolicy, MethodProjectsSetIamPolicy,
	MethodFoldersSetIamPolicy, MethodOrganizationsSetIamPolicy,
}

// knownMethods are the methods the controls accept, AnyMethod included.
var knownMethods = map[Method]bool{
	AnyMethod: true, MethodGetIamPolicy: true, MethodSetIamPolicy: true,
	MethodTestIamPermissions: true, MethodListServiceAccounts: true,
	MethodGetServiceAccount: true, MethodCreateServiceAccount: true,
	MethodDeleteServiceAccount: true, MethodCreateServiceAccountKey: true,
	MethodGetRole: true, MethodListRoles: true, MethodAdminGetIamPolicy: true,
	MethodAdminSetIamPolicy: true, MethodAdminTestIamPermissions: true,
	MethodProjectsGetIamPolicy: true, MethodProjectsSetIamPolicy: true,
	MethodProjectsTestIamPermissions: true, MethodFoldersGetIamPolicy: true,
	MethodFoldersSetIamPolicy: true, MethodFoldersTestIamPermissions: true,
	MethodOrganizationsGetIamPolicy: true, MethodOrganizationsSetIamPolicy: true,
	MethodOrganizationsTestIamPermissions: true,
}

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
