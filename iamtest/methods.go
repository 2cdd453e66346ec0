package iamtest

import "github.com/iamretry/iamretry/internal/fakeiam"

// Method is the full gRPC name of a method the fake serves, such as
// MethodGetIamPolicy, or AnyMethod. Controls accept only these values.
type Method string

// String returns the full gRPC method name.
func (m Method) String() string { return string(m) }

// AnyMethod stands for every method in the controls and in CountCalls. A
// setting made for a named method wins over the AnyMethod one.
const AnyMethod Method = fakeiam.AnyMethod

// Methods of google.iam.v1.IAMPolicy, the generic policy service that any
// resource name can be passed to (iam/apiv1's IamPolicyClient).
const (
	MethodGetIamPolicy       Method = fakeiam.MethodGetIamPolicy
	MethodSetIamPolicy       Method = fakeiam.MethodSetIamPolicy
	MethodTestIamPermissions Method = fakeiam.MethodTestIamPermissions
)

// Methods of google.iam.admin.v1.IAM (iam/admin/apiv1's IamClient) that the
// fake implements.
const (
	MethodListServiceAccounts     Method = fakeiam.MethodListServiceAccounts
	MethodGetServiceAccount       Method = fakeiam.MethodGetServiceAccount
	MethodCreateServiceAccount    Method = fakeiam.MethodCreateServiceAccount
	MethodDeleteServiceAccount    Method = fakeiam.MethodDeleteServiceAccount
	MethodCreateServiceAccountKey Method = fakeiam.MethodCreateServiceAccountKey
	MethodGetRole                 Method = fakeiam.MethodGetRole
	MethodListRoles               Method = fakeiam.MethodListRoles
	MethodAdminGetIamPolicy       Method = fakeiam.MethodAdminGetIamPolicy
	MethodAdminSetIamPolicy       Method = fakeiam.MethodAdminSetIamPolicy
	MethodAdminTestIamPermissions Method = fakeiam.MethodAdminTestIamPermissions
)

// IAM methods of google.cloud.resourcemanager.v3 Projects, Folders and
// Organizations (resourcemanager/apiv3's clients).
const (
	MethodProjectsGetIamPolicy            Method = fakeiam.MethodProjectsGetIamPolicy
	MethodProjectsSetIamPolicy            Method = fakeiam.MethodProjectsSetIamPolicy
	MethodProjectsTestIamPermissions      Method = fakeiam.MethodProjectsTestIamPermissions
	MethodFoldersGetIamPolicy             Method = fakeiam.MethodFoldersGetIamPolicy
	MethodFoldersSetIamPolicy             Method = fakeiam.MethodFoldersSetIamPolicy
	MethodFoldersTestIamPermissions       Method = fakeiam.MethodFoldersTestIamPermissions
	MethodOrganizationsGetIamPolicy       Method = fakeiam.MethodOrganizationsGetIamPolicy
	MethodOrganizationsSetIamPolicy       Method = fakeiam.MethodOrganizationsSetIamPolicy
	MethodOrganizationsTestIamPermissions Method = fakeiam.MethodOrganizationsTestIamPermissions
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
