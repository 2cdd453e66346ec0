package interceptor

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/iam/credentials/apiv1/credentialspb"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// safeServices are the services whose every method safeMethods must decide.
var safeServices = []struct {
	file    protoreflect.FileDescriptor
	service protoreflect.Name
}{
	{iampb.File_google_iam_v1_iam_policy_proto, "IAMPolicy"},
	{adminpb.File_google_iam_admin_v1_iam_proto, "IAM"},
	{credentialspb.File_google_iam_credentials_v1_iamcredentials_proto, "IAMCredentials"},
	{iamv2pb.File_google_iam_v2_policy_proto, "Policies"},
	{operationsFile(), "Operations"},
}

// operationsFile is google/longrunning/operations.proto, linked in through
// iamv2pb (its writes return operations).
func operationsFile() protoreflect.FileDescriptor {
	fd, err := protoregistry.GlobalFiles.FindFileByPath("google/longrunning/operations.proto")
	if err != nil {
		panic(err)
	}
	return fd
}

// safeWantNoEtag is the decision for every method of safeServices when the
// request carries no etag (or is nil). The methods that become safe with an
// etag are tested in TestSafeToRetryEtag.
var safeWantNoEtag = map[string]bool{
	"/google.iam.v1.IAMPolicy/GetIamPolicy":       true,
	"/google.iam.v1.IAMPolicy/SetIamPolicy":       false, // only with an etag
	"/google.iam.v1.IAMPolicy/TestIamPermissions": true,

	"/google.iam.admin.v1.IAM/ListServiceAccounts":      true,
	"/google.iam.admin.v1.IAM/GetServiceAccount":        true,
	"/google.iam.admin.v1.IAM/CreateServiceAccount":     false,
	"/google.iam.admin.v1.IAM/UpdateServiceAccount":     true,
	"/google.iam.admin.v1.IAM/PatchServiceAccount":      true,
	"/google.iam.admin.v1.IAM/DeleteServiceAccount":     true,
	"/google.iam.admin.v1.IAM/UndeleteServiceAccount":   true,
	"/google.iam.admin.v1.IAM/EnableServiceAccount":     true,
	"/google.iam.admin.v1.IAM/DisableServiceAccount":    true,
	"/google.iam.admin.v1.IAM/ListServiceAccountKeys":   true,
	"/google.iam.admin.v1.IAM/GetServiceAccountKey":     true,
	"/google.iam.admin.v1.IAM/CreateServiceAccountKey":  false, // never, etag or not
	"/google.iam.admin.v1.IAM/UploadServiceAccountKey":  false,
	"/google.iam.admin.v1.IAM/DeleteServiceAccountKey":  true,
	"/google.iam.admin.v1.IAM/DisableServiceAccountKey": true,
	"/google.iam.admin.v1.IAM/EnableServiceAccountKey":  true,
	"/google.iam.admin.v1.IAM/SignBlob":                 true,
	"/google.iam.admin.v1.IAM/SignJwt":                  true,
	"/google.iam.admin.v1.IAM/GetIamPolicy":             true,
	"/google.iam.admin.v1.IAM/SetIamPolicy":             false, // only with an etag
	"/google.iam.admin.v1.IAM/TestIamPermissions":       true,
	"/google.iam.admin.v1.IAM/QueryGrantableRoles":      true,
	"/google.iam.admin.v1.IAM/ListRoles":                true,
	"/google.iam.admin.v1.IAM/GetRole":                  true,
	"/google.iam.admin.v1.IAM/CreateRole":               false,
	"/google.iam.admin.v1.IAM/UpdateRole":               false, // only with an etag
	"/google.iam.admin.v1.IAM/DeleteRole":               true,
	"/google.iam.admin.v1.IAM/UndeleteRole":             true,
	"/google.iam.admin.v1.IAM/QueryTestablePermissions": true,
	"/google.iam.admin.v1.IAM/QueryAuditableServices":   true,
	"/google.iam.admin.v1.IAM/LintPolicy":               true,

	"/google.iam.credentials.v1.IAMCredentials/GenerateAccessToken": true,
	"/google.iam.credentials.v1.IAMCredentials/GenerateIdToken":     true,
	"/google.iam.credentials.v1.IAMCredentials/SignBlob":            true,
	"/google.iam.credentials.v1.IAMCredentials/SignJwt":             true,

	"/google.iam.v2.Policies/ListPolicies": true,
	"/google.iam.v2.Policies/GetPolicy":    true,
	"/google.iam.v2.Policies/CreatePolicy": false,
	"/google.iam.v2.Policies/UpdatePolicy": false, // only with an etag
	"/google.iam.v2.Policies/DeletePolicy": false, // only with an etag

	"/google.longrunning.Operations/ListOperations":  true,
	"/google.longrunning.Operations/GetOperation":    true,
	"/google.longrunning.Operations/WaitOperation":   true,
	"/google.longrunning.Operations/CancelOperation": true,
	"/google.longrunning.Operations/DeleteOperation": true,
}

