// Package iammethods holds the IAM method tables the library decides by:
// which methods are safe to send again (Safety), which gRPC method a REST
// request transcodes to (REST), the IAM mixin methods every Google API
// generates (IsMixin), and the names of the library's own
// read-modify-writes (PolicyUpdate, RoleUpdate, DenyUpdate). Package
// interceptor reads them for SafeToRetry, the RoundTripper and the metrics'
// grpc.method values; the Updaters name their transactions with them. The
// fake server (iamtest) keeps tables of its own and never imports
// this package.
package iammethods

import "strings"

// The Methods of this library's read-modify-writes: policy.UpdateMethod,
// role.UpdateMethod and deny.UpdateMethod are these constants, and the
// metrics give each a grpc.method value of its own.
const (
	PolicyUpdate = "iamretry.policy/Update"
	RoleUpdate   = "iamretry.role/Update"
	DenyUpdate   = "iamretry.deny/Update"
)

// Transact holds the Methods of this library's read-modify-writes.
var Transact = map[string]bool{
	PolicyUpdate: true,
	RoleUpdate:   true,
	DenyUpdate:   true,
}

// IsMixin reports whether method ("/service/Name") is one of the IAM
// methods every Google API generates on its own services
// ("/google.pubsub.v1.Publisher/GetIamPolicy", resourcemanager's Projects,
// Folders, Organizations): a generated method, one per service, so its
// name keeps cardinality bounded.
func IsMixin(method string) bool {
	service, verb, ok := strings.Cut(method[1:], "/")
	if !ok || !strings.Contains(service, ".") || strings.ContainsAny(service, " /") {
		return false
	}
	switch verb {
	case "GetIamPolicy", "SetIamPolicy", "TestIamPermissions":
		return true
	}
	return false
}
