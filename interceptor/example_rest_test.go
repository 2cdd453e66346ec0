package interceptor_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/iamretry/iamretry/interceptor"
)

// exampleBase makes a function an http.RoundTripper.
type exampleBase func(*http.Request) (*http.Response, error)

func (f exampleBase) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// The RoundTripper answers a REST failure as the interceptor answers the
// same failure over gRPC: a connection reset is UNAVAILABLE, retried for a
// read; a 429 with Retry-After is a 429 with RetryInfo, retried even for a
// create (the server did not act).
func ExampleRetrier_RoundTripper() {
	calls := 0
	base := exampleBase(func(req *http.Request) (*http.Response, error) {
		calls++
		switch calls {
		case 1: // the read's first attempt: the connection is reset
			return nil, os.NewSyscallError("read", syscall.ECONNRESET)
		case 3: // the create's first attempt: quota, come back later
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"0"}},
				Body: io.NopCloser(strings.NewReader(`{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}`))}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(`{}`))}, nil
	})
	r, err := interceptor.New(
		interceptor.WithBackoff(interceptor.Backoff{Initial: time.Millisecond, Multiplier: 2, Max: time.Millisecond, Jitter: interceptor.NoJitter}),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			fmt.Printf("%s attempt %d: %v (%v, %v)\n", a.Method, a.N, a.Err, a.Class, a.Reason)
		}),
	)
	if err != nil {
		panic(err)
	}
	hc := &http.Client{Transport: r.RoundTripper(base)}

	resp, err := hc.Get("https://iam.googleapis.com/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	resp, err = hc.Post("https://iam.googleapis.com/v1/projects/p/serviceAccounts", "application/json", strings.NewReader(`{"accountId":"a"}`))
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, "after", calls, "attempts")
	// Output:
	// /google.iam.admin.v1.IAM/GetServiceAccount attempt 1: read: connection reset by peer (Transient, retry)
	// /google.iam.admin.v1.IAM/GetServiceAccount attempt 2: <nil> (Permanent, succeeded)
	// /google.iam.admin.v1.IAM/CreateServiceAccount attempt 1: googleapi: got HTTP response code 429 with body: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}} (Transient, retry)
	// /google.iam.admin.v1.IAM/CreateServiceAccount attempt 2: <nil> (Permanent, succeeded)
	// 200 after 4 attempts
}
