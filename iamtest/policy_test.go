package iamtest

import (
	"bytes"
	"context"
	"testing"

	"cloud.google.com/go/iam/apiv1/iampb"
	"cloud.google.com/go/resourcemanager/apiv3/resourcemanagerpb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

func binding(role string, members ...string) *iampb.Binding {
	return &iampb.Binding{Role: role, Members: members}
}

func condBinding(role string, members ...string) *iampb.Binding {
	b := binding(role, members...)
	b.Condition = &expr.Expr{Title: "until 2031", Expression: `request.time < timestamp("2031-01-01T00:00:00Z")`}
	return b
}

func TestEmptyPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	p := must[*iampb.Policy](t)(f.policy.GetIamPolicy(context.Background(), &iampb.GetIamPolicyRequest{Resource: "projects/never"}))
	if p.Version != 0 || len(p.Bindings) != 0 || !bytes.Equal(p.Etag, emptyPolicyEtag) {
		t.Fatalf("empty policy = %v", p)
	}
	if !proto.Equal(p, f.srv.Policy("projects/never")) {
		t.Fatalf("Policy helper = %v, GetIamPolicy = %v", f.srv.Policy("projects/never"), p)
	}
}

func TestEtagChangesOnEveryWrite(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "projects/p"
	seen := map[string]bool{string(emptyPolicyEtag): true}
	etag := emptyPolicyEtag
	for i := range 5 {
		p := &iampb.Policy{Etag: etag, Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}
		got := must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: p}))
		if seen[string(got.Etag)] {
			t.Fatalf("write %d reused etag %x", i, got.Etag)
		}
		seen[string(got.Etag)] = true
		read := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
		if !bytes.Equal(read.Etag, got.Etag) {
			t.Fatalf("read etag %x, written %x", read.Etag, got.Etag)
		}
		etag = got.Etag
	}
}

func TestStaleEtagAborted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "folders/42"
	first := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
	must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Etag: first.Etag, Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}}))
	before := f.srv.Policy(res)

	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Etag: first.Etag, Bindings: []*iampb.Binding{binding("roles/owner", "user:b@example.com")}}})
	wantCode(t, err, codes.Aborted, "There were concurrent policy changes. Please retry the whole read-modify-write with exponential backoff.")
	if !proto.Equal(before, f.srv.Policy(res)) {
		t.Fatal("an aborted write changed the policy")
	}
	// An etag never handed out is stale too.
	_, err = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{Etag: []byte("bogus")}})
	wantCode(t, err, codes.Aborted, concurrentChangeMessage)
}

func TestBlindWriteOverwrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "organizations/7"
	f.srv.seedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}})
	got := must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{binding("roles/owner", "user:b@example.com")}}}))
	if len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/owner" {
		t.Fatalf("blind write stored %v", got)
	}
}

func TestUpdateMask(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "projects/masked"
	audit := []*iampb.AuditConfig{{Service: "allServices", AuditLogConfigs: []*iampb.AuditLogConfig{{LogType: iampb.AuditLogConfig_DATA_READ}}}}
	f.srv.seedPolicy(res, &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}, AuditConfigs: audit})

	// The default mask (bindings, etag) leaves audit configs alone.
	got := must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Bindings: []*iampb.Binding{binding("roles/editor", "user:b@example.com")}}}))
	if len(got.AuditConfigs) != 1 || got.Bindings[0].Role != "roles/editor" {
		t.Fatalf("default mask stored %v", got)
	}
	// audit_configs only: bindings are kept, audit configs replaced.
	got = must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res,
		Policy:     &iampb.Policy{Bindings: nil, AuditConfigs: nil},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"auditConfigs"}}}))
	if len(got.AuditConfigs) != 0 || len(got.Bindings) != 1 || got.Bindings[0].Role != "roles/editor" {
		t.Fatalf("audit_configs mask stored %v", got)
	}
	// A mask without etag ignores a stale etag; one with etag checks it.
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res,
		Policy:     &iampb.Policy{Etag: []byte("stale"), AuditConfigs: audit},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"audit_configs"}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res,
		Policy:     &iampb.Policy{Etag: []byte("stale")},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"bindings", "etag"}}})
	wantCode(t, err, codes.Aborted, concurrentChangeMessage)
	_, err = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res,
		Policy:     &iampb.Policy{},
		UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"members"}}})
	wantCode(t, err, codes.InvalidArgument, `invalid update_mask path "members": the paths may be bindings, etag, audit_configs and version`)
}

