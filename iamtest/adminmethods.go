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
