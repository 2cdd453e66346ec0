package iamv1_test

import (
	"strings"
	"testing"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
	"github.com/iamretry/iamretry/interceptor/role/iamv1"
)

// TestNilServiceRefusedByNewUpdater: Roles(nil) is a nil Client, which
// role.NewUpdater refuses naming it (it would panic at the first Update).
func TestNilServiceRefusedByNewUpdater(t *testing.T) {
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	if u, err := role.NewUpdater(iamv1.Roles(nil), r); u != nil || err == nil || !strings.Contains(err.Error(), "needs a Client") {
		t.Fatalf("%v, %v", u, err)
	}
}