// safeMethod is one method of safeServices, as the interceptor sees it.
type safeMethod struct {
	full  string // "/google.iam.admin.v1.IAM/GetServiceAccount"
	input protoreflect.MessageDescriptor
}

func safeMethodList(t *testing.T) []safeMethod {
	t.Helper()
	var ms []safeMethod
	for _, s := range safeServices {
		sd := s.file.Services().ByName(s.service)
		if sd == nil {
			t.Fatalf("service %s not found in %s", s.service, s.file.Path())
		}
		methods := sd.Methods()
		if methods.Len() == 0 {
			t.Fatalf("service %s has no methods", sd.FullName())
		}
		for i := range methods.Len() {
			md := methods.Get(i)
			ms = append(ms, safeMethod{
				full:  "/" + string(sd.FullName()) + "/" + string(md.Name()),
				input: md.Input(),
			})
		}
	}
	return ms
}

// TestEveryIAMMethodDecided fails when a service of safeServices has a method
// that safeMethods or this file does not decide, so that a new method in a
// future proto forces a decision instead of falling back to its verb.
func TestEveryIAMMethodDecided(t *testing.T) {
	t.Parallel()
	ms := safeMethodList(t)
	known := make(map[string]bool, len(ms))
	for _, m := range ms {
		known[m.full] = true
		if v := safeMethods[m.full]; v == safeUnknown {
			t.Errorf("%s is missing from methodTable: decide whether it is safe to retry, and say why", m.full)
		}
		if _, ok := safeWantNoEtag[m.full]; !ok {
			t.Errorf("%s is missing from wantWithoutEtag", m.full)
		}
	}
	// Nothing in the table or the expectations that is not a real method: a
	// typo there would leave the real method to the verb fallback.
	for m, v := range safeMethods {
		if !known[m] {
			t.Errorf("methodTable has %s, which is no method of %v", m, safeServiceNames())
		}
		if v == safeUnknown {
			t.Errorf("methodTable[%s] is unknown; leave it out or decide it", m)
		}
	}
	for m := range safeWantNoEtag {
		if !known[m] {
			t.Errorf("wantWithoutEtag has %s, which is no method of %v", m, safeServiceNames())
		}
	}
	if got, want := len(safeMethods), len(ms); got != want {
		t.Errorf("methodTable has %d entries, the services have %d methods", got, want)
	}
}

func safeServiceNames() []string {
	var names []string
	for _, s := range safeServices {
		names = append(names, string(s.file.Package())+"."+string(s.service))
	}
	return names
}

