package interceptor_test

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/iamretry/iamretry/interceptor"
	grpccodes "google.golang.org/grpc/codes"
)

func TestUnsafeMethodsNotRetried(t *testing.T) {
	t.Parallel()
	withEtag := &iampb.SetIamPolicyRequest{Resource: "r", Policy: &iampb.Policy{Etag: []byte("BwX")}}
	blind := &iampb.SetIamPolicyRequest{Resource: "r", Policy: &iampb.Policy{}}
	for _, tc := range []struct {
		method string
		req    any
		calls  int
	}{
		{"/google.iam.admin.v1.IAM/CreateServiceAccountKey", nil, 1},
		{"/google.iam.v1.IAMPolicy/SetIamPolicy", blind, 1},
		{"/google.iam.v1.IAMPolicy/SetIamPolicy", withEtag, 2},
		{"/google.iam.admin.v1.IAM/SetIamPolicy", withEtag, 2},
		{"/example.v1.Unknown/DoThing", nil, 1},
		{"/example.v1.Unknown/GetThing", nil, 2},
	} {
		h := newHarness(t)
		s := &script{errs: fail(grpccodes.Unavailable, 1)}
		_ = h.call(context.Background(), s, tc.method, tc.req)
		if s.calls != tc.calls {
			t.Errorf("%s (%T): calls %d, want %d", tc.method, tc.req, s.calls, tc.calls)
		}
		if tc.calls == 1 && h.attempts[0].Reason != interceptor.Unsafe {
			t.Errorf("%s: reason %v", tc.method, h.attempts[0].Reason)
		}
	}
}
