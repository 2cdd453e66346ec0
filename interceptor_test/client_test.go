package interceptor_test

// NewClient and NewRESTClient with every client the issue names, against
// the public fake (gRPC and REST faces), on a virtual clock that reads the
// wall time, so that gax's 60 s timeout (a real context deadline) would be
// seen by the Retrier as a real run sees it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	credentials "cloud.google.com/go/iam/credentials/apiv1"
	"cloud.google.com/go/iam/credentials/apiv1/credentialspb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	gax "github.com/googleapis/gax-go/v2"
	crm "google.golang.org/api/cloudresourcemanager/v3"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
)

// oneSchedule is the attempts of one call under an outage within the
// rig's 2 min deadline: waits 1.5, 2.5, 4.5, 8.5, 16.5, 32, 32 (97.5 s);
// the next 32 s would end past 120 s.
const oneSchedule = 8

// grpcCase is one GAPIC gRPC client built by NewClient and one of its reads.
type grpcCase struct {
	name string
	// build builds the client with NewClient and returns the read and its
	// CallOptions (for the wiring checks) and Close.
	build func(ctx context.Context, g *rig) (read func(context.Context) error, callOptions any, closeFn func() error, err error)
}

func grpcCases() []grpcCase {
	return []grpcCase{
		{"admin.NewIamClient", func(ctx context.Context, g *rig) (func(context.Context) error, any, func() error, error) {
			c, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, g.fake.ClientOptions()...)
			if err != nil {
				return nil, nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
				return err
			}, c.CallOptions, c.Close, nil
		}},
		{"iamapi.NewIamPolicyClient", func(ctx context.Context, g *rig) (func(context.Context) error, any, func() error, error) {
			c, err := interceptor.NewClient(ctx, g.retrier, iamapi.NewIamPolicyClient, g.fake.ClientOptions()...)
			if err != nil {
				return nil, nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
				return err
			}, c.CallOptions, c.Close, nil
		}},
		{"resourcemanager.NewProjectsClient", func(ctx context.Context, g *rig) (func(context.Context) error, any, func() error, error) {
			c, err := interceptor.NewClient(ctx, g.retrier, resourcemanager.NewProjectsClient, g.fake.ClientOptions()...)
			if err != nil {
				return nil, nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
				return err
			}, c.CallOptions, c.Close, nil
		}},
		{"resourcemanager.NewFoldersClient", func(ctx context.Context, g *rig) (func(context.Context) error, any, func() error, error) {
			c, err := interceptor.NewClient(ctx, g.retrier, resourcemanager.NewFoldersClient, g.fake.ClientOptions()...)
			if err != nil {
				return nil, nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/123"})
				return err
			}, c.CallOptions, c.Close, nil
		}},
		{"resourcemanager.NewOrganizationsClient", func(ctx context.Context, g *rig) (func(context.Context) error, any, func() error, error) {
			c, err := interceptor.NewClient(ctx, g.retrier, resourcemanager.NewOrganizationsClient, g.fake.ClientOptions()...)
			if err != nil {
				return nil, nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "organizations/456"})
				return err
			}, c.CallOptions, c.Close, nil
		}},
	}
}

// gaxSettings resolves a method's CallOptions as gax does.
func gaxSettings(opts []gax.CallOption) (s gax.CallSettings, timeout time.Duration) {
	for _, o := range opts {
		o.Resolve(&s)
	}
	return s, time.Duration(reflect.ValueOf(&s).Elem().FieldByName("timeout").Int())
}

// checkWired fails unless every method of callOptions has gax retries and
// gax's timeout off.
func checkWired(t *testing.T, callOptions any) {
	t.Helper()
	s := reflect.ValueOf(callOptions).Elem()
	for i := range s.NumField() {
		opts, ok := s.Field(i).Interface().([]gax.CallOption)
		if !ok {
			continue
		}
		set, timeout := gaxSettings(opts)
		if set.Retry != nil {
			t.Errorf("%s.%s: gax retries still on", s.Type(), s.Type().Field(i).Name)
		}
		if timeout != 0 {
			t.Errorf("%s.%s: gax timeout %v still bounds the call", s.Type(), s.Type().Field(i).Name, timeout)
		}
	}
}

