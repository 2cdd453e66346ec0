package interceptor_test

// What the interceptor must not retry: conflicts, permanent errors, unsafe
// writes, calls that turned retries off; and the lost answer of an etag
// write, whose retry meets its own stale etag.

import (
	"context"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

const (
	testRole   = "roles/viewer"
	testMember = "user:alice@example.com"
)

// TestNotRetriedOneAttempt: ABORTED from a stale etag (Conflict: the
// caller reruns its read-modify-write) and the permanent codes come back
// after exactly one attempt, through each kind of client, even where the
// request is safe to retry (reads, etag writes).
func TestNotRetriedOneAttempt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		code  codes.Code
		class iamcodes.Class
		// do makes the failing call and returns the method it called.
		do func(t *testing.T, g *rig, k e2eKind) (iamtest.Method, error)
	}{
		{
			name: "ABORTED stale etag", code: codes.Aborted, class: iamcodes.Conflict,
			do: func(t *testing.T, g *rig, k e2eKind) (iamtest.Method, error) {
				p, err := k.get(ctx, g, g.sa.Name)
				if err != nil {
					t.Fatal(err)
				}
				// Another writer lands first and moves the etag.
				if _, err := k.set(ctx, g, g.sa.Name, grant(p, "roles/editor", "user:bob@example.com")); err != nil {
					t.Fatal(err)
				}
				g.reset()
				_, err = k.set(ctx, g, g.sa.Name, grant(p, testRole, testMember))
				if msg := status.Convert(err).Message(); msg != concurrentChangeMessage {
					t.Errorf("message %q, want IAM's %q", msg, concurrentChangeMessage)
				}
				return k.setMethod, err
			},
		},
		{
			name: "PERMISSION_DENIED", code: codes.PermissionDenied, class: iamcodes.Permanent,
			do: func(t *testing.T, g *rig, k e2eKind) (iamtest.Method, error) {
				g.fake.FailNext(k.readMethod, 1, codes.PermissionDenied)
				return k.readMethod, k.read(ctx, g)
			},
		},
		{
			name: "INVALID_ARGUMENT bad member", code: codes.InvalidArgument, class: iamcodes.Permanent,
			do: func(t *testing.T, g *rig, k e2eKind) (iamtest.Method, error) {
				p, err := k.get(ctx, g, g.sa.Name)
				if err != nil {
					t.Fatal(err)
				}
				g.reset()
				// A member without its type prefix; the write carries the
				// etag, so only the error's class stops a retry.
				_, err = k.set(ctx, g, g.sa.Name, grant(p, testRole, "alice@example.com"))
				return k.setMethod, err
			},
		},
		{
			name: "UNIMPLEMENTED", code: codes.Unimplemented, class: iamcodes.Permanent,
			do: func(t *testing.T, g *rig, k e2eKind) (iamtest.Method, error) {
				if k.name == "admin.IamClient" {
					// A read the fake does not implement: its own answer.
					_, err := g.admin.QueryAuditableServices(ctx, &adminpb.QueryAuditableServicesRequest{
						FullResourceName: "//iam.googleapis.com/" + g.sa.Name,
					})
					return "/google.iam.admin.v1.IAM/QueryAuditableServices", err
				}
				g.fake.FailNext(k.readMethod, 1, codes.Unimplemented)
				return k.readMethod, k.read(ctx, g)
			},
		},
	}
	for _, c := range cases {
		for _, k := range e2eKinds {
			t.Run(c.name+"/"+k.name, func(t *testing.T) {
				g := newRig(t, withGRPC(), failedAttemptsOnly())
				method, err := c.do(t, g, k)
				wantCode(t, err, c.code)
				wantSleeps(t, g, nil)
				wantLog(t, g, method, nil, c.code)
				if n := g.fake.CountCalls(iamtest.AnyMethod); n != 1 {
					t.Errorf("fake saw %d calls, want 1: %+v", n, g.fake.Calls())
				}
				if a := wantLastAttempt(t, g, 1, interceptor.NotRetryable); a.Class != c.class {
					t.Errorf("classed %v, want %v", a.Class, c.class)
				}
			})
		}
	}
}

// TestCreateServiceAccountKeyNeverRetried: each CreateServiceAccountKey
// mints a new private key, so a transient failure is never retried: one
// call, and no key beyond the one the server committed, if it did.
func TestCreateServiceAccountKeyNeverRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		inject func(f *iamtest.Server)
		keys   int
	}{
		{"UNAVAILABLE before the key is minted", func(f *iamtest.Server) {
			f.FailNext(iamtest.MethodCreateServiceAccountKey, 1, codes.Unavailable)
		}, 0},
		{"answer lost after the key is minted", func(f *iamtest.Server) {
			f.LoseNextAnswers(iamtest.MethodCreateServiceAccountKey, 1)
		}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			c.inject(g.fake)

			_, err := g.admin.CreateServiceAccountKey(ctx, &adminpb.CreateServiceAccountKeyRequest{Name: g.sa.Name})
			wantInjected(t, err, codes.Unavailable)
			wantSleeps(t, g, nil)
			wantLog(t, g, iamtest.MethodCreateServiceAccountKey, nil, codes.Unavailable)
			if a := wantLastAttempt(t, g, 1, interceptor.Unsafe); a.Class != iamcodes.Transient {
				t.Errorf("classed %v, want Transient (retryable, but not this method)", a.Class)
			}
			if keys := g.fake.ServiceAccountKeys(g.sa.Name); len(keys) != c.keys {
				t.Errorf("%d keys minted, want %d", len(keys), c.keys)
			}
		})
	}
}

