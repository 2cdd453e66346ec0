package fakeiam

// Full gRPC method names of the google.iam.admin.v1.IAM methods served
// beside those of methods.go: custom roles, service-account writes, keys
// and the query methods.
const (
	MethodUpdateServiceAccount     = "/google.iam.admin.v1.IAM/UpdateServiceAccount"
	MethodPatchServiceAccount      = "/google.iam.admin.v1.IAM/PatchServiceAccount"
	MethodUndeleteServiceAccount   = "/google.iam.admin.v1.IAM/UndeleteServiceAccount"
	MethodEnableServiceAccount     = "/google.iam.admin.v1.IAM/EnableServiceAccount"
	MethodDisableServiceAccount    = "/google.iam.admin.v1.IAM/DisableServiceAccount"
	MethodListServiceAccountKeys   = "/google.iam.admin.v1.IAM/ListServiceAccountKeys"
	MethodGetServiceAccountKey     = "/google.iam.admin.v1.IAM/GetServiceAccountKey"
	MethodUploadServiceAccountKey  = "/google.iam.admin.v1.IAM/UploadServiceAccountKey"
	MethodDeleteServiceAccountKey  = "/google.iam.admin.v1.IAM/DeleteServiceAccountKey"
	MethodDisableServiceAccountKey = "/google.iam.admin.v1.IAM/DisableServiceAccountKey"
	MethodEnableServiceAccountKey  = "/google.iam.admin.v1.IAM/EnableServiceAccountKey"
	MethodQueryGrantableRoles      = "/google.iam.admin.v1.IAM/QueryGrantableRoles"
	MethodCreateRole               = "/google.iam.admin.v1.IAM/CreateRole"
	MethodUpdateRole               = "/google.iam.admin.v1.IAM/UpdateRole"
	MethodDeleteRole               = "/google.iam.admin.v1.IAM/DeleteRole"
	MethodUndeleteRole             = "/google.iam.admin.v1.IAM/UndeleteRole"
	MethodQueryTestablePermissions = "/google.iam.admin.v1.IAM/QueryTestablePermissions"
)

// Methods of google.iam.admin.v1.IAM the fake does not serve, or serves in
// part: SignBlob and SignJwt (deprecated for the IAM Service Account
// Credentials API) and QueryAuditableServices answer UNIMPLEMENTED over gRPC
// and 501 over REST; LintPolicy lints a condition's CEL and answers
// UNIMPLEMENTED for anything else.
const (
	methodSignBlob               = "/google.iam.admin.v1.IAM/SignBlob"
	MethodSignJwt                = "/google.iam.admin.v1.IAM/SignJwt"
	MethodLintPolicy             = "/google.iam.admin.v1.IAM/LintPolicy"
	MethodQueryAuditableServices = "/google.iam.admin.v1.IAM/QueryAuditableServices"
)
