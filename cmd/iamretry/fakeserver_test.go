package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	iamv1 "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

const seedYAML = `
projects:
  - id: my-project
    number: 123456789012
    policy:
      bindings: [{role: roles/viewer, members: ["user:alice@example.com"]}]
serviceAccounts:
  - project: my-project
    accountId: deployer
    policy:
      version: 3
      bindings:
        - role: roles/iam.serviceAccountUser
          members: ["user:alice@example.com"]
          condition: {title: until 2030, expression: 'request.time < timestamp("2030-01-01T00:00:00Z")'}
users: [alice@example.com]
customRoles:
  - {parent: projects/my-project, roleId: deployer, role: {title: Deployer, includedPermissions: [iam.roles.get]}}
`

// startSeededFake starts fake-server in process with a seed file and flags
// of the test's, on free loopback ports, and stops it when the test ends.
func startSeededFake(t *testing.T, set func(f *fakeServerFlags)) *fakeRun {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seed.yaml")
	if err := os.WriteFile(path, []byte(seedYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return startFakeIn(t, func(f *fakeServerFlags) {
		f.seedFile = path
		set(f)
	})
}

// startFakeIn starts fake-server in process (startFakeServer, as the
// command does) with flags of the test's (set may be nil), on free loopback
// ports, and stops it when the test ends. A test that must decide when the
// fake misbehaves, rather than leave it to the wall clock, flips run.srv's
// controls while a child process (the built binary) calls it.
func startFakeIn(t *testing.T, set func(f *fakeServerFlags)) *fakeRun {
	t.Helper()
	f := &fakeServerFlags{listen: "127.0.0.1:0", restListen: "127.0.0.1:0", codes: "UNAVAILABLE", seed: 1, timeScale: 1,
		methodFail: methodRates{flagName: "method-fail-rate"}, methodLost: methodRates{flagName: "method-lost-answer-rate"}}
	if set != nil {
		set(f)
	}
	if err := f.validate(); err != nil {
		t.Fatal(err)
	}
	run, err := startFakeServer(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		run.srv.Close()
		for range run.serving {
			<-run.done
		}
	})
	return run
}

// grpcEP is the apply flags that point at the fake's gRPC face.
func (r *fakeRun) grpcEP() []string {
	return []string{"--endpoint", r.addr, "--insecure", "--time-scale", "100"}
}

// TestFakeServerSeedStrictAndMethodRates: a seeded, strict fake-server
// answers real clients wired as its banner shows (interceptor.NewClient,
// NewRESTClient): the seed's objects, IAM's refusals of unknown service
// accounts and unlisted users, and a per-method failure rate.
func TestFakeServerSeedStrictAndMethodRates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	run := startSeededFake(t, func(f *fakeServerFlags) {
		f.strict = true
		if err := f.methodFail.Set("google.iam.admin.v1.IAM/GetRole=1"); err != nil {
			t.Fatal(err)
		}
	})
	r, err := interceptor.New(interceptor.WithMaxAttempts(1))
	if err != nil {
		t.Fatal(err)
	}
	grpcOpts := []option.ClientOption{option.WithEndpoint(run.addr), option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials()))}
	ac, err := interceptor.NewClient(ctx, r, admin.NewIamClient, grpcOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer ac.Close()
	pc, err := interceptor.NewClient(ctx, r, iamapi.NewIamPolicyClient, grpcOpts...)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()

	sa, err := ac.GetServiceAccount(ctx, &adminpb.GetServiceAccountRequest{Name: "projects/-/serviceAccounts/deployer@my-project.iam.gserviceaccount.com"})
	if err != nil {
		t.Fatalf("seeded account: %v", err)
	}
	p, err := pc.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "projects/123456789012"})
	if err != nil || len(p.Bindings) != 1 {
		t.Fatalf("seeded project policy by number: %v, %v", p, err)
	}
	grant := func(member string) error {
		p := &iampb.Policy{Etag: p.Etag, Bindings: append(p.Bindings, &iampb.Binding{Role: "roles/editor", Members: []string{member}})}
		_, err := pc.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/my-project", Policy: p})
		return err
	}
	for member, msg := range map[string]string{
		"serviceAccount:ghost@my-project.iam.gserviceaccount.com": "Service account ghost@my-project.iam.gserviceaccount.com does not exist.",
		"user:mallory@example.com":                                "User mallory@example.com does not exist.",
	} {
		if err := grant(member); status.Code(err) != codes.InvalidArgument || status.Convert(err).Message() != msg {
			t.Errorf("strict grant to %s: %v, want INVALID_ARGUMENT %q", member, err, msg)
		}
	}
	if _, err := ac.GetRole(ctx, &adminpb.GetRoleRequest{Name: "projects/my-project/roles/deployer"}); status.Code(err) != codes.Unavailable {
		t.Fatalf("GetRole at --method-fail-rate 1: %v, want UNAVAILABLE", err)
	}

	// REST, wired with NewRESTClient: the conditional policy at version 3.
	svc, err := interceptor.NewRESTClient(ctx, r, iamv1.NewService, option.WithEndpoint("http://"+run.restAddr+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	rp, err := svc.Projects.ServiceAccounts.GetIamPolicy(sa.Name).OptionsRequestedPolicyVersion(3).Context(ctx).Do()
	if err != nil || len(rp.Bindings) != 1 || rp.Bindings[0].Condition == nil {
		t.Fatalf("REST conditional policy: %+v, %v", rp, err)
	}
}

// TestFakeServerNotStrict: without --strict, grants to unknown service
// accounts and unlisted users are stored.
func TestFakeServerNotStrict(t *testing.T) {
	t.Parallel()
	run := startSeededFake(t, func(*fakeServerFlags) {})
	err := run.srv.Conn().Invoke(context.Background(), "/google.iam.v1.IAMPolicy/SetIamPolicy", &iampb.SetIamPolicyRequest{
		Resource: "projects/my-project", Policy: &iampb.Policy{Bindings: []*iampb.Binding{{Role: "roles/editor",
			Members: []string{"user:mallory@example.com", "serviceAccount:ghost@my-project.iam.gserviceaccount.com"}}}}}, new(iampb.Policy))
	if err != nil {
		t.Fatal(err)
	}
}

// TestFakeServerBannerAndBadInput: the banner shows NewClient wiring and
// what was seeded; a bad seed file or method rate is bad input (exit 2)
// naming what is wrong.
func TestFakeServerBannerAndBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.yaml")
	if err := os.WriteFile(seed, []byte(seedYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"fake-server", "--listen", "127.0.0.1:0", "--rest-listen", "127.0.0.1:0", "--seed-file", seed, "--strict",
			"--method-lost-answer-rate", "/google.iam.v1.IAMPolicy/SetIamPolicy=0.5"}, &out, &errb)
	}()
	exited := make(chan struct{})
	if _, ok := out.waitLine("Stop with Ctrl-C.", exited); !ok {
		t.Fatalf("no banner: %s %s", out.String(), errb.String())
	}
	cancel()
	res := result{code: <-code, stdout: out.String(), stderr: errb.String()}
	for _, want := range []string{"interceptor.NewClient(ctx, r, admin.NewIamClient,", "interceptor.NewRESTClient(ctx, r, iam.NewService,",
		"seeded from " + seed, "strict: ", "50% of google.iam.v1.IAMPolicy/SetIamPolicy calls lose their answer"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("banner lacks %q:\n%s", want, res.stdout)
		}
	}
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	bad := filepath.Join(dir, "bad.yaml")
	for content, want := range map[string]string{
		"projects: [{id: P}]":        `projects[0] (P): invalid project ID "P"`,
		"- a list":                   "want a mapping",
		"projects: [{id: p, nmbr: 1": "yaml:",
		"serviceAccount: []":         `unknown field "serviceAccount"`,
	} {
		if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		res := runCmd(t, "fake-server", "--listen", "127.0.0.1:0", "--seed-file", bad)
		if res.code != 2 || !strings.Contains(res.stderr, "--seed-file "+bad) || !strings.Contains(res.stderr, want) {
			t.Errorf("seed %q: exit %d, stderr %q; want 2 and %q", content, res.code, res.stderr, want)
		}
	}
	for _, arg := range []string{"google.iam.v1.IAMPolicy/Nope=0.1", "google.iam.v1.IAMPolicy/SetIamPolicy", "google.iam.v1.IAMPolicy/SetIamPolicy=2"} {
		res := runCmd(t, "fake-server", "--listen", "127.0.0.1:0", "--method-fail-rate", arg)
		if res.code != 2 || !strings.Contains(res.stderr, "method-fail-rate") {
			t.Errorf("--method-fail-rate %s: exit %d, stderr %q", arg, res.code, res.stderr)
		}
	}
}
