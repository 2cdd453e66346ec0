package deny_test

import (
	"strings"
	"testing"

	iamv2 "cloud.google.com/go/iam/apiv2"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestNewUpdaterRefusesTypedNilClient: a nil *iamv2.PoliciesClient (a
// client whose constructor failed, its error unchecked) is refused naming
// the Client, not accepted to panic at the first Update.
func TestNewUpdaterRefusesTypedNilClient(t *testing.T) {
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	var pc *iamv2.PoliciesClient
	if u, err := deny.NewUpdater(pc, r); u != nil || err == nil || !strings.Contains(err.Error(), "needs a Client") {
		t.Fatalf("%v, %v", u, err)
	}
}
