package deny_test

import (
	"context"
	"testing"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
)

// TestConflictsDoNotCountTowardMaxAttempts: NewUpdater promises that reruns
// after a conflict never count toward the Retrier's attempt cap: with
// WithMaxAttempts(1), four concurrent changes in a row (at the call, or as
// the operation's error) still end with the rule written once; a
// transient failure of a poll is the one attempt the cap allows no retry
// of.
func TestConflictsDoNotCountTowardMaxAttempts(t *testing.T) {
	for _, tr := range transports {
		for _, inOp := range []bool{false, true} {
			t.Run(tr, func(t *testing.T) {
				e := newEnv(t, tr, []interceptor.Option{interceptor.WithMaxAttempts(1)})
				e.seed(rule(0))
				if inOp {
					e.srv.SetDenyOperationDelay(2 * time.Second)
					e.srv.SetDenyStaleEtagInOperation(true)
				}
				e.srv.ConcurrentWriteNext(iamtest.MethodUpdatePolicy, 4)
				if _, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(1))); err != nil {
					t.Fatalf("4 conflicts under WithMaxAttempts(1): %v", err)
				}
				if e.count(rule(1)) != 1 {
					t.Fatalf("rule %d times", e.count(rule(1)))
				}
				e.srv.SetDenyOperationDelay(2 * time.Second)
				e.srv.FailNext(iamtest.MethodGetOperation, 1, grpccodes.Unavailable)
				_, err := e.u.Update(context.Background(), policyName, deny.AddRule(rule(2)))
				if status.Code(err) != grpccodes.Unavailable {
					t.Fatalf("a failed poll under WithMaxAttempts(1): %v, want UNAVAILABLE", err)
				}
			})
		}
	}
}
