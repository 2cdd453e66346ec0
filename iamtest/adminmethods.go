package iamtest

// Methods of google.iam.admin.v1.IAM beside those of methods.go: custom
// roles, service-account writes, keys and the query methods.
const (
	MethodUpdateServiceAccount     Method = "/google.iam.admin.v1.IAM/UpdateServiceAccount"
	MethodPatchServiceAccount      Method = "/google.iam.admin.v1.IAM/PatchServiceAccount"
	MethodUndeleteServiceAccount   Method = "/google.iam.admin.v1.IAM/UndeleteServiceAccount"
	MethodEnableServiceAccount     Method = "/google.iam.admin.v1.IAM/EnableServiceAccount"
	MethodDisableServiceAccount    Method = "/google.iam.admin.v1.IAM/DisableServiceAccount"
	MethodListServiceAccountKeys   Method = "/google.iam.admin.v1.IAM/ListServiceAccountKeys"
	MethodGetServiceAccountKey     Method = "/google.iam.admin.v1.IAM/GetServiceAccountKey"
	MethodUploadServiceAccountKey  Method = "/google.iam.admin.v1.IAM/UploadServiceAccountKey"
	MethodDeleteServiceAccountKey  Method = "/google.iam.admin.v1.IAM/DeleteServiceAccountKey"
	MethodDisableServiceAccountKey Method = "/google.iam.admin.v1.IAM/DisableServiceAccountKey"
	MethodEnableServiceAccountKey  Method = "/google.iam.admin.v1.IAM/EnableServiceAccountKey"
	MethodQueryGrantableRoles      Method = "/google.iam.admin.v1.IAM/QueryGrantableRoles"
	MethodCreateRole               Method = "/google.iam.admin.v1.IAM/CreateRole"
	MethodUpdateRole               Method = "/google.iam.admin.v1.IAM/UpdateRole"
	MethodDeleteRole               Method = "/google.iam.admin.v1.IAM/DeleteRole"
	MethodUndeleteRole             Method = "/google.iam.admin.v1.IAM/UndeleteRole"
	MethodQueryTestablePermissions Method = "/google.iam.admin.v1.IAM/QueryTestablePermissions"
)

// adminMethods are the Method constants of this file, all accepted by the
// controls.
var adminMethods = []Method{
	MethodUpdateServiceAccount, MethodPatchServiceAccount, MethodUndeleteServiceAccount,
	MethodEnableServiceAccount, MethodDisableServiceAccount, MethodListServiceAccountKeys,
	MethodGetServiceAccountKey, MethodUploadServiceAccountKey, MethodDeleteServiceAccountKey,
	MethodDisableServiceAccountKey, MethodEnableServiceAccountKey, MethodQueryGrantableRoles,
	MethodCreateRole, MethodUpdateRole, MethodDeleteRole, MethodUndeleteRole,
	MethodQueryTestablePermissions,
}

// Methods of google.iam.admin.v1.IAM the fake does not serve, or serves in
// part: SignBlob and SignJwt (deprecated for the IAM Service Account
// Credentials API) and QueryAuditableServices answer UNIMPLEMENTED over gRPC
// and 501 over REST; LintPolicy lints a condition's CEL and answers
// UNIMPLEMENTED for anything else.
const (
	methodSignBlob               = "/google.iam.admin.v1.IAM/SignBlob"
	methodSignJwt                = "/google.iam.admin.v1.IAM/SignJwt"
	methodLintPolicy             = "/google.iam.admin.v1.IAM/LintPolicy"
	methodQueryAuditableServices = "/google.iam.admin.v1.IAM/QueryAuditableServices"
)

func init() {
	for _, m := range adminMethods {
		knownMethods[m] = true
	}
}