func TestPolicyVersions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "projects/versions"

	// Version 3 without conditions is stored and answered as version 1.
	got := must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Version: 3, Bindings: []*iampb.Binding{binding("roles/browser", "user:a@example.com")}}}))
	if got.Version != 1 {
		t.Fatalf("unconditional policy stored with version %d", got.Version)
	}

	// A conditional binding in a version 1 (or 0) policy is refused.
	for _, v := range []int32{0, 1} {
		_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
			Version: v, Bindings: []*iampb.Binding{condBinding("roles/browser", "user:a@example.com")}}})
		wantCode(t, err, codes.InvalidArgument,
			`the binding for role "roles/browser" has a condition, but the policy version is 1: conditional role bindings need policy version 3`)
	}
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{Version: 2}})
	wantCode(t, err, codes.InvalidArgument, "invalid policy version 2: the version must be 1 or 3 (0 counts as 1)")

	// Version 3 with a condition is stored as version 3.
	got = must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Version: 3, Bindings: []*iampb.Binding{condBinding("roles/browser", "user:a@example.com"), binding("roles/editor", "user:o@example.com")}}}))
	if got.Version != 3 {
		t.Fatalf("conditional policy stored with version %d", got.Version)
	}

	// Reading it below version 3 fails, naming the requested version.
	for req, want := range map[int32]string{
		0: "Requested policy version (1) cannot be less than the existing policy version (3)." + versionsHelp,
		1: "Requested policy version (1) cannot be less than the existing policy version (3)." + versionsHelp,
	} {
		_, err := f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: req}})
		wantCode(t, err, codes.InvalidArgument, want)
	}
	_, err = f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res})
	wantCode(t, err, codes.InvalidArgument, "Requested policy version (1) cannot be less than the existing policy version (3)."+versionsHelp)
	_, err = f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 2}})
	wantCode(t, err, codes.InvalidArgument, "")

	read := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res, Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}}))
	if read.Version != 3 || len(read.Bindings) != 2 || read.Bindings[0].Condition == nil {
		t.Fatalf("v3 read = %v", read)
	}

	// Dropping the condition brings the version back to 1; a v1 read works.
	must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: &iampb.Policy{
		Version: 3, Etag: read.Etag, Bindings: []*iampb.Binding{binding("roles/browser", "user:a@example.com")}}}))
	read = must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
	if read.Version != 1 {
		t.Fatalf("after dropping the condition version = %d", read.Version)
	}
}

func TestOneStoreThroughEveryService(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	p := &iampb.Policy{Bindings: []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}}
	cases := []struct {
		res string
		set func(*iampb.SetIamPolicyRequest) (*iampb.Policy, error)
		get func(*iampb.GetIamPolicyRequest) (*iampb.Policy, error)
	}{
		{"projects/p", func(r *iampb.SetIamPolicyRequest) (*iampb.Policy, error) { return f.projects.SetIamPolicy(ctx, r) },
			func(r *iampb.GetIamPolicyRequest) (*iampb.Policy, error) { return f.projects.GetIamPolicy(ctx, r) }},
		{"folders/1", func(r *iampb.SetIamPolicyRequest) (*iampb.Policy, error) { return f.folders.SetIamPolicy(ctx, r) },
			func(r *iampb.GetIamPolicyRequest) (*iampb.Policy, error) { return f.folders.GetIamPolicy(ctx, r) }},
		{"organizations/2", func(r *iampb.SetIamPolicyRequest) (*iampb.Policy, error) { return f.orgs.SetIamPolicy(ctx, r) },
			func(r *iampb.GetIamPolicyRequest) (*iampb.Policy, error) { return f.orgs.GetIamPolicy(ctx, r) }},
	}
	for _, c := range cases {
		written := must[*iampb.Policy](t)(c.set(&iampb.SetIamPolicyRequest{Resource: c.res, Policy: p}))
		viaIAM := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: c.res}))
		viaOwn := must[*iampb.Policy](t)(c.get(&iampb.GetIamPolicyRequest{Resource: c.res}))
		if !proto.Equal(written, viaIAM) || !proto.Equal(written, viaOwn) {
			t.Fatalf("%s: written %v, IAMPolicy reads %v, own service reads %v", c.res, written, viaIAM, viaOwn)
		}
	}
	// Each resourcemanager service takes only its own kind of name.
	_, err := f.projects.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: "folders/1"})
	wantCode(t, err, codes.InvalidArgument, `invalid resource name "folders/1": expected projects/ID`)
	_, err = f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{})
	wantCode(t, err, codes.InvalidArgument, "the resource name must not be empty")
	_, err = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/p"})
	wantCode(t, err, codes.InvalidArgument, "the policy must be set")
	// Anything else resourcemanager has is unimplemented.
	_, err = f.projects.GetProject(ctx, &resourcemanagerpb.GetProjectRequest{Name: "projects/p"})
	wantCode(t, err, codes.Unimplemented, "")
}