// TestNewClientOneSchedule: every GAPIC gRPC client built by NewClient makes
// the attempts of one schedule during an outage (no gax multiplication),
// and the Retrier's 2 min deadline governs, not gax's 60 s timeout.
func TestNewClientOneSchedule(t *testing.T) {
	t.Parallel()
	for _, c := range grpcCases() {
		t.Run(c.name, func(t *testing.T) {
			g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
			ctx := context.Background()
			read, co, closeFn, err := c.build(ctx, g)
			if err != nil {
				t.Fatal(err)
			}
			defer closeFn()
			checkWired(t, co)
			g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
			start := g.clock.Now()
			err = read(ctx)
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("read: %v, want UNAVAILABLE", err)
			}
			if n := g.fake.CountCalls(iamtest.AnyMethod); n != oneSchedule {
				t.Fatalf("%d server calls, want %d (one schedule)", n, oneSchedule)
			}
			if el := g.clock.Since(start); el != 97500*time.Millisecond {
				t.Fatalf("the call ended after %v, want 97.5s (past gax's 60s)", el)
			}
		})
	}
}

// TestHandWiredClientCutByGAXTimeout is the contrast: the admin client
// wired by hand (dial option and DisableGAXRetries) keeps gax's 60 s
// timeout, which cuts the 2 min deadline short (6 attempts, 33.5 s).
func TestHandWiredClientCutByGAXTimeout(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	c, err := admin.NewIamClient(ctx, append(g.fake.ClientOptions(),
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(g.retrier.UnaryClientInterceptor())))...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
		t.Fatal(err)
	}
	g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
	_, err = c.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
	if status.Code(err) != codes.Unavailable {
		t.Fatal(err)
	}
	if n := g.fake.CountCalls(iamtest.AnyMethod); n != 6 {
		t.Fatalf("%d server calls, want 6 (gax's 60s timeout)", n)
	}
}

// TestNewClientCredentials: the fake does not serve IAM Credentials, so the
// call ends UNIMPLEMENTED after one attempt through the interceptor; the
// wiring is checked on its CallOptions.
func TestNewClientCredentials(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	c, err := interceptor.NewClient(ctx, g.retrier, credentials.NewIamCredentialsClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkWired(t, c.CallOptions)
	_, err = c.GenerateAccessToken(ctx, &credentialspb.GenerateAccessTokenRequest{Name: "projects/-/serviceAccounts/a@p1.iam.gserviceaccount.com"})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("GenerateAccessToken: %v, want UNIMPLEMENTED from the fake", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.attempts) != 1 || !strings.HasSuffix(g.attempts[0].Method, "IAMCredentials/GenerateAccessToken") {
		t.Fatalf("attempts %+v, want one through the interceptor", g.attempts)
	}
}

// TestNewClientLROClient: the Projects client's LROClient (operation
// polling) has gax retries and timeouts off too.
func TestNewClientLROClient(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	c, err := interceptor.NewClient(context.Background(), g.retrier, resourcemanager.NewProjectsClient, g.fake.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.LROClient == nil {
		t.Fatal("no LROClient")
	}
	checkWired(t, c.LROClient.CallOptions)
}

// restCase is one REST client built by NewRESTClient and one of its reads.
type restCase struct {
	name  string
	build func(ctx context.Context, g *rig, opts []option.ClientOption) (read func(context.Context) error, callOptions any, err error)
}

func restCases() []restCase {
	return []restCase{
		{"iamapi.NewIamPolicyRESTClient", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			c, err := interceptor.NewRESTClient(ctx, g.retrier, iamapi.NewIamPolicyRESTClient, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
				return err
			}, c.CallOptions, nil
		}},
		{"resourcemanager.NewProjectsRESTClient", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			c, err := interceptor.NewRESTClient(ctx, g.retrier, resourcemanager.NewProjectsRESTClient, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"})
				return err
			}, c.CallOptions, nil
		}},
		{"resourcemanager.NewFoldersRESTClient", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			c, err := interceptor.NewRESTClient(ctx, g.retrier, resourcemanager.NewFoldersRESTClient, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/123"})
				return err
			}, c.CallOptions, nil
		}},
		{"resourcemanager.NewOrganizationsRESTClient", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			c, err := interceptor.NewRESTClient(ctx, g.retrier, resourcemanager.NewOrganizationsRESTClient, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := c.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "organizations/456"})
				return err
			}, c.CallOptions, nil
		}},
		{"iam/v1 NewService", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			s, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := s.Projects.ServiceAccounts.GetIamPolicy("projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com").Context(ctx).Do()
				return err
			}, nil, nil
		}},
		{"cloudresourcemanager/v3 NewService", func(ctx context.Context, g *rig, opts []option.ClientOption) (func(context.Context) error, any, error) {
			s, err := interceptor.NewRESTClient(ctx, g.retrier, crm.NewService, opts...)
			if err != nil {
				return nil, nil, err
			}
			return func(ctx context.Context) error {
				_, err := s.Projects.GetIamPolicy("projects/p1", &crm.GetIamPolicyRequest{}).Context(ctx).Do()
				return err
			}, nil, nil
		}},
	}
}

