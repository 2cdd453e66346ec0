package interceptor_test

import (
	"context"
	"io"
	"strings"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"

	"github.com/iamretry/iamretry/interceptor"
)

// TestNewClientTypedNilInInterface: a constructor whose client type is an
// interface, returning a nil client pointer in it without an error, gets
// the "nil client" error, not a nil-pointer panic from calling its
// Connection.
func TestNewClientTypedNilInInterface(t *testing.T) {
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	call := func(name string, f func() error) {
		t.Helper()
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Fatalf("%s panicked: %v", name, v)
				}
			}()
			err = f()
		}()
		if err == nil || !strings.Contains(err.Error(), "nil") {
			t.Fatalf("%s: err %v, want one naming the nil client", name, err)
		}
	}
	call("NewClient", func() error {
		_, err := interceptor.NewClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (io.Closer, error) {
			var c *admin.IamClient
			return c, nil
		}, g.fake.ClientOptions()...)
		return err
	})
	call("NewRESTClient", func() error {
		_, err := interceptor.NewRESTClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (any, error) {
			var s *iamv1.Service
			return s, nil
		}, g.fake.RESTClientOptions()...)
		return err
	})
}

// TestNewClientInterfaceTyped: a constructor whose client type is an
// interface (a generic wrapper's any) holding a GAPIC client is wired as
// the client itself; the error does not claim that *admin.IamClient has no
// Connection method.
func TestNewClientInterfaceTyped(t *testing.T) {
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.retrier, func(ctx context.Context, opts ...option.ClientOption) (io.Closer, error) {
		return admin.NewIamClient(ctx, opts...)
	}, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkWired(t, c.(*admin.IamClient).CallOptions)
}