// TestSafeToRetryIAMMethods checks every method of safeServices with a nil
// request and with an empty request of the method's own input type.
func TestSafeToRetryIAMMethods(t *testing.T) {
	t.Parallel()
	for _, m := range safeMethodList(t) {
		want, ok := safeWantNoEtag[m.full]
		if !ok {
			continue // TestEveryIAMMethodDecided reports it
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(m.input.FullName())
		if err != nil {
			t.Fatalf("%s: input type %s: %v", m.full, m.input.FullName(), err)
		}
		for _, req := range []any{nil, mt.New().Interface()} {
			if got := SafeToRetry(m.full, req); got != want {
				t.Errorf("SafeToRetry(%q, %T) = %v, want %v", m.full, req, got, want)
			}
		}
	}
}

func TestSafeToRetryEtag(t *testing.T) {
	t.Parallel()
	etag := []byte("BwXhqDkT0mQ=")
	setWithEtag := &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Etag: etag}}
	setReqs := []struct {
		name string
		req  any
		want bool
	}{
		{"nil", nil, false},
		{"typed nil", (*iampb.SetIamPolicyRequest)(nil), false},
		{"no policy", &iampb.SetIamPolicyRequest{Resource: "projects/p"}, false},
		{"policy without etag", &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Version: 3}}, false},
		{"empty etag", &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Etag: []byte{}}}, false},
		{"etag", setWithEtag, true},
		{"wrong type: GetIamPolicyRequest", &iampb.GetIamPolicyRequest{Resource: "projects/p"}, false},
		{"wrong type: admin client request", &admin.SetIamPolicyRequest{Resource: "projects/p"}, false},
		{"wrong type: v2 UpdatePolicyRequest with etag", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Etag: "x"}}, false},
		{"wrong type: policy", &iampb.Policy{Etag: etag}, false},
		{"wrong type: string", "etag", false},
	}
	for _, method := range []string{
		"/google.iam.v1.IAMPolicy/SetIamPolicy",
		"/google.iam.admin.v1.IAM/SetIamPolicy",
		"/google.cloud.resourcemanager.v3.Projects/SetIamPolicy",
		"/google.cloud.resourcemanager.v3.Folders/SetIamPolicy",
		"/google.cloud.resourcemanager.v3.Organizations/SetIamPolicy",
		"/google.cloud.resourcemanager.v3.TagKeys/SetIamPolicy",
		"/example.unknown.v1.Widgets/SetIamPolicy",
	} {
		for _, c := range setReqs {
			if got := SafeToRetry(method, c.req); got != c.want {
				t.Errorf("SafeToRetry(%q, %s) = %v, want %v", method, c.name, got, c.want)
			}
		}
	}

	// Only a method named exactly SetIamPolicy gets the etag rule.
	for _, method := range []string{
		"/example.unknown.v1.Widgets/SetIamPolicies",
		"/example.unknown.v1.Widgets/SetIamPolicyX",
		"/example.unknown.v1.Widgets/Setiampolicy",
		"/google.iam.admin.v1.IAM/CreateServiceAccountKey",
		"/google.iam.admin.v1.IAM/CreateRole",
	} {
		if SafeToRetry(method, setWithEtag) {
			t.Errorf("SafeToRetry(%q, SetIamPolicyRequest with etag) = true, want false", method)
		}
	}

	const updateRole = "/google.iam.admin.v1.IAM/UpdateRole"
	for _, c := range []struct {
		name string
		req  any
		want bool
	}{
		{"nil", nil, false},
		{"typed nil", (*adminpb.UpdateRoleRequest)(nil), false},
		{"no role", &adminpb.UpdateRoleRequest{Name: "projects/p/roles/r"}, false},
		{"role without etag", &adminpb.UpdateRoleRequest{Name: "projects/p/roles/r", Role: &adminpb.Role{Title: "t"}}, false},
		{"role with etag", &adminpb.UpdateRoleRequest{Name: "projects/p/roles/r", Role: &adminpb.Role{Etag: etag}}, true},
		{"wrong type: SetIamPolicyRequest with etag", setWithEtag, false},
		{"wrong type: DeleteRoleRequest with etag", &adminpb.DeleteRoleRequest{Etag: etag}, false},
	} {
		if got := SafeToRetry(updateRole, c.req); got != c.want {
			t.Errorf("SafeToRetry(UpdateRole, %s) = %v, want %v", c.name, got, c.want)
		}
	}

	const updatePolicy = "/google.iam.v2.Policies/UpdatePolicy"
	for _, c := range []struct {
		name string
		req  any
		want bool
	}{
		{"nil", nil, false},
		{"typed nil", (*iamv2pb.UpdatePolicyRequest)(nil), false},
		{"no policy", &iamv2pb.UpdatePolicyRequest{}, false},
		{"policy without etag", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{DisplayName: "d"}}, false},
		{"policy with etag", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Etag: "W/\"1\""}}, true},
		{"wrong type: SetIamPolicyRequest with etag", setWithEtag, false},
		{"wrong type: DeletePolicyRequest with etag", &iamv2pb.DeletePolicyRequest{Etag: "x"}, false},
	} {
		if got := SafeToRetry(updatePolicy, c.req); got != c.want {
			t.Errorf("SafeToRetry(UpdatePolicy, %s) = %v, want %v", c.name, got, c.want)
		}
	}

	// An etag changes nothing for the methods decided without one.
	for _, c := range []struct {
		method string
		req    any
		want   bool
	}{
		{"/google.iam.admin.v1.IAM/DeleteRole", &adminpb.DeleteRoleRequest{Name: "projects/p/roles/r", Etag: etag}, true},
		{"/google.iam.admin.v1.IAM/UndeleteRole", &adminpb.UndeleteRoleRequest{Name: "projects/p/roles/r", Etag: etag}, true},
		{"/google.iam.admin.v1.IAM/UpdateServiceAccount", &adminpb.ServiceAccount{DisplayName: "d", Etag: etag}, true},
		{"/google.iam.admin.v1.IAM/PatchServiceAccount", &adminpb.PatchServiceAccountRequest{ServiceAccount: &adminpb.ServiceAccount{Etag: etag}}, true},
		{"/google.iam.v2.Policies/CreatePolicy", &iamv2pb.CreatePolicyRequest{Policy: &iamv2pb.Policy{Etag: "x"}}, false},
		{"/google.iam.admin.v1.IAM/CreateServiceAccountKey", &adminpb.CreateServiceAccountKeyRequest{Name: "projects/-/serviceAccounts/a"}, false},
	} {
		if got := SafeToRetry(c.method, c.req); got != c.want {
			t.Errorf("SafeToRetry(%q, %T with etag) = %v, want %v", c.method, c.req, got, c.want)
		}
	}
}