// TestNewRESTClientOneSchedule: every REST client built by NewRESTClient,
// with the fake's HTTP client given and without one (built from opts),
// makes the attempts of one schedule during an outage, past gax's 60 s.
func TestNewRESTClientOneSchedule(t *testing.T) {
	t.Parallel()
	for _, c := range restCases() {
		for _, given := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/given=%v", c.name, given), func(t *testing.T) {
				g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
				ctx := context.Background()
				opts := g.fake.RESTClientOptions()
				var hc *http.Client
				var orig http.RoundTripper
				if given {
					hc = g.fake.HTTPClient()
					orig = hc.Transport
					opts = append(opts, option.WithHTTPClient(hc))
				}
				read, co, err := c.build(ctx, g, opts)
				if err != nil {
					t.Fatal(err)
				}
				if co != nil {
					checkWired(t, co)
				}
				if given && hc.Transport != orig {
					t.Fatal("the given client's Transport was changed; NewRESTClient must wrap a copy")
				}
				g.fake.SetOutage(iamtest.AnyMethod, codes.Unavailable)
				start := g.clock.Now()
				if err := read(ctx); err == nil {
					t.Fatal("read succeeded during an outage")
				}
				if n := g.fake.CountCalls(iamtest.AnyMethod); n != oneSchedule {
					t.Fatalf("%d server calls, want %d (one schedule)", n, oneSchedule)
				}
				if el := g.clock.Since(start); el != 97500*time.Millisecond {
					t.Fatalf("the call ended after %v, want 97.5s", el)
				}
			})
		}
	}
}

var errCtor = errors.New("the constructor's own error")

// noCallOptions is a gRPC-looking client with no CallOptions.
type noCallOptions struct {
	conn   *grpc.ClientConn
	closed bool
}

func (c *noCallOptions) Connection() *grpc.ClientConn { return c.conn }
func (c *noCallOptions) Close() error                 { c.closed = true; return nil }

