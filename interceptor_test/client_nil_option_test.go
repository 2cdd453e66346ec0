package interceptor_test

import (
	"context"
	"strings"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"

	"github.com/iamretry/iamretry/interceptor"
)

// TestNewClientNilOption: a nil option.ClientOption (a conditional option
// left unset) is bad input named by its position, not a nil-interface
// panic inside the constructor.
func TestNewClientNilOption(t *testing.T) {
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	try := func(name string, f func() error) {
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
		if err == nil || !strings.Contains(err.Error(), "nil") || !strings.Contains(err.Error(), name) {
			t.Fatalf("%s: err %v, want one naming the nil option", name, err)
		}
	}
	try("NewClient", func() error {
		_, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, append(g.fake.ClientOptions(), option.ClientOption(nil))...)
		return err
	})
	try("NewRESTClient", func() error {
		_, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, append(g.fake.RESTClientOptions(), option.ClientOption(nil))...)
		return err
	})
}