func TestSafeToRetryByVerb(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want bool
	}{
		{"Get", true},
		{"GetWidget", true},
		{"GetIamPolicy", true},
		{"List", true},
		{"ListWidgets", true},
		{"Search", true},
		{"SearchAllResources", true},
		{"Query", true},
		{"QueryWidgets", true},
		{"Test", true},
		{"TestIamPermissions", true},
		{"Lint", true},
		{"LintPolicy", true},
		{"BatchGet", true},
		{"BatchGetWidgets", true},

		// A verb must be a whole CamelCase word.
		{"Getaway", false},
		{"Getter", false},
		{"Get2", false},
		{"Get_widget", false},
		{"Listen", false},
		{"Searchlight", false},
		{"Queryable", false},
		{"Testify", false},
		{"Linter", false},
		{"BatchGetter", false},
		{"get", false},
		{"getWidget", false},
		{"GET", false},
		{"GETWidget", false},

		// Writes and everything else.
		{"CreateWidget", false},
		{"UpdateWidget", false},
		{"PatchWidget", false},
		{"DeleteWidget", false},
		{"UndeleteWidget", false},
		{"EnableWidget", false},
		{"DisableWidget", false},
		{"SetWidget", false},
		{"MoveWidget", false},
		{"BatchCreateWidgets", false},
		{"BatchDeleteWidgets", false},
		{"Batch", false},
		{"SignBlob", false},
		{"GenerateAccessToken", false},
		{"ForgetWidget", false},
	} {
		for _, service := range []string{"example.unknown.v1.Widgets", "google.cloud.resourcemanager.v3.Projects"} {
			method := "/" + service + "/" + c.name
			if got := SafeToRetry(method, nil); got != c.want {
				t.Errorf("SafeToRetry(%q, nil) = %v, want %v", method, got, c.want)
			}
		}
	}

	// A method the table's services do not have yet (a newer proto) falls back
	// to its verb too.
	for method, want := range map[string]bool{
		"/google.iam.admin.v1.IAM/GetSomethingNew":     true,
		"/google.iam.admin.v1.IAM/CreateSomethingNew":  false,
		"/google.iam.v2.Policies/ListPolicyBindings":   true,
		"/google.iam.v2.Policies/DeletePolicyBindings": false,
		// Same method name in another service or version: not the table's.
		"/google.iam.admin.v2.IAM/DeleteServiceAccount":     false,
		"/google.iam.credentials.v2.IAMCredentials/SignJwt": false,
		"/google.iam.v3.PolicyBindings/DeletePolicyBinding": false,
		"/google.iam.v3.PolicyBindings/GetPolicyBinding":    true,
	} {
		if got := SafeToRetry(method, nil); got != want {
			t.Errorf("SafeToRetry(%q, nil) = %v, want %v", method, got, want)
		}
	}
}

