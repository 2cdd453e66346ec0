package interceptor_test

import (
	"fmt"

	"cloud.google.com/go/iam/apiv1/iampb"

	"github.com/iamretry/iamretry/interceptor"
)

// SafeToRetry is the table that decides whether a failed request may be
// sent again: reads are, a create of a key never is, and SetIamPolicy only
// with an etag (a replay with a stale etag then fails instead of
// overwriting another writer's grant).
func ExampleSafeToRetry() {
	for _, c := range []struct {
		method string
		req    any
	}{
		{"/google.iam.admin.v1.IAM/GetServiceAccount", nil},
		{"/google.iam.admin.v1.IAM/CreateServiceAccountKey", nil},
		{"/google.iam.v1.IAMPolicy/SetIamPolicy", &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{}}},
		{"/google.iam.v1.IAMPolicy/SetIamPolicy", &iampb.SetIamPolicyRequest{Policy: &iampb.Policy{Etag: []byte("BwX1")}}},
		{"GET /v1/whatever", nil},
		{"POST /v1/whatever", nil},
	} {
		fmt.Println(c.method, interceptor.SafeToRetry(c.method, c.req))
	}
	// Output:
	// /google.iam.admin.v1.IAM/GetServiceAccount true
	// /google.iam.admin.v1.IAM/CreateServiceAccountKey false
	// /google.iam.v1.IAMPolicy/SetIamPolicy false
	// /google.iam.v1.IAMPolicy/SetIamPolicy true
	// GET /v1/whatever true
	// POST /v1/whatever false
}
