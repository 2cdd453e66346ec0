package interceptor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// ConsecutiveReads sets how many good reads in a row WaitVisible wants; a
// bad read after a good one starts the count again. Here the resource is
// seen once, lost, then seen for good: 5 reads for 2 in a row.
func ExampleConsecutiveReads() {
	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	answers := []grpccodes.Code{grpccodes.NotFound, grpccodes.OK, grpccodes.NotFound, grpccodes.OK, grpccodes.OK}
	reads := 0
	got, err := interceptor.WaitVisible(context.Background(), r, "get robot", func(context.Context) (string, error) {
		c := answers[reads]
		reads++
		if c != grpccodes.OK {
			return "", status.Error(c, "not there yet")
		}
		return "robot", nil
	}, interceptor.ConsecutiveReads(2))
	fmt.Println(got, err, "after", reads, "reads")
	// Output:
	// robot <nil> after 5 reads
}

// An *UnconfirmedError says WaitVisible ended (here at its 3 s retry
// deadline, counted from the first NOT_FOUND) after a good read but short
// of the reads in a row it wanted: the value is the good read's, to use at
// the caller's risk.
func ExampleUnconfirmedError() {
	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}), interceptor.WithDeadline(3*time.Second),
		interceptor.WithRandom(func() float64 { return 0.5 }))
	if err != nil {
		fmt.Println(err)
		return
	}
	reads := 0
	got, err := interceptor.WaitVisible(context.Background(), r, "get robot", func(context.Context) (string, error) {
		reads++
		if reads == 1 {
			return "", status.Error(grpccodes.NotFound, "not there yet")
		}
		return "robot", nil
	}, interceptor.ConsecutiveReads(5))
	var ue *interceptor.UnconfirmedError
	if errors.As(err, &ue) {
		fmt.Printf("%q after %d reads: %d of %d good reads in a row\n", got, reads, ue.Reads, ue.Want)
	}
	fmt.Println(err)
	// Output:
	// "robot" after 3 reads: 2 of 5 good reads in a row
	// iamretry: WaitVisible(get robot): 2 of 5 consecutive good reads; not confirmed visible yet
}

// PermissionDeniedRetries bounds the 403 answers WaitVisible retries before
// its first good read (the admin API answers 403 for an account the caller
// cannot see yet); 0 returns the first 403 at once.
func ExamplePermissionDeniedRetries() {
	r, err := interceptor.New(interceptor.WithClock(&exampleClock{}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range []int{0, 5} {
		reads := 0
		_, err := interceptor.WaitVisible(context.Background(), r, "get robot", func(context.Context) (string, error) {
			reads++
			if reads <= 2 {
				return "", status.Error(grpccodes.PermissionDenied, "Permission iam.serviceAccounts.get denied")
			}
			return "robot", nil
		}, interceptor.PermissionDeniedRetries(n))
		fmt.Println(n, status.Code(err), "after", reads, "reads")
	}
	// Output:
	// 0 PermissionDenied after 1 reads
	// 5 OK after 5 reads
}
