package iamtest_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	iam "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// RESTClientOptions point a REST client at the fake's REST face: a
// discovery client (google.golang.org/api/iam/v1) or a GAPIC REST client
// (NewXxxRESTClient). Both faces share one store and one call log.
func ExampleServer_RESTClientOptions() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	s, err := iam.NewService(ctx, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa, err := s.Projects.ServiceAccounts.Create("projects/my-project", &iam.CreateServiceAccountRequest{AccountId: "robot-1"}).Context(ctx).Do()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sa.Email)

	pc, err := iamapi.NewIamPolicyRESTClient(ctx, srv.RESTClientOptions()...)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pc.Close()
	p, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/my-project/topics/orders"})
	fmt.Println(len(p.GetBindings()), "bindings,", err)
	fmt.Println("seen by the fake:", srv.ServiceAccount(sa.Name).GetEmail())
	// Output:
	// robot-1@my-project.iam.gserviceaccount.com
	// 0 bindings, <nil>
	// seen by the fake: robot-1@my-project.iam.gserviceaccount.com
}

// HTTPClient is the plain client of the REST face: wrap its Transport in a
// Retrier's RoundTripper to test the RoundTripper against the fake's
// faults (interceptor.NewRESTClient does this for you).
func ExampleServer_HTTPClient() {
	ctx := context.Background()
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	r, err := interceptor.New(interceptor.WithClock(iamtest.NewVirtualClock(time.Now())))
	if err != nil {
		fmt.Println(err)
		return
	}
	hc := &http.Client{Transport: r.RoundTripper(srv.HTTPClient().Transport)}
	s, err := iam.NewService(ctx, append(srv.RESTClientOptions(), option.WithHTTPClient(hc))...)
	if err != nil {
		fmt.Println(err)
		return
	}
	sa := srv.SeedServiceAccount("my-project", "robot-1")
	srv.FailNext(iamtest.MethodGetServiceAccount, 2, codes.Unavailable) // HTTP 503 twice
	got, err := s.Projects.ServiceAccounts.Get(sa.GetName()).Context(ctx).Do()
	fmt.Println(got.Email, err, "server calls:", srv.CountCalls(iamtest.MethodGetServiceAccount))
	// Output:
	// robot-1@my-project.iam.gserviceaccount.com <nil> server calls: 3
}

// RESTEndpoint is the base URL of the REST face, for a client of your own:
// the paths and JSON bodies are Google's.
func ExampleServer_RESTEndpoint() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.FailNext(iamtest.MethodCreateServiceAccount, 1, codes.ResourceExhausted)
	for range 2 {
		resp, err := srv.HTTPClient().Post(srv.RESTEndpoint()+"v1/projects/my-project/serviceAccounts",
			"application/json", strings.NewReader(`{"accountId":"robot-1"}`))
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, strings.Contains(string(body), "RESOURCE_EXHAUSTED"))
	}
	// Output:
	// 429 true
	// 200 false
}

// ServeREST serves the REST face on a listener of your own, for a client in
// another process (a CLI under test, a script): it reaches
// "http://" + lis.Addr().String() + "/". Close stops it and ServeREST
// returns nil.
func ExampleServer_ServeREST() {
	srv, err := iamtest.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeREST(lis) }()

	srv.SeedServiceAccount("my-project", "robot-1")
	resp, err := http.Get("http://" + lis.Addr().String() + "/v1/projects/my-project/serviceAccounts/robot-1@my-project.iam.gserviceaccount.com")
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, srv.CountCalls(iamtest.MethodGetServiceAccount), "call")
	srv.Close()
	fmt.Println("ServeREST returned:", <-served)
	// Output:
	// 200 1 call
	// ServeREST returned: <nil>
}
