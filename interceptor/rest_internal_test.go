package interceptor

import (
	"regexp"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv2pb "cloud.google.com/go/iam/apiv2/iampb"
	"cloud.google.com/go/iam/credentials/apiv1/credentialspb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/iamretry/iamretry/internal/iammethods"
)

var templateVar = regexp.MustCompile(`\{[^}=]+(=([^}]*))?\}`)

// instantiate turns an http rule's path template into a concrete path.
func instantiate(tmpl string) string {
	return templateVar.ReplaceAllStringFunc(tmpl, func(v string) string {
		m := templateVar.FindStringSubmatch(v)
		pat := m[2]
		if pat == "" {
			pat = "*"
		}
		pat = strings.ReplaceAll(pat, "**", "deep/er")
		return strings.ReplaceAll(pat, "*", "x")
	})
}

// TestRESTRulesMatchTheProtos: every google.api.http rule (and additional
// binding) of the IAM services, and the IAM methods of resourcemanager v3,
// maps to its own gRPC method on its host and on a host that is not
// Google's.
func TestRESTRulesMatchTheProtos(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, s := range []struct {
		host string
		sd   protoreflect.ServiceDescriptor
		only string // method name prefix filter
	}{
		{"iam.googleapis.com", adminpb.File_google_iam_admin_v1_iam_proto.Services().Get(0), ""},
		{"iamcredentials.googleapis.com", credentialspb.File_google_iam_credentials_v1_iamcredentials_proto.Services().Get(0), ""},
		{"iam.googleapis.com", iamv2pb.File_google_iam_v2_policy_proto.Services().Get(0), ""},
		{"cloudresourcemanager.googleapis.com", resourcemanagerpb.File_google_cloud_resourcemanager_v3_projects_proto.Services().Get(0), "IamPolicy|TestIamPermissions"},
		{"cloudresourcemanager.googleapis.com", resourcemanagerpb.File_google_cloud_resourcemanager_v3_folders_proto.Services().Get(0), "IamPolicy|TestIamPermissions"},
		{"cloudresourcemanager.googleapis.com", resourcemanagerpb.File_google_cloud_resourcemanager_v3_organizations_proto.Services().Get(0), "IamPolicy|TestIamPermissions"},
	} {
		ms := s.sd.Methods()
		for i := range ms.Len() {
			m := ms.Get(i)
			if s.only != "" && !regexp.MustCompile(s.only).MatchString(string(m.Name())) {
				continue
			}
			want := "/" + string(s.sd.FullName()) + "/" + string(m.Name())
			rule := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
			for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
				verb, tmpl := httpPattern(r)
				path := instantiate(tmpl)
				checked++
				for _, host := range []string{s.host, "127.0.0.1:8080"} {
					got, ok := iammethods.REST(verb, host, path)
					// Where two services share a path (admin's and
					// credentials' deprecated signBlob), both are safe.
					if !ok || (got.Method != want && host == s.host) || (got.Method != want && safeMethods[got.Method] != safeMethods[want]) {
						t.Errorf("%s %s%s: mapped to %q (%v), want %s", verb, host, path, got.Method, ok, want)
					}
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked %d rules: the services' descriptors were not read", checked)
	}
	t.Logf("%d http rules checked", checked)
}

func httpPattern(r *annotations.HttpRule) (string, string) {
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		return "GET", p.Get
	case *annotations.HttpRule_Post:
		return "POST", p.Post
	case *annotations.HttpRule_Put:
		return "PUT", p.Put
	case *annotations.HttpRule_Patch:
		return "PATCH", p.Patch
	case *annotations.HttpRule_Delete:
		return "DELETE", p.Delete
	}
	return "", ""
}
