package iamtest

import "strings"

// permissionFor returns the IAM permission a call of method on resource
// needs, and the domain of the service that owns the resource (what an
// IAM_PERMISSION_DENIED ErrorInfo names): iam.serviceAccounts.*,
// iam.serviceAccountKeys.* and iam.roles.* under iam.googleapis.com;
// resourcemanager.{projects,folders,organizations}.* under
// cloudresourcemanager.googleapis.com. Other resources get
// iam.googleapis.com and a permission built from the method's verb.
func permissionFor(method, resource string) (permission, domain string) {
	verb := method[strings.LastIndexByte(method, '/')+1:]
	switch verb {
	case "GetIamPolicy", "SetIamPolicy", "TestIamPermissions":
		verb = strings.ToLower(verb[:1]) + verb[1:]
	default:
		for _, noun := range []string{"ServiceAccountKeys", "ServiceAccountKey", "ServiceAccounts", "ServiceAccount", "Roles", "Role", "Permissions"} {
			if v, ok := strings.CutSuffix(verb, noun); ok && v != "" {
				verb = v
				break
			}
		}
		switch verb {
		case "Patch":
			verb = "update"
		case "Upload":
			verb = "create"
		case "QueryGrantable":
			verb = "list"
		default:
			verb = strings.ToLower(verb[:1]) + verb[1:]
		}
	}
	parts := strings.Split(resource, "/")
	switch {
	case strings.Contains(resource, "/keys/") || strings.Contains(method, "ServiceAccountKey"):
		return "iam.serviceAccountKeys." + verb, "iam.googleapis.com"
	case strings.Contains(resource, "/serviceAccounts/") || strings.Contains(method, "ServiceAccount"):
		return "iam.serviceAccounts." + verb, "iam.googleapis.com"
	case strings.Contains(resource, "/roles/") || strings.HasSuffix(method, "Role") || strings.HasSuffix(method, "Roles"):
		return "iam.roles." + verb, "iam.googleapis.com"
	case len(parts) == 2 && (parts[0] == "projects" || parts[0] == "folders" || parts[0] == "organizations"):
		return "resourcemanager." + parts[0] + "." + verb, "cloudresourcemanager.googleapis.com"
	}
	return "iam." + verb, "iam.googleapis.com"
}
