package main

import (
	"net"
	"strings"
	"sync"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"google.golang.org/grpc"
)

// TestResolveRoutes checks the endpoint, the gRPC service and the relative
// name each kind of --resource resolves to.
func TestResolveRoutes(t *testing.T) {
	for _, c := range []struct{ resource, endpoint, service, name string }{
		{"projects/p", "cloudresourcemanager.googleapis.com:443", "google.cloud.resourcemanager.v3.Projects", "projects/p"},
		{"folders/1", "cloudresourcemanager.googleapis.com:443", "google.cloud.resourcemanager.v3.Folders", "folders/1"},
		{"organizations/1", "cloudresourcemanager.googleapis.com:443", "google.cloud.resourcemanager.v3.Organizations", "organizations/1"},
		{"//cloudresourcemanager.googleapis.com/projects/p", "cloudresourcemanager.googleapis.com:443", "google.cloud.resourcemanager.v3.Projects", "projects/p"},
		{"projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com", "iam.googleapis.com:443", "google.iam.admin.v1.IAM", "projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com"},
		{"projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com", "iam.googleapis.com:443", "google.iam.admin.v1.IAM", "projects/-/serviceAccounts/sa@p.iam.gserviceaccount.com"},
		{"//iam.googleapis.com/projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com", "iam.googleapis.com:443", "google.iam.admin.v1.IAM", "projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com"},
		{"//pubsub.googleapis.com/projects/p/topics/t", "pubsub.googleapis.com:443", "google.iam.v1.IAMPolicy", "projects/p/topics/t"},
		{"//pubsub.googleapis.com/projects/p/subscriptions/s", "pubsub.googleapis.com:443", "google.iam.v1.IAMPolicy", "projects/p/subscriptions/s"},
		{"//secretmanager.googleapis.com/projects/p/secrets/s", "secretmanager.googleapis.com:443", "google.cloud.secretmanager.v1.SecretManagerService", "projects/p/secrets/s"},
		{"//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k", "cloudkms.googleapis.com:443", "google.iam.v1.IAMPolicy", "projects/p/locations/l/keyRings/k"},
		{"//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k/cryptoKeys/c", "cloudkms.googleapis.com:443", "google.iam.v1.IAMPolicy", "projects/p/locations/l/keyRings/k/cryptoKeys/c"},
		{"//run.googleapis.com/projects/p/locations/l/services/s", "run.googleapis.com:443", "google.cloud.run.v2.Services", "projects/p/locations/l/services/s"},
		{"//run.googleapis.com/projects/p/locations/l/jobs/j", "run.googleapis.com:443", "google.cloud.run.v2.Jobs", "projects/p/locations/l/jobs/j"},
	} {
		r, name, err := resolve(c.resource)
		if err != nil {
			t.Errorf("resolve(%q): %v", c.resource, err)
			continue
		}
		if r.endpoint != c.endpoint || r.grpcService != c.service || name != c.name {
			t.Errorf("resolve(%q) = %s, %q; want %s %s, %q", c.resource, r, name, c.endpoint, c.service, c.name)
		}
		if r.client == "" {
			t.Errorf("the route of %q names no GAPIC client", c.resource)
		}
	}
}

// TestResolveRefuses: a relative name of another service, an unknown
// service, or a name the service does not hold: usage errors that say what
// to give instead.
func TestResolveRefuses(t *testing.T) {
	for res, want := range map[string][]string{
		"projects/p/topics/t":                           {"full resource name", "//SERVICE/projects/p/topics/t", "pubsub.googleapis.com"},
		"//storage.googleapis.com/projects/_/buckets/b": {"does not reach storage.googleapis.com", "GAPIC client", "policy.Client"},
		"//pubsub.googleapis.com/projects/p/queues/q":   {"pubsub.googleapis.com serves IAM policies of", "projects/*/topics/*"},
		"//pubsub.googleapis.com":                       {"//SERVICE/RELATIVE_NAME"},
	} {
		_, _, err := resolve(res)
		if err == nil {
			t.Errorf("resolve(%q) accepted it", res)
			continue
		}
		if _, ok := err.(*usageError); !ok {
			t.Errorf("resolve(%q): %T, want a usage error", res, err)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("resolve(%q): %q lacks %q", res, err, w)
			}
		}
	}
}

