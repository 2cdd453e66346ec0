package iamtest_test

import (
	"context"
	"fmt"

	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
)

// WithSeed fixes the random source behind SetFailureRate and
// SetLostAnswerRate: two fakes with one seed fail the same calls, so a
// failing random-fault test replays exactly.
func ExampleWithSeed() {
	ctx := context.Background()
	for range 2 {
		srv, err := iamtest.New(iamtest.WithSeed(42))
		if err != nil {
			fmt.Println(err)
			return
		}
		client, err := iamapi.NewIamPolicyClient(ctx, srv.ClientOptions()...)
		if err != nil {
			fmt.Println(err)
			return
		}
		srv.SetFailureRate(iamtest.MethodGetIamPolicy, 0.5, codes.Unavailable)
		var got []string
		for range 8 {
			_, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p"}, gax.WithRetry(nil))
			got = append(got, status.Code(err).String())
		}
		fmt.Println(got)
		client.Close()
		srv.Close()
	}
	// Output:
	// [OK OK Unavailable Unavailable OK OK OK OK]
	// [OK OK Unavailable Unavailable OK OK OK OK]
}