func TestTestIamPermissions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	perms := []string{"resourcemanager.projects.get", "iam.serviceAccounts.actAs"}
	got := must[*iampb.TestIamPermissionsResponse](t)(f.policy.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: perms}))
	if len(got.Permissions) != 2 {
		t.Fatalf("granted %v", got.Permissions)
	}
	got = must[*iampb.TestIamPermissionsResponse](t)(f.projects.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: perms}))
	if len(got.Permissions) != 2 {
		t.Fatalf("granted %v", got.Permissions)
	}
	_, err := f.policy.TestIamPermissions(ctx, &iampb.TestIamPermissionsRequest{Resource: "projects/p", Permissions: []string{"iam.*"}})
	wantCode(t, err, codes.InvalidArgument, `invalid permission "iam.*": a permission is SERVICE.RESOURCE.VERB, without wildcards`)
}

func TestSeedPolicy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	stored := f.srv.seedPolicy("projects/s", &iampb.Policy{Version: 1, Bindings: []*iampb.Binding{
		condBinding("roles/viewer", "user:a@example.com"), binding("roles/owner")}})
	if stored.Version != 3 || len(stored.Bindings) != 1 || len(stored.Etag) == 0 {
		t.Fatalf("seeded %v", stored)
	}
	// Policy returns a copy: changing it changes nothing stored.
	p := f.srv.Policy("projects/s")
	p.Bindings = nil
	if len(f.srv.Policy("projects/s").Bindings) != 1 {
		t.Fatal("Policy did not return a copy")
	}
	f.srv.seedPolicy("projects/s", nil)
	if !bytes.Equal(f.srv.Policy("projects/s").Etag, emptyPolicyEtag) {
		t.Fatal("SeedPolicy(nil) did not remove the policy")
	}
}

func TestStaleEtagCode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, withStaleEtagCode(codes.FailedPrecondition))
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/s", Policy: &iampb.Policy{Etag: []byte("old")}})
	wantCode(t, err, codes.FailedPrecondition, concurrentChangeMessage)
	f.srv.SetStaleEtagCode(codes.Aborted)
	_, err = f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: "projects/s", Policy: &iampb.Policy{Etag: []byte("old")}})
	wantCode(t, err, codes.Aborted, concurrentChangeMessage)
}

func TestConcurrentWriteNext(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	const res = "projects/rmw"
	f.srv.ConcurrentWriteNext(AnyMethod, 1)
	f.srv.ConcurrentWriteNext(MethodAdminSetIamPolicy, 1) // not this service: untouched
	read := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
	read.Bindings = []*iampb.Binding{binding("roles/viewer", "user:a@example.com")}
	_, err := f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: read})
	wantCode(t, err, codes.Aborted, concurrentChangeMessage)
	if c := f.srv.Calls()[1]; c.Injected || c.Code != codes.Aborted {
		t.Fatalf("logged %+v", c)
	}
	// The rerun reads a moved etag, and its write goes through.
	again := must[*iampb.Policy](t)(f.policy.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: res}))
	if bytes.Equal(again.Etag, read.Etag) || len(again.Bindings) != 0 {
		t.Fatalf("after the interleaved write: %v", again)
	}
	again.Bindings = read.Bindings
	must[*iampb.Policy](t)(f.policy.SetIamPolicy(ctx, &iampb.SetIamPolicyRequest{Resource: res, Policy: again}))
}
