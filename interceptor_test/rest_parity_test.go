package interceptor_test

// Issue 19 end to end: the RoundTripper under the real discovery and GAPIC
// REST clients, against the fake's REST face over loopback HTTP, answers a
// failure as the interceptor answers it over gRPC.

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
	crmadapter "github.com/iamretry/iamretry/interceptor/policy/crmv3"
)

// TestRESTPerAttemptCutUnderUpdaterIsTransient (issue 19 item 4): an
// attempt cut by the RoundTripper's own per-attempt timeout, under a policy
// Updater whose context lives, is transient to the Updater, as over gRPC:
// the Updater reads again and the change is made.
func TestRESTPerAttemptCutUnderUpdaterIsTransient(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil), withRetrier(interceptor.WithPerAttemptTimeout(2*time.Second)))
	// The first read hangs (the fake's latency, on real timers) past the
	// per-attempt timeout; the Updater's observer lifts it once the
	// Updater has seen the failure, so the read it retries answers.
	g.fake.SetLatency(iamtest.MethodProjectsGetIamPolicy, time.Hour)
	var seen []interceptor.Attempt
	ur, err := interceptor.New(interceptor.WithClock(g.clock), interceptor.WithRandom(halfRandom),
		interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
			seen = append(seen, a)
			g.fake.SetLatency(iamtest.MethodProjectsGetIamPolicy, 0)
		}))
	if err != nil {
		t.Fatal(err)
	}
	u, err := policy.NewUpdater(crmadapter.Projects(g.crm), ur)
	if err != nil {
		t.Fatal(err)
	}
	p, err := u.Update(context.Background(), "projects/p1", policy.AddBinding("roles/viewer", "user:cut@example.com"))
	if err != nil {
		t.Fatalf("Update: %v; attempts %+v", err, seen)
	}
	if !hasMember(p, "roles/viewer", "user:cut@example.com") {
		t.Fatalf("policy %v: the change was not made", p)
	}
	if len(seen) == 0 || seen[0].Reason != interceptor.Retry || seen[0].Err == nil {
		t.Fatalf("the Updater's first attempt: %+v, want a retried cut", seen)
	}
	if !strings.Contains(seen[0].Err.Error(), "per-attempt timeout") {
		t.Fatalf("the Updater saw %v, want the RoundTripper's per-attempt cut", seen[0].Err)
	}
}

// TestRESTPerAttemptCutUnderDoIsTransient: the same under Retrier.Do over a
// discovery client.
func TestRESTPerAttemptCutUnderDoIsTransient(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil), withRetrier(interceptor.WithPerAttemptTimeout(2*time.Second)))
	g.fake.SetLatency(iamtest.MethodProjectsGetIamPolicy, time.Hour)
	var n atomic.Int32
	err := g.retrier.Do(context.Background(), "read", func(ctx context.Context) error {
		if n.Add(1) >= 2 {
			g.fake.SetLatency(iamtest.MethodProjectsGetIamPolicy, 0)
		}
		_, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Context(ctx).Do()
		return err
	})
	// 2 runs; more only if a loaded machine makes a later read outlast
	// 2 s too (also a cut, also retried).
	if err != nil || n.Load() < 2 {
		t.Fatalf("Do: %d runs, err %v", n.Load(), err)
	}
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// flakyDialClient is an *http.Client whose first dial is refused (a closed
// port) and whose later dials reach srv.
func flakyDialClient(t *testing.T, g *rig, refuse int) *http.Client {
	dead, live := closedAddr(t), strings.TrimPrefix(g.restSrv.URL, "http://")
	var dials atomic.Int32
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		if int(dials.Add(1)) <= refuse {
			return d.DialContext(ctx, network, dead)
		}
		return d.DialContext(ctx, network, live)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: g.retrier.RoundTripper(tr)}
}

// TestRESTDialRefusedUnsafeCreateRetried (issue 19 item 1): a refused
// connection never left the client, so even a create (unsafe to send
// again) is retried, through the discovery client; it lands once.
func TestRESTDialRefusedUnsafeCreateRetried(t *testing.T) {
	t.Parallel()
	g := newRig(t, withREST(nil))
	svc, err := iamv1.NewService(context.Background(), option.WithEndpoint(g.restSrv.URL+"/"), option.WithHTTPClient(flakyDialClient(t, g, 1)))
	if err != nil {
		t.Fatal(err)
	}
	sa, err := svc.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "dial-retried"}).Do()
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccount); n != 1 || !strings.Contains(sa.Name, "dial-retried") {
		t.Fatalf("%d creates reached the server (%v), want 1", n, sa.Name)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.attempts) == 0 || g.attempts[0].Reason != interceptor.Retry {
		t.Fatalf("attempts %+v, want the refused dial retried", g.attempts)
	}
}

// resetAfterRead wraps h: once armed, the next request whose path ends in
// suffix is read whole, then its connection is closed with no answer (the server may
// have acted: here it did, the handler ran).
func resetAfterRead(armed *atomic.Bool, suffix string, act bool) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			cut := strings.HasSuffix(r.URL.Path, suffix) && armed.CompareAndSwap(true, false)
			if !cut {
				h.ServeHTTP(w, r)
				return
			}
			if act {
				h.ServeHTTP(httptest.NewRecorder(), r) // the server acted; its answer is lost
			}
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		})
	}
}

