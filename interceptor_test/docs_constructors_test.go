package interceptor_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamapi "cloud.google.com/go/iam/apiv1"
	iamv2 "cloud.google.com/go/iam/apiv2"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
)

// TestDocsNameConstructorsThatExist (issue 33 item 7): every client
// constructor the README and the library's docs name, under the package
// names they use, exists: the table holds the functions themselves, so the
// compiler checks it. (go doc interceptor.NewRESTClient named
// admin.NewIamRESTClient; the admin package has no REST client.)
func TestDocsNameConstructorsThatExist(t *testing.T) {
	t.Parallel()
	exist := map[string]any{
		"admin.NewIamClient":                     admin.NewIamClient,
		"iamapi.NewIamPolicyClient":              iamapi.NewIamPolicyClient,
		"iamapi.NewIamPolicyRESTClient":          iamapi.NewIamPolicyRESTClient,
		"iamv2.NewPoliciesClient":                iamv2.NewPoliciesClient,
		"iamv2.NewPoliciesRESTClient":            iamv2.NewPoliciesRESTClient,
		"resourcemanager.NewProjectsClient":      resourcemanager.NewProjectsClient,
		"resourcemanager.NewProjectsRESTClient":  resourcemanager.NewProjectsRESTClient,
		"iam.NewService":                         iamv1.NewService,
		"iamv1.NewService":                       iamv1.NewService,
		"crm.NewService":                         crm.NewService,
		"resourcemanager.NewService":             crm.NewService,
		"cloudresourcemanager.NewService":        crm.NewService,
		"resourcemanager.NewFoldersClient":       resourcemanager.NewFoldersClient,
		"resourcemanager.NewOrganizationsClient": resourcemanager.NewOrganizationsClient,
	}
	named := regexp.MustCompile(`\b(admin|iamapi|iamv2|resourcemanager|cloudresourcemanager|iam|iamv1|crm)\.New[A-Za-z]*\b`)
	var files []string
	for _, glob := range []string{"../README.md", "../interceptor/*.go", "../interceptor/*/*.go"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, f := range files {
		if filepath.Ext(f) == ".go" && regexp.MustCompile(`_test\.go$`).MatchString(f) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range named.FindAllString(string(b), -1) {
			if exist[n] == nil {
				t.Errorf("%s names %s, which is not a constructor", f, n)
			}
		}
	}
}