// TestRoutesAgainstFakeServer sends each routed name to fake-server with
// --endpoint: the mixin and Resource Manager routes reach the fake's
// services and change the policy of the relative name; a service the fake
// does not serve answers UNIMPLEMENTED naming the gRPC service it was
// asked of.
func TestRoutesAgainstFakeServer(t *testing.T) {
	addr := startFake(t)
	ep := []string{"--endpoint", addr, "--insecure"}
	for _, res := range []string{
		"//pubsub.googleapis.com/projects/p/topics/t",
		"//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k",
		"//cloudresourcemanager.googleapis.com/projects/p",
		"folders/7",
	} {
		r := runCmd(t, append([]string{"policy", "add-binding", "--resource", res, "--role", "roles/viewer", "--member", "user:alice@example.com"}, ep...)...)
		if r.code != exitOK || !strings.Contains(r.stdout, ": done") {
			t.Errorf("add-binding %s: exit %d\n%s%s", res, r.code, r.stdout, r.stderr)
		}
	}
	// The pubsub and kms names went to google.iam.v1.IAMPolicy with their
	// relative names: the fake's generic policy store holds them.
	r := runCmd(t, append([]string{"policy", "get", "--json", "--resource", "//pubsub.googleapis.com/projects/p/topics/t"}, ep...)...)
	if r.code != exitOK || !strings.Contains(r.stdout, `"user:alice@example.com"`) {
		t.Errorf("get --json of the topic: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, append([]string{"policy", "get", "--resource", "//secretmanager.googleapis.com/projects/p/secrets/s"}, ep...)...)
	if r.code != exitFailure || !strings.Contains(r.stderr, "google.cloud.secretmanager.v1.SecretManagerService") {
		t.Errorf("get of a secret: exit %d, want %d and the service named\n%s", r.code, exitFailure, r.stderr)
	}
}

// routeCases: for every pattern of every route, a resource of that shape
// and the full gRPC method its GetIamPolicy must reach (written out here,
// not read from the table under test).
var routeCases = map[string]struct{ resource, method string }{
	"projects/*/serviceAccounts/*":                   {"projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com", "/google.iam.admin.v1.IAM/GetIamPolicy"},
	"projects/*":                                     {"projects/p", "/google.cloud.resourcemanager.v3.Projects/GetIamPolicy"},
	"folders/*":                                      {"folders/1", "/google.cloud.resourcemanager.v3.Folders/GetIamPolicy"},
	"organizations/*":                                {"organizations/1", "/google.cloud.resourcemanager.v3.Organizations/GetIamPolicy"},
	"projects/*/topics/*":                            {"//pubsub.googleapis.com/projects/p/topics/t", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/subscriptions/*":                     {"//pubsub.googleapis.com/projects/p/subscriptions/s", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/snapshots/*":                         {"//pubsub.googleapis.com/projects/p/snapshots/s", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/schemas/*":                           {"//pubsub.googleapis.com/projects/p/schemas/s", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/secrets/*":                           {"//secretmanager.googleapis.com/projects/p/secrets/s", "/google.cloud.secretmanager.v1.SecretManagerService/GetIamPolicy"},
	"projects/*/locations/*/keyRings/*":              {"//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/locations/*/keyRings/*/cryptoKeys/*": {"//cloudkms.googleapis.com/projects/p/locations/l/keyRings/k/cryptoKeys/c", "/google.iam.v1.IAMPolicy/GetIamPolicy"},
	"projects/*/locations/*/services/*":              {"//run.googleapis.com/projects/p/locations/l/services/s", "/google.cloud.run.v2.Services/GetIamPolicy"},
	"projects/*/locations/*/jobs/*":                  {"//run.googleapis.com/projects/p/locations/l/jobs/j", "/google.cloud.run.v2.Jobs/GetIamPolicy"},
}

// TestEveryRouteReachesItsMethod (issue 20, item 8): `policy get` sends one
// call for every route of the table, through the command as a user runs it,
// to a server that records the full method name and the resource.
func TestEveryRouteReachesItsMethod(t *testing.T) {
	type call struct{ method, resource string }
	var mu sync.Mutex
	var calls []call
	srv := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		req := new(iampb.GetIamPolicyRequest)
		if err := stream.RecvMsg(req); err != nil {
			return err
		}
		mu.Lock()
		calls = append(calls, call{method, req.GetResource()})
		mu.Unlock()
		return stream.SendMsg(&iampb.Policy{Version: 1, Etag: []byte("BwY=")})
	}))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	addr := lis.Addr().String()

	seen := map[string]bool{}
	for _, r := range routes {
		for _, p := range r.patterns {
			seen[p] = true
			c, ok := routeCases[p]
			if !ok {
				t.Errorf("route %s %s has no case here: add one", r.host, p)
				continue
			}
			mu.Lock()
			calls = nil
			mu.Unlock()
			res := runCmd(t, "policy", "get", "--resource", c.resource, "--endpoint", addr, "--insecure", "--deadline", "0")
			if res.code != 0 {
				t.Errorf("policy get --resource %s: exit %d: %s", c.resource, res.code, res.stderr)
				continue
			}
			_, rel, _ := strings.Cut(strings.TrimPrefix(c.resource, "//"), "/")
			if !strings.HasPrefix(c.resource, "//") {
				rel = c.resource
			}
			mu.Lock()
			got := calls
			mu.Unlock()
			if len(got) != 1 || got[0].method != c.method || got[0].resource != rel {
				t.Errorf("policy get --resource %s sent %+v, want one %s of %s", c.resource, got, c.method, rel)
			}
		}
	}
	for p := range routeCases {
		if !seen[p] {
			t.Errorf("case %s is no pattern of the table", p)
		}
	}
}