// TestRESTConnectionLostAfterWrite (issue 19 item 1): a connection closed
// after the request was written may follow a request the server acted on:
// a safe read is retried (GAPIC REST and discovery clients); a create is
// not, and the caller gets an UNAVAILABLE transport error.
func TestRESTConnectionLostAfterWrite(t *testing.T) {
	t.Parallel()
	t.Run("GAPIC GetIamPolicy retried", func(t *testing.T) {
		var armed atomic.Bool
		g := newRig(t, withREST(resetAfterRead(&armed, ":getIamPolicy", false)))
		armed.Store(true)
		if _, err := g.restPolicy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: g.restSA}); err != nil {
			t.Fatalf("GetIamPolicy: %v; attempts %+v", err, g.attempts)
		}
		if n := g.fake.CountCalls(iamtest.MethodAdminGetIamPolicy); n != 1 || len(g.attempts) < 2 || g.attempts[0].Reason != interceptor.Retry {
			t.Fatalf("%d reads answered, attempts %+v", n, g.attempts)
		}
	})
	t.Run("discovery create not retried", func(t *testing.T) {
		var armed atomic.Bool
		g := newRig(t, withREST(resetAfterRead(&armed, "/serviceAccounts", true)))
		armed.Store(true)
		_, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "lost-answer"}).Do()
		if err == nil {
			t.Fatal("create: no error, want the lost connection's")
		}
		if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccount); n != 1 {
			t.Fatalf("%d creates, want 1: an unsafe request is never sent again after it may have landed", n)
		}
		if len(g.attempts) != 1 || g.attempts[0].Reason != interceptor.Unsafe {
			t.Fatalf("attempts %+v, want one, Unsafe", g.attempts)
		}
		wantCode(t, err, codes.Unavailable)
	})
}

// TestREST429RetryAfterThroughDiscovery (issue 19 item 5): the fake answers
// a create with 429 and Retry-After: 5 (no RetryInfo): the discovery client's
// create is retried after 5 s, though it is unsafe to send again (a 429 is a
// definite rejection), and lands once.
func TestREST429RetryAfterThroughDiscovery(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	g := newRig(t, withREST(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			quota := strings.HasSuffix(r.URL.Path, "/serviceAccounts") && r.Method == "POST" && armed.CompareAndSwap(true, false)
			if quota {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(429)
				_, _ = w.Write([]byte(`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}))
	armed.Store(true)
	if _, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "after-quota"}).Do(); err != nil {
		t.Fatalf("create: %v", err)
	}
	if s := g.clock.Sleeps(); len(s) != 1 || s[0] != 5*time.Second {
		t.Fatalf("waits %v, want [5s]", s)
	}
	if n := g.fake.CountCalls(iamtest.MethodCreateServiceAccount); n != 1 {
		t.Fatalf("%d creates reached the fake, want 1", n)
	}
}

// TestREST500UnknownThroughGAPIC (issue 19 item 8): a 500 whose body says
// UNKNOWN is retried for a GAPIC REST client's read, and never for a
// discovery create.
func TestREST500UnknownThroughGAPIC(t *testing.T) {
	t.Parallel()
	var left atomic.Int32
	g := newRig(t, withREST(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if left.Add(-1) >= 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(500)
				_, _ = w.Write([]byte(`{"error":{"code":500,"message":"Unknown Error.","status":"UNKNOWN"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}))
	left.Store(2)
	if _, err := g.project.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/p1"}); err != nil {
		t.Fatalf("GAPIC GetIamPolicy: %v", err)
	}
	if n := g.fake.CountCalls(iamtest.MethodProjectsGetIamPolicy); n != 1 || len(g.clock.Sleeps()) != 2 {
		t.Fatalf("%d reads answered after waits %v, want 1 after 2", n, g.clock.Sleeps())
	}
	g.reset()
	left.Store(1)
	_, err := g.iam.Projects.ServiceAccounts.Create("projects/p1", &iamv1.CreateServiceAccountRequest{AccountId: "unknown-500"}).Do()
	if err == nil || len(g.attempts) != 1 || g.attempts[0].Reason != interceptor.Unsafe {
		t.Fatalf("create: err %v attempts %+v, want the 500 at once, Unsafe", err, g.attempts)
	}
}

// TestREST429RetryAfterUnderDo (issue 19 item 5, an owner above the
// RoundTripper): Retrier.Do over a discovery client reads the 429's
// Retry-After as RetryInfo, as over gRPC: it retries after that delay.
func TestREST429RetryAfterUnderDo(t *testing.T) {
	t.Parallel()
	var armed atomic.Bool
	g := newRig(t, withREST(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, ":getIamPolicy") && armed.CompareAndSwap(true, false) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "4")
				w.WriteHeader(429)
				_, _ = w.Write([]byte(`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}))
	armed.Store(true)
	runs := 0
	err := g.retrier.Do(context.Background(), "read", func(ctx context.Context) error {
		runs++
		_, err := g.crm.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Context(ctx).Do()
		return err
	})
	if err != nil || runs != 2 {
		t.Fatalf("Do: %d runs, err %v", runs, err)
	}
	if s := g.clock.Sleeps(); len(s) != 1 || s[0] != 4*time.Second {
		t.Fatalf("waits %v, want [4s]", s)
	}
}
