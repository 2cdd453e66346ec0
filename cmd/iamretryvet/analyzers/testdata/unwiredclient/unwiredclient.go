// Package unwiredclient uses iamretry: its IAM clients built without the
// Retrier are reported; the ones wired (by NewClient, NewRESTClient or by
// hand) are not.
package unwiredclient

import (
	"context"
	"net/http"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamapi "cloud.google.com/go/iam/apiv1"
	credentials "cloud.google.com/go/iam/credentials/apiv1"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"

	"github.com/iamretry/iamretry/interceptor"
)

func unwired(ctx context.Context) error {
	c, err := admin.NewIamClient(ctx) // want `admin.NewIamClient builds a client the Retrier never sees: build it with interceptor.NewClient\(ctx, r, admin.NewIamClient, opts...\)`
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := iamapi.NewIamPolicyRESTClient(ctx); err != nil { // want `interceptor.NewRESTClient\(ctx, r, iam.NewIamPolicyRESTClient`
		return err
	}
	if _, err := credentials.NewIamCredentialsClient(ctx); err != nil { // want `credentials.NewIamCredentialsClient builds a client`
		return err
	}
	if _, err := resourcemanager.NewProjectsClient(ctx); err != nil { // want `resourcemanager.NewProjectsClient builds a client`
		return err
	}
	if _, err := iamv1.NewService(ctx); err != nil { // want `iam.NewService builds a client .* interceptor.NewRESTClient`
		return err
	}
	_, err = crm.NewService(ctx, option.WithHTTPClient(http.DefaultClient)) // want `cloudresourcemanager.NewService builds a client`
	return err
}

// Not reported: wired by NewClient and NewRESTClient.
func wired(ctx context.Context, r *interceptor.Retrier) error {
	c, err := interceptor.NewClient(ctx, r, admin.NewIamClient)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = interceptor.NewRESTClient(ctx, r, iamv1.NewService)
	return err
}

// Not reported: a REST client hand-wired with r.RoundTripper.
func handWiredREST(ctx context.Context, r *interceptor.Retrier) error {
	hc := &http.Client{Transport: r.RoundTripper(http.DefaultTransport)}
	if _, err := iamv1.NewService(ctx, option.WithHTTPClient(hc)); err != nil {
		return err
	}
	hc2 := &http.Client{}
	hc2.Transport = r.RoundTripper(nil)
	_, err := iamapi.NewIamPolicyRESTClient(ctx, option.WithHTTPClient(hc2))
	return err
}

// Not reported here: a gRPC client given the interceptor is gaxstacked's.
func handWiredGRPC(ctx context.Context, r *interceptor.Retrier) error {
	c, err := admin.NewIamClient(ctx, option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())))
	if err != nil {
		return err
	}
	return interceptor.DisableGAXRetries(c.CallOptions)
}

// Not reported: a client of an emulator or fake (no authentication).
func emulator(ctx context.Context) error {
	_, err := admin.NewIamClient(ctx, option.WithEndpoint("localhost:8080"), option.WithoutAuthentication())
	return err
}

// Not reported: silenced.
func ignored(ctx context.Context) error {
	_, err := admin.NewIamClient(ctx) //iamretryvet:ignore unwiredclient used only for one-shot creates
	return err
}