// TestSetIamPolicyRetriedOnlyWithEtag: a write that carries the etag it read
// is retried after UNAVAILABLE and lands; a blind write (no etag), which
// could undo a concurrent change if replayed, is not retried.
func TestSetIamPolicyRetriedOnlyWithEtag(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range e2eKinds {
		t.Run(k.name+"/with etag", func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			p, err := k.get(ctx, g, g.sa.Name)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.GetEtag()) == 0 {
				t.Fatal("the read policy has no etag")
			}
			g.fake.FailNext(k.setMethod, 1, codes.Unavailable)

			if _, err := k.set(ctx, g, g.sa.Name, grant(p, testRole, testMember)); err != nil {
				t.Fatalf("etag write after UNAVAILABLE: %v", err)
			}
			wantSleeps(t, g, secs(1.5))
			wantLog(t, g, k.setMethod, secs(1.5), codes.Unavailable, codes.OK)
			if !hasMember(g.fake.Policy(g.sa.Name), testRole, testMember) {
				t.Errorf("the write did not land: %v", g.fake.Policy(g.sa.Name))
			}
		})
		t.Run(k.name+"/blind", func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			p, err := k.get(ctx, g, g.sa.Name)
			if err != nil {
				t.Fatal(err)
			}
			blind := grant(p, testRole, testMember)
			blind.Etag = nil
			g.fake.FailNext(k.setMethod, 1, codes.Unavailable)

			_, err = k.set(ctx, g, g.sa.Name, blind)
			wantInjected(t, err, codes.Unavailable)
			wantSleeps(t, g, nil)
			wantLog(t, g, k.setMethod, nil, codes.Unavailable)
			wantLastAttempt(t, g, 1, interceptor.Unsafe)
			if hasMember(g.fake.Policy(g.sa.Name), testRole, testMember) {
				t.Errorf("a blind write landed though it failed before the handler: %v", g.fake.Policy(g.sa.Name))
			}
		})
	}
}

// TestDisablePerCall: interceptor.Disable() (through gax.WithGRPCOptions on
// the GAPIC clients) returns a call's first failure as it is; the next call,
// without it, is retried again.
func TestDisablePerCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			g.fake.FailNext(k.readMethod, 1, codes.Unavailable)

			err := k.read(ctx, g, interceptor.Disable())
			wantInjected(t, err, codes.Unavailable)
			wantSleeps(t, g, nil)
			wantLog(t, g, k.readMethod, nil, codes.Unavailable)
			wantLastAttempt(t, g, 1, interceptor.Disabled)

			g.reset()
			g.fake.FailNext(k.readMethod, 1, codes.Unavailable)
			if err := k.read(ctx, g); err != nil {
				t.Fatalf("the next call, without Disable(): %v", err)
			}
			wantLog(t, g, k.readMethod, secs(1.5), codes.Unavailable, codes.OK)
		})
	}
}

// TestLostAnswerOnEtagWrite: SetIamPolicy with the read etag commits, but
// its answer is lost (UNAVAILABLE). The write is safe to retry, and the
// interceptor retries it; the replay now carries an etag that its own first
// attempt made stale, so IAM answers ABORTED, and that is what the caller
// gets, although its change is in place.
//
// This is the guidance's point: a lone write cannot be retried to success
// once its answer may have been lost; the caller must rerun the whole
// read-modify-write (the policy package's Updater does), whose fresh read
// finds the change already made, and ends there. The interceptor's part is
// to return ABORTED unchanged and not retry it (Conflict is never retried as
// a lone write).
func TestLostAnswerOnEtagWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, k := range e2eKinds {
		t.Run(k.name, func(t *testing.T) {
			g := newRig(t, withGRPC(), failedAttemptsOnly())
			p, err := k.get(ctx, g, g.sa.Name)
			if err != nil {
				t.Fatal(err)
			}
			g.fake.LoseNextAnswers(k.setMethod, 1)

			_, err = k.set(ctx, g, g.sa.Name, grant(p, testRole, testMember))
			wantCode(t, err, codes.Aborted)
			if msg := status.Convert(err).Message(); msg != concurrentChangeMessage {
				t.Errorf("message %q, want IAM's stale-etag answer %q", msg, concurrentChangeMessage)
			}
			wantSleeps(t, g, secs(1.5))
			wantLog(t, g, k.setMethod, secs(1.5), codes.Unavailable, codes.Aborted)
			calls := g.callsOf(k.setMethod)
			if !calls[0].Injected || calls[1].Injected {
				t.Errorf("want the lost answer injected and ABORTED from the fake's own etag check: %+v", calls)
			}
			as := g.Attempts()
			if len(as) != 2 || as[0].Reason != interceptor.Retry || as[0].Class != iamcodes.Transient ||
				as[1].Reason != interceptor.NotRetryable || as[1].Class != iamcodes.Conflict {
				t.Fatalf("attempts %+v: want a transient retry, then a Conflict not retried", as)
			}

			// The rerun of the read-modify-write starts from a fresh read,
			// which finds the grant made by the first attempt, once.
			fresh, err := k.get(ctx, g, g.sa.Name)
			if err != nil {
				t.Fatal(err)
			}
			if !hasMember(fresh, testRole, testMember) || len(fresh.GetBindings()) != 1 || len(fresh.GetBindings()[0].GetMembers()) != 1 {
				t.Errorf("after the lost answer the policy is %v, want the one grant, once", fresh)
			}
		})
	}
}