func TestSafeToRetryMalformed(t *testing.T) {
	t.Parallel()
	etagReq := &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{Etag: []byte("e")}}
	for _, method := range []string{
		"",
		"/",
		"//",
		"///",
		"/a",
		"/a/",
		"//Get",
		"//SetIamPolicy",
		"/Get",
		"Get",
		"GetServiceAccount",
		"google.iam.admin.v1.IAM/GetServiceAccount",
		"google.iam.v1.IAMPolicy/SetIamPolicy",
		"/google.iam.admin.v1.IAM/",
		"/google.iam.admin.v1.IAM",
		"/google.iam.admin.v1.IAM/GetServiceAccount/",
		"/google.iam.admin.v1.IAM/GetServiceAccount/extra",
		"/google.iam.admin.v1.IAM//GetServiceAccount",
		"//google.iam.admin.v1.IAM/GetServiceAccount",
		"/google.iam.v1.IAMPolicy/SetIamPolicy/",
		" /google.iam.admin.v1.IAM/GetServiceAccount",
		"\x00/google.iam.admin.v1.IAM/GetServiceAccount",
	} {
		for _, req := range []any{nil, etagReq} {
			if SafeToRetry(method, req) {
				t.Errorf("SafeToRetry(%q, %T) = true, want false", method, req)
			}
		}
	}
	// The shortest well-formed name.
	if !SafeToRetry("/a/Get", nil) {
		t.Error(`SafeToRetry("/a/Get", nil) = false, want true`)
	}
}

// safeWellFormed is the slow, obvious definition that SafeToRetry's index
// arithmetic must agree with.
func safeWellFormed(method string) bool {
	parts := strings.Split(method, "/")
	return len(parts) == 3 && parts[0] == "" && parts[1] != "" && parts[2] != ""
}

func FuzzSafeToRetry(f *testing.F) {
	for _, s := range []string{
		"", "/", "//", "/a/b", "/a/Get", "/a/b/c", "a/Get",
		"/google.iam.admin.v1.IAM/GetServiceAccount",
		"/google.iam.v1.IAMPolicy/SetIamPolicy",
		"/example.v1.Widgets/Getaway",
		"/example.v1.Widgets/BatchGetWidgets",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	etagReq := &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{Etag: []byte("e")}}
	f.Fuzz(func(t *testing.T, method string, withEtag bool) {
		var req any
		if withEtag {
			req = etagReq
		}
		got := SafeToRetry(method, req) // must not panic
		if got && !safeWellFormed(method) {
			t.Errorf("SafeToRetry(%q) = true for a malformed method name", method)
		}
		if got != SafeToRetry(method, req) {
			t.Errorf("SafeToRetry(%q) is not deterministic", method)
		}
	})
}

// safeAllocCases cover every path: table hits, each etag check, the verb
// fallback, the SetIamPolicy fallback and malformed names.
var safeAllocCases = []struct {
	name   string
	method string
	req    any
	want   bool
}{
	{"table hit", "/google.iam.admin.v1.IAM/GetServiceAccount", &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/a"}, true},
	{"table miss write", "/google.iam.admin.v1.IAM/CreateServiceAccountKey", &adminpb.CreateServiceAccountKeyRequest{}, false},
	{"SetIamPolicy etag", "/google.iam.v1.IAMPolicy/SetIamPolicy", &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{Etag: []byte("e")}}, true},
	{"SetIamPolicy no etag", "/google.iam.v1.IAMPolicy/SetIamPolicy", &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{}}, false},
	{"UpdateRole etag", "/google.iam.admin.v1.IAM/UpdateRole", &adminpb.UpdateRoleRequest{Role: &adminpb.Role{Etag: []byte("e")}}, true},
	{"UpdatePolicy etag", "/google.iam.v2.Policies/UpdatePolicy", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Etag: "e"}}, true},
	{"resourcemanager SetIamPolicy etag", "/google.cloud.resourcemanager.v3.Projects/SetIamPolicy", &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{Etag: []byte("e")}}, true},
	{"verb fallback read", "/example.unknown.v1.Widgets/BatchGetWidgets", nil, true},
	{"verb fallback write", "/example.unknown.v1.Widgets/Getaway", nil, false},
	{"malformed", "google.iam.admin.v1.IAM/GetServiceAccount", nil, false},
}

