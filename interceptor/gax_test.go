package interceptor_test

import (
	"strings"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	gax "github.com/googleapis/gax-go/v2"
	"github.com/iamretry/iamretry/interceptor"
)

func resolve(opts []gax.CallOption) gax.CallSettings {
	var s gax.CallSettings
	for _, o := range opts {
		o.Resolve(&s)
	}
	return s
}

func TestDisableGAXRetries(t *testing.T) {
	t.Parallel()
	retrying := []gax.CallOption{gax.WithTimeout(time.Minute), gax.WithRetry(func() gax.Retryer { return gax.OnCodes(nil, gax.Backoff{}) })}
	shared := append(make([]gax.CallOption, 0, 8), retrying...) // spare capacity: an append must not write into it
	opts := &admin.IamCallOptions{GetServiceAccount: shared, ListRoles: retrying}
	if resolve(opts.GetServiceAccount).Retry == nil {
		t.Fatal("setup: expected a retry setting")
	}
	if err := interceptor.DisableGAXRetries(opts); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string][]gax.CallOption{"GetServiceAccount": opts.GetServiceAccount, "ListRoles": opts.ListRoles, "CreateRole (was empty)": opts.CreateRole} {
		if resolve(o).Retry != nil {
			t.Errorf("%s still retries", name)
		}
	}
	if len(opts.GetServiceAccount) != 3 || resolve(shared[:2]).Retry == nil || resolve(retrying).Retry == nil {
		t.Fatal("the original slices were changed or timeouts lost")
	}
}

func TestDisableGAXRetriesRefusesOtherThings(t *testing.T) {
	t.Parallel()
	var nilOpts *admin.IamCallOptions
	for _, v := range []any{nil, admin.IamCallOptions{}, nilOpts, &struct{ A int }{}, new(int), "x"} {
		err := interceptor.DisableGAXRetries(v)
		if err == nil || !strings.Contains(err.Error(), "CallOptions") {
			t.Errorf("DisableGAXRetries(%T): %v", v, err)
		}
	}
}
