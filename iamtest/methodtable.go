package iamtest

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// The generated packages register the descriptors read below.
	_ "cloud.google.com/go/iam/admin/apiv1/adminpb"
	_ "cloud.google.com/go/iam/apiv1/iampb"
	_ "cloud.google.com/go/iam/apiv2/iampb"
	_ "cloud.google.com/go/longrunning/autogen/longrunningpb"
	_ "cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
)

// The fake's one method table, read from the generated descriptors: the
// methods of the services it registers, each with its google.api.http rules
// (google/api/annotations.proto, read with proto.GetExtension), from which
// the REST face's routes and their path, query and body bindings come.

// service is one gRPC service the fake registers, and which of its
// methods it serves; the others answer UNIMPLEMENTED (501 over REST).
type service struct {
	name   protoreflect.FullName
	serves func(method protoreflect.Name) bool
	rest   bool // its google.api.http rules are routes of the REST face
}

var (
	all      = func(protoreflect.Name) bool { return true }
	iamTrio  = only("GetIamPolicy", "SetIamPolicy", "TestIamPermissions")
	services = []service{
		{"google.iam.v1.IAMPolicy", all, true},
		// SignBlob and SignJwt are deprecated for the IAM Credentials API;
		// LintPolicy lints a condition only; QueryAuditableServices is not
		// served.
		{"google.iam.admin.v1.IAM", func(m protoreflect.Name) bool {
			return !slices.Contains([]protoreflect.Name{"SignBlob", "SignJwt", "LintPolicy", "QueryAuditableServices"}, m)
		}, true},
		{"google.cloud.resourcemanager.v3.Projects", iamTrio, true},
		{"google.cloud.resourcemanager.v3.Folders", iamTrio, true},
		{"google.cloud.resourcemanager.v3.Organizations", iamTrio, true},
		{"google.iam.v2.Policies", all, true},
		// Only the deny policies' operations, polled at the URL of
		// iam/apiv2's client (extraRules), not at longrunning's own.
		{"google.longrunning.Operations", only("GetOperation"), false},
	}
	// extraRules are HTTP rules that no descriptor holds: the URL the
	// iam/apiv2 REST client polls its operations at (its url_template).
	extraRules = map[Method]*annotations.HttpRule{
		MethodGetOperation: {Pattern: &annotations.HttpRule_Get{Get: "/v2/{name=policies/*/*/*/operations/*}"}},
	}
)

func only(names ...protoreflect.Name) func(protoreflect.Name) bool {
	return func(m protoreflect.Name) bool { return slices.Contains(names, m) }
}

// methodInfo is one method of the table.
type methodInfo struct {
	name   Method
	desc   protoreflect.MethodDescriptor
	served bool                    // a control accepts it; else UNIMPLEMENTED
	rules  []*annotations.HttpRule // the rule and its additional bindings
}

// methodTable is every method of the registered services, in descriptor
// order; knownMethods are the served ones, which the controls accept, and
// AnyMethod.
var methodTable, knownMethods = buildMethodTable()

func buildMethodTable() ([]methodInfo, map[Method]bool) {
	var table []methodInfo
	known := map[Method]bool{AnyMethod: true}
	for _, svc := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(svc.name)
		if err != nil {
			panic(fmt.Sprintf("iamtest: the descriptor of %s is not registered: %v", svc.name, err))
		}
		sd := d.(protoreflect.ServiceDescriptor)
		for i := 0; i < sd.Methods().Len(); i++ {
			md := sd.Methods().Get(i)
			mi := methodInfo{name: Method("/" + string(sd.FullName()) + "/" + string(md.Name())), desc: md, served: svc.serves(md.Name())}
			if svc.rest {
				if r, ok := proto.GetExtension(md.Options(), annotations.E_Http).(*annotations.HttpRule); ok && r != nil {
					mi.rules = append([]*annotations.HttpRule{r}, r.GetAdditionalBindings()...)
				}
			}
			if r, ok := extraRules[mi.name]; ok {
				mi.rules = append(mi.rules, r)
			}
			if mi.served {
				known[mi.name] = true
			}
			table = append(table, mi)
		}
	}
	return table, known
}

// httpPattern returns the verb and URL template of a rule.
func httpPattern(r *annotations.HttpRule) (verb, tmpl string) {
	switch {
	case r.GetGet() != "":
		return "GET", r.GetGet()
	case r.GetPost() != "":
		return "POST", r.GetPost()
	case r.GetPut() != "":
		return "PUT", r.GetPut()
	case r.GetPatch() != "":
		return "PATCH", r.GetPatch()
	case r.GetDelete() != "":
		return "DELETE", r.GetDelete()
	case r.GetCustom() != nil:
		return r.GetCustom().GetKind(), r.GetCustom().GetPath()
	}
	return "", ""
}

// isEtagWrite reports whether m is a write guarded by an etag, one
// ConcurrentWriteNext accepts.
func isEtagWrite(m Method) bool {
	name := string(m)[strings.LastIndexByte(string(m), '/')+1:]
	return knownMethods[m] && (name == "SetIamPolicy" || m == MethodUpdateRole || m == MethodUpdatePolicy || m == MethodDeletePolicy)
}

// Methods returns every method the fake serves, the values of the Method
// constants, in the order of the services' descriptors: with AnyMethod,
// what the controls accept (a program that takes method names from its
// user checks them against it).
func Methods() []Method {
	var ms []Method
	for _, mi := range methodTable {
		if mi.served {
			ms = append(ms, mi.name)
		}
	}
	return ms
}