func TestNewClientBadInput(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	ctx := context.Background()
	opts := g.fake.ClientOptions()
	check := func(t *testing.T, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Fatalf("error %q does not name %q", err, w)
			}
		}
	}
	t.Run("nil Retrier", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, nil, admin.NewIamClient, opts...)
		check(t, err, "NewClient", "Retrier is nil")
		_, err = interceptor.NewRESTClient(ctx, nil, iamv1.NewService, opts...)
		check(t, err, "NewRESTClient", "Retrier is nil")
	})
	t.Run("zero Retrier", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, &interceptor.Retrier{}, admin.NewIamClient, opts...)
		check(t, err, "interceptor.New")
	})
	t.Run("nil constructor", func(t *testing.T) {
		_, err := interceptor.NewClient[*admin.IamClient](ctx, g.retrier, nil, opts...)
		check(t, err, "constructor is nil")
		_, err = interceptor.NewRESTClient[*iamv1.Service](ctx, g.retrier, nil, opts...)
		check(t, err, "constructor is nil")
	})
	t.Run("WithGRPCConn", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, g.retrier, admin.NewIamClient, append(opts, option.WithGRPCConn(g.fake.Conn()))...)
		check(t, err, "option.WithGRPCConn", "option 6 of 6")
	})
	t.Run("REST constructor to NewClient", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, g.retrier, iamapi.NewIamPolicyRESTClient, g.fake.RESTClientOptions()...)
		check(t, err, "REST client", "NewRESTClient")
	})
	t.Run("discovery constructor to NewClient", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, g.retrier, iamv1.NewService, g.fake.RESTClientOptions()...)
		check(t, err, "no Connection method", "NewRESTClient")
	})
	t.Run("gRPC constructor to NewRESTClient", func(t *testing.T) {
		var built *admin.IamClient
		// The constructor keeps the fake's gRPC options (it drops the HTTP
		// client, which admin.NewIamClient refuses beside dial options).
		ctor := func(ctx context.Context, _ ...option.ClientOption) (*admin.IamClient, error) {
			c, err := admin.NewIamClient(ctx, opts...)
			built = c
			return c, err
		}
		_, err := interceptor.NewRESTClient(ctx, g.retrier, ctor, g.fake.RESTClientOptions()...)
		check(t, err, "gRPC client", "NewClient")
		// Closed: its calls fail at once.
		_, cerr := built.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/p1/serviceAccounts/a@p1.iam.gserviceaccount.com"})
		if status.Code(cerr) != codes.Canceled {
			t.Fatalf("the refused client was not closed: its call got %v", cerr)
		}
	})
	t.Run("no CallOptions", func(t *testing.T) {
		var built *noCallOptions
		ctor := func(context.Context, ...option.ClientOption) (*noCallOptions, error) {
			built = &noCallOptions{conn: g.fake.Conn()}
			return built, nil
		}
		_, err := interceptor.NewClient(ctx, g.retrier, ctor, opts...)
		check(t, err, "no exported CallOptions")
		if !built.closed {
			t.Fatal("the refused client was not closed")
		}
	})
	t.Run("nil client without error", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (*admin.IamClient, error) { return nil, nil }, opts...)
		check(t, err, "nil *admin.IamClient without an error")
		_, err = interceptor.NewRESTClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (*iamv1.Service, error) { return nil, nil }, opts...)
		check(t, err, "nil *iam.Service without an error")
	})
	t.Run("constructor's error unchanged", func(t *testing.T) {
		_, err := interceptor.NewClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (*admin.IamClient, error) { return nil, errCtor }, opts...)
		if err != errCtor {
			t.Fatalf("got %v, want the constructor's error itself", err)
		}
		_, err = interceptor.NewRESTClient(ctx, g.retrier, func(context.Context, ...option.ClientOption) (*iamv1.Service, error) { return nil, errCtor }, g.fake.RESTClientOptions()...)
		if err != errCtor {
			t.Fatalf("got %v, want the constructor's error itself", err)
		}
	})
	t.Run("HTTP client Timeout shorter than the deadline", func(t *testing.T) {
		hc := g.fake.HTTPClient()
		short := *hc
		short.Timeout = 30 * time.Second
		_, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, append(g.fake.RESTClientOptions(), option.WithHTTPClient(&short))...)
		check(t, err, "Timeout (30s)", "2m0s")
		long := *hc
		long.Timeout = 3 * time.Minute
		if _, err := interceptor.NewRESTClient(ctx, g.retrier, iamv1.NewService, append(g.fake.RESTClientOptions(), option.WithHTTPClient(&long))...); err != nil {
			t.Fatalf("a Timeout longer than the deadline: %v", err)
		}
	})
}

// TestNewRESTClientPerAttemptTimeout: over REST the client's gax timeout
// (here 50 ms, set by the constructor) bounds each attempt instead of the
// whole call: a hung first attempt is cut and retried, and the call
// succeeds.
func TestNewRESTClientPerAttemptTimeout(t *testing.T) {
	t.Parallel()
	g := newRig(t, fakeOnVirtualClock(), readmeDeadline())
	var mu sync.Mutex
	n := 0
	fwd := g.srvREST(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			// Read the body, so the server watches the connection and
			// ends the request's context when the client drops it.
			_, _ = io.Copy(io.Discard, req.Body)
			<-req.Context().Done() // hung until the client gives the attempt up
			return
		}
		fwd.ServeHTTP(w, req)
	}))
	t.Cleanup(front.Close)
	ctor := func(ctx context.Context, opts ...option.ClientOption) (*iamapi.IamPolicyClient, error) {
		c, err := iamapi.NewIamPolicyRESTClient(ctx, opts...)
		if err == nil {
			// Long enough for the attempt after the cut to answer on a
			// busy machine under the race detector: only the hung one is cut.
			to := gax.WithTimeout(2 * time.Second)
			c.CallOptions.GetIamPolicy = append(c.CallOptions.GetIamPolicy, to)
			c.CallOptions.SetIamPolicy = append(c.CallOptions.SetIamPolicy, to)
			c.CallOptions.TestIamPermissions = append(c.CallOptions.TestIamPermissions, to)
		}
		return c, err
	}
	ctx := context.Background()
	c, err := interceptor.NewRESTClient(ctx, g.retrier, ctor, option.WithEndpoint(front.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A bound on the test only (real time), should the attempt never be cut.
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := c.GetIamPolicy(cctx, &iampb.GetIamPolicyRequest{Resource: "projects/p1"}); err != nil {
		t.Fatalf("GetIamPolicy: %v; want success after the hung attempt was cut", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}