func TestSafeToRetryDoesNotAllocate(t *testing.T) {
	for _, c := range safeAllocCases {
		if got := SafeToRetry(c.method, c.req); got != c.want {
			t.Errorf("%s: SafeToRetry(%q) = %v, want %v", c.name, c.method, got, c.want)
		}
		if n := testing.AllocsPerRun(100, func() { SafeToRetry(c.method, c.req) }); n != 0 {
			t.Errorf("%s: SafeToRetry allocates %v times per call, want 0", c.name, n)
		}
	}
}

// TestSafeToRetryConcurrent is for the race detector: SafeToRetry only reads
// shared state.
func TestSafeToRetryConcurrent(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	errs := make(chan string, 8*len(safeAllocCases))
	for range 8 {
		wg.Go(func() {
			for range 200 {
				for _, c := range safeAllocCases {
					if got := SafeToRetry(c.method, c.req); got != c.want {
						errs <- fmt.Sprintf("%s: got %v, want %v", c.name, got, c.want)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

var safeSink bool

func BenchmarkSafeToRetry(b *testing.B) {
	for _, c := range safeAllocCases {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				safeSink = SafeToRetry(c.method, c.req)
			}
		})
	}
}

// TestSetIamPolicyReplaySafeOnlyWhenMaskChecksEtag: a SetIamPolicy is safe
// to replay only when its policy carries an etag AND its update_mask is
// empty or names etag; with ["bindings"] IAM need not check the etag, and a
// replay of a write whose answer was lost would be a blind overwrite. The
// same rule holds for UpdateRole.
func TestSetIamPolicyReplaySafeOnlyWhenMaskChecksEtag(t *testing.T) {
	t.Parallel()
	etag := []byte("BwXhqDkT0mQ=")
	set := func(etag []byte, paths ...string) *iampb.SetIamPolicyRequest {
		r := &iampb.SetIamPolicyRequest{Resource: "projects/p", Policy: &iampb.Policy{Etag: etag}}
		if paths != nil {
			r.UpdateMask = &fieldmaskpb.FieldMask{Paths: paths}
		}
		return r
	}
	for _, c := range []struct {
		name string
		req  *iampb.SetIamPolicyRequest
		want bool
	}{
		{"etag, no mask", set(etag), true},
		{"etag, empty mask", set(etag, []string{}...), true},
		{"etag, mask bindings,etag", set(etag, "bindings", "etag"), true},
		{"etag, mask etag", set(etag, "etag"), true},
		{"etag, mask bindings,etag,audit_configs", set(etag, "bindings", "etag", "audit_configs"), true},
		{"etag, mask bindings", set(etag, "bindings"), false},
		{"etag, mask bindings,audit_configs", set(etag, "bindings", "audit_configs"), false},
		{"etag, mask audit_configs", set(etag, "audit_configs"), false},
		{"etag, mask Etag (paths are case-sensitive)", set(etag, "bindings", "Etag"), false},
		{"no etag, mask bindings,etag", set(nil, "bindings", "etag"), false},
	} {
		for _, method := range []string{
			"/google.iam.v1.IAMPolicy/SetIamPolicy",
			"/google.iam.admin.v1.IAM/SetIamPolicy",
			"/google.cloud.resourcemanager.v3.Projects/SetIamPolicy",
			"/example.unknown.v1.Widgets/SetIamPolicy",
		} {
			if got := SafeToRetry(method, c.req); got != c.want {
				t.Errorf("SafeToRetry(%q, %s) = %v, want %v", method, c.name, got, c.want)
			}
		}
	}
	role := func(paths ...string) *adminpb.UpdateRoleRequest {
		r := &adminpb.UpdateRoleRequest{Name: "projects/p/roles/r", Role: &adminpb.Role{Etag: etag}}
		if paths != nil {
			r.UpdateMask = &fieldmaskpb.FieldMask{Paths: paths}
		}
		return r
	}
	for _, c := range []struct {
		name string
		req  *adminpb.UpdateRoleRequest
		want bool
	}{
		{"no mask", role(), true},
		{"mask included_permissions,etag", role("included_permissions", "etag"), true},
		{"mask included_permissions", role("included_permissions"), false},
	} {
		if got := SafeToRetry("/google.iam.admin.v1.IAM/UpdateRole", c.req); got != c.want {
			t.Errorf("SafeToRetry(UpdateRole, %s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// Issue 24, item 4: the deny policies of google.iam.v2 and the custom roles
// of the admin API. An update is replayable only when it carries an etag
// IAM checks; a v2 DeletePolicy only with an etag (without one IAM "deletes
// the policy regardless of its current etag", so a late replay could delete
// a policy of the same name created in between); creates never; DeleteRole
// and UndeleteRole always (a deleted role's ID is not reused).
func TestSafeToRetryDenyPoliciesAndCustomRoles(t *testing.T) {
	t.Parallel()
	etag := []byte("BwXhqDkT0mQ=")
	for _, c := range []struct {
		method string
		req    any
		want   bool
	}{
		{"/google.iam.v2.Policies/DeletePolicy", &iamv2pb.DeletePolicyRequest{Name: "policies/a/denypolicies/p", Etag: "W/\"1\""}, true},
		{"/google.iam.v2.Policies/DeletePolicy", &iamv2pb.DeletePolicyRequest{Name: "policies/a/denypolicies/p"}, false},
		{"/google.iam.v2.Policies/DeletePolicy", (*iamv2pb.DeletePolicyRequest)(nil), false},
		{"/google.iam.v2.Policies/DeletePolicy", nil, false},
		{"/google.iam.v2.Policies/DeletePolicy", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Etag: "x"}}, false},
		{"/google.iam.v2.Policies/UpdatePolicy", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Name: "policies/a/denypolicies/p", Etag: "W/\"1\""}}, true},
		{"/google.iam.v2.Policies/UpdatePolicy", &iamv2pb.UpdatePolicyRequest{Policy: &iamv2pb.Policy{Name: "policies/a/denypolicies/p"}}, false},
		{"/google.iam.v2.Policies/CreatePolicy", &iamv2pb.CreatePolicyRequest{Parent: "policies/a/denypolicies", PolicyId: "p", Policy: &iamv2pb.Policy{Etag: "x"}}, false},
		{"/google.iam.v2.Policies/GetPolicy", &iamv2pb.GetPolicyRequest{Name: "policies/a/denypolicies/p"}, true},
		{"/google.iam.v2.Policies/ListPolicies", &iamv2pb.ListPoliciesRequest{Parent: "policies/a/denypolicies"}, true},
		{"/google.longrunning.Operations/GetOperation", nil, true},
		{"/google.iam.admin.v1.IAM/UpdateRole", &adminpb.UpdateRoleRequest{Role: &adminpb.Role{Etag: etag}, UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"included_permissions", "etag"}}}, true},
		{"/google.iam.admin.v1.IAM/UpdateRole", &adminpb.UpdateRoleRequest{Role: &adminpb.Role{IncludedPermissions: []string{"a.b.c"}}}, false},
		{"/google.iam.admin.v1.IAM/CreateRole", &adminpb.CreateRoleRequest{Parent: "projects/p", RoleId: "r", Role: &adminpb.Role{Etag: etag}}, false},
		{"/google.iam.admin.v1.IAM/DeleteRole", &adminpb.DeleteRoleRequest{Name: "projects/p/roles/r"}, true},
		{"/google.iam.admin.v1.IAM/DeleteRole", &adminpb.DeleteRoleRequest{Name: "projects/p/roles/r", Etag: etag}, true},
		{"/google.iam.admin.v1.IAM/UndeleteRole", &adminpb.UndeleteRoleRequest{Name: "projects/p/roles/r"}, true},
		{"/google.iam.admin.v1.IAM/UndeleteRole", &adminpb.UndeleteRoleRequest{Name: "projects/p/roles/r", Etag: etag}, true},
		{"/google.iam.admin.v1.IAM/GetRole", &adminpb.GetRoleRequest{Name: "projects/p/roles/r"}, true},
		{"/google.iam.admin.v1.IAM/ListRoles", &adminpb.ListRolesRequest{Parent: "projects/p"}, true},
		{"/google.iam.admin.v1.IAM/QueryGrantableRoles", &adminpb.QueryGrantableRolesRequest{}, true},
	} {
		if got := SafeToRetry(c.method, c.req); got != c.want {
			t.Errorf("SafeToRetry(%q, %T %v) = %v, want %v", c.method, c.req, c.req, got, c.want)
		}
	}
}
