package role_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/role"
)

// TestUpdateWritesWhatChangedWithEtagAndMask: every kind of change through
// each real client; the write carries the etag read and a mask naming
// exactly the fields that changed, and the fake keeps the others (so the
// mask reached it: an empty mask would have written every field).
func TestUpdateWritesWhatChangedWithEtagAndMask(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			created := e.createRole(t, "run.services.get", "run.services.update")
			rec := &recorder{Client: k.client(e)}
			u := e.updater(t, rec)
			ctx := context.Background()

			got, err := u.Update(ctx, roleName, role.SetTitle("Deployer v2"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Title != "Deployer v2" || got.Description != "deploys" || got.Stage != adminpb.Role_BETA ||
				!slices.Equal(got.IncludedPermissions, []string{"run.services.get", "run.services.update"}) {
				t.Fatalf("after SetTitle: %v", got)
			}
			req := rec.updates[0]
			if string(req.Role.Etag) != string(created.Etag) || req.Name != roleName ||
				!slices.Equal(req.UpdateMask.GetPaths(), []string{"title"}) {
				t.Fatalf("write: name %q etag %q (read %q) mask %v", req.Name, req.Role.Etag, created.Etag, req.UpdateMask.GetPaths())
			}

			got, err = u.Update(ctx, roleName,
				role.AddPermissions("iam.serviceAccounts.actAs", "run.services.get"),
				role.RemovePermissions("run.services.update", "run.services.delete"),
				role.SetDescription(""),
				role.SetStage(adminpb.Role_GA),
				role.SetTitle("Deployer v2"))
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"description", "included_permissions", "stage"}; !slices.Equal(rec.updates[1].UpdateMask.GetPaths(), want) {
				t.Fatalf("mask %v, want %v", rec.updates[1].UpdateMask.GetPaths(), want)
			}
			stored := e.srv.CustomRole(roleName)
			if stored.Title != "Deployer v2" || stored.Description != "" || stored.Stage != adminpb.Role_GA ||
				!slices.Equal(stored.IncludedPermissions, []string{"run.services.get", "iam.serviceAccounts.actAs"}) {
				t.Fatalf("stored %v", stored)
			}
			if string(got.Etag) != string(stored.Etag) {
				t.Fatalf("Update answered etag %q, stored %q", got.Etag, stored.Etag)
			}
			for i, o := range rec.opts {
				if len(o) != 1 {
					t.Fatalf("call %d had options %v, want gax.WithRetry(nil) alone", i+1, o)
				}
			}
			if n, _ := e.calls(iamtest.MethodUpdateRole); n != 2 {
				t.Fatalf("%d UpdateRole calls, want 2", n)
			}
		})
	}
}

// TestUpdateNothingChangedWritesNothing: changes the role holds already,
// and no change at all, read and write nothing.
func TestUpdateNothingChangedWritesNothing(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			u := e.updater(t, k.client(e))
			for _, changes := range [][]role.Change{
				{role.AddPermissions("run.services.get"), role.RemovePermissions("run.services.delete"),
					role.SetTitle("Deployer"), role.SetDescription("deploys"), role.SetStage(adminpb.Role_BETA)},
				{role.AddPermissions("run.services.update"), role.RemovePermissions("run.services.update")},
				nil,
			} {
				got, err := u.Update(context.Background(), roleName, changes...)
				if err != nil || got.Title != "Deployer" {
					t.Fatalf("Update: %v, %v", got, err)
				}
			}
			if n, _ := e.calls(iamtest.MethodUpdateRole); n != 0 {
				t.Fatalf("%d UpdateRole calls, want none", n)
			}
			if n, _ := e.calls(iamtest.MethodGetRole); n != 3 {
				t.Fatalf("%d GetRole calls, want 3", n)
			}
		})
	}
}

// TestPredefinedRoleRefusedBeforeAnyCall: roles/... is refused by name,
// with nothing sent; so is a name that is not a custom role's.
func TestPredefinedRoleRefusedBeforeAnyCall(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			u := e.updater(t, k.client(e))
			_, err := u.Update(context.Background(), "roles/viewer", role.AddPermissions("run.services.get"))
			if !errors.Is(err, role.ErrPredefined) || status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "roles/viewer") {
				t.Fatalf("predefined: %v (code %v)", err, status.Code(err))
			}
			for _, name := range []string{"", "projects/p", "projects//roles/x", "projects/p/roles/", "folders/f/roles/x", "projects/p/roles/x/y", "projects/p/serviceAccounts/x"} {
				_, err := u.Update(context.Background(), name, role.SetTitle("x"))
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "custom role") {
					t.Fatalf("name %q: %v", name, err)
				}
			}
			_, err = u.Update(context.Background(), roleName, role.SetTitle("x"), nil)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "change 2 of 2 is nil") {
				t.Fatalf("nil change: %v", err)
			}
			if n := e.srv.CountCalls(iamtest.AnyMethod); n != 0 {
				t.Fatalf("%d calls made, want none", n)
			}
		})
	}
}

// TestDeletedRoleRefusedBeforeWrite: a deleted role is read, found deleted
// and refused, with nothing written; undeleted, it changes again.
func TestDeletedRoleRefusedBeforeWrite(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			ctx := context.Background()
			if _, err := e.admin.DeleteRole(ctx, &adminpb.DeleteRoleRequest{Name: roleName}); err != nil {
				t.Fatal(err)
			}
			e.srv.ResetCalls()
			u := e.updater(t, k.client(e))
			_, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update"))
			if !errors.Is(err, role.ErrDeleted) || status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), roleName) {
				t.Fatalf("deleted: %v (code %v)", err, status.Code(err))
			}
			if n, _ := e.calls(iamtest.MethodUpdateRole); n != 0 {
				t.Fatalf("%d UpdateRole calls, want none", n)
			}
			if n, _ := e.calls(iamtest.MethodGetRole); n != 1 {
				t.Fatalf("%d GetRole calls, want 1 (refused, not retried)", n)
			}
			if _, err := e.admin.UndeleteRole(ctx, &adminpb.UndeleteRoleRequest{Name: roleName}); err != nil {
				t.Fatal(err)
			}
			if _, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update")); err != nil {
				t.Fatalf("after undelete: %v", err)
			}
		})
	}
}

// TestUnknownPermissionIsIAMsErrorAtOnce: a permission IAM refuses fails
// the write INVALID_ARGUMENT with IAM's message, returned after one write,
// not retried. (The fake judges a permission's form, SERVICE.RESOURCE.VERB,
// not whether IAM knows it: "notapermission" is refused, a well-formed
// "nosuch.service.verb" would be accepted.)
func TestUnknownPermissionIsIAMsErrorAtOnce(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			u := e.updater(t, k.client(e))
			_, err := u.Update(context.Background(), roleName, role.AddPermissions("run.services.update", "notapermission"))
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "Permission notapermission is not valid") ||
				!strings.Contains(err.Error(), roleName) {
				t.Fatalf("got %v (code %v)", err, status.Code(err))
			}
			if n, _ := e.calls(iamtest.MethodUpdateRole); n != 1 {
				t.Fatalf("%d UpdateRole calls, want 1", n)
			}
			if got := e.srv.CustomRole(roleName).IncludedPermissions; !slices.Equal(got, []string{"run.services.get"}) {
				t.Fatalf("stored %v", got)
			}
			if as := e.takeAttempts(); len(as) != 1 || as[0].Class.String() != "Permanent" || as[0].Method != role.UpdateMethod || as[0].Resource != roleName {
				t.Fatalf("attempts %+v", as)
			}
		})
	}
}

// TestLostAnswerLandsOnce: the write commits and its answer is lost; the
// rerun reads the role, finds the permission there and writes nothing.
func TestLostAnswerLandsOnce(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			u := e.updater(t, k.client(e))
			e.srv.LoseNextAnswers(iamtest.MethodUpdateRole, 1)
			got, err := u.Update(context.Background(), roleName, role.AddPermissions("run.services.update"))
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"run.services.get", "run.services.update"}
			if !slices.Equal(got.IncludedPermissions, want) || !slices.Equal(e.srv.CustomRole(roleName).IncludedPermissions, want) {
				t.Fatalf("answered %v, stored %v", got.IncludedPermissions, e.srv.CustomRole(roleName).IncludedPermissions)
			}
			if n, applied := e.calls(iamtest.MethodUpdateRole); n != 1 || applied != 1 {
				t.Fatalf("UpdateRole: %d calls, %d applied; want 1, 1", n, applied)
			}
			if n, _ := e.calls(iamtest.MethodGetRole); n != 2 {
				t.Fatalf("%d GetRole calls, want 2", n)
			}
		})
	}
}

// TestTransientFailuresRerunFromRead: failed reads and a failed write are
// rerun from the read on the Retrier's backoff; the failed write is never
// replayed alone.
func TestTransientFailuresRerunFromRead(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			rec := &recorder{Client: k.client(e)}
			u := e.updater(t, rec)
			e.srv.FailNext(iamtest.MethodGetRole, 2, codes.Unavailable)
			e.srv.FailNext(iamtest.MethodUpdateRole, 1, codes.Internal)
			if _, err := u.Update(context.Background(), roleName, role.AddPermissions("run.services.update")); err != nil {
				t.Fatal(err)
			}
			if n, _ := e.calls(iamtest.MethodGetRole); n != 4 {
				t.Fatalf("%d GetRole calls, want 4", n)
			}
			if n, applied := e.calls(iamtest.MethodUpdateRole); n != 2 || applied != 1 {
				t.Fatalf("UpdateRole: %d calls, %d applied; want 2, 1", n, applied)
			}
			var seq []string
			for _, c := range e.srv.Calls() {
				seq = append(seq, strings.TrimPrefix(string(c.Method), "/google.iam.admin.v1.IAM/"))
			}
			if want := []string{"GetRole", "GetRole", "GetRole", "UpdateRole", "GetRole", "UpdateRole"}; !slices.Equal(seq, want) {
				t.Fatalf("calls %v, want %v", seq, want)
			}
			as := e.takeAttempts()
			if len(as) != 4 || as[3].Reason != interceptor.Succeeded {
				t.Fatalf("attempts %+v", as)
			}
			for _, a := range as[:3] {
				if a.Method != role.UpdateMethod || a.Resource != roleName || a.Class.String() != "Transient" || a.Wait <= 0 {
					t.Fatalf("attempt %+v", a)
				}
			}
		})
	}
}

// TestConflictRerunsWithFreshEtag: another writer changes the role between
// the read and the write; the write is refused ABORTED, and the rerun keeps
// both changes.
func TestConflictRerunsWithFreshEtag(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			rec := &recorder{Client: k.client(e)}
			ctx := context.Background()
			rec.beforeWrite = func(n int) {
				if n > 2 {
					return
				}
				cur, err := e.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: roleName}, gax.WithRetry(nil))
				if err != nil {
					t.Error(err)
					return
				}
				other := []string{"run.services.list", "run.services.create"}[n-1]
				if _, err := e.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: roleName,
					Role:       &adminpb.Role{Etag: cur.Etag, IncludedPermissions: append(cur.IncludedPermissions, other)},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"included_permissions"}}}, gax.WithRetry(nil)); err != nil {
					t.Error(err)
				}
			}
			u := e.updater(t, rec)
			if _, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update")); err != nil {
				t.Fatal(err)
			}
			want := []string{"run.services.get", "run.services.list", "run.services.create", "run.services.update"}
			if got := e.srv.CustomRole(roleName).IncludedPermissions; !slices.Equal(got, want) {
				t.Fatalf("stored %v, want %v", got, want)
			}
			if len(rec.updates) != 3 || string(rec.updates[0].Role.Etag) == string(rec.updates[2].Role.Etag) {
				t.Fatalf("%d writes; the last one must carry a fresh etag", len(rec.updates))
			}
			as := e.takeAttempts()
			if len(as) != 3 || as[0].Class.String() != "Conflict" || as[1].Class.String() != "Conflict" {
				t.Fatalf("attempts %+v", as)
			}
		})
	}
}

// TestChangeErrors: a Change's error, a bad permission, an unknown stage
// and a Change touching a field it must not fail the Update after the read,
// wrapped, with nothing written.
func TestChangeErrors(t *testing.T) {
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	u := e.updater(t, e.admin)
	mine := errors.New("mine")
	for _, tc := range []struct {
		c    role.Change
		code codes.Code
		msg  string
	}{
		{func(*adminpb.Role) (bool, error) { return false, mine }, codes.Unknown, "change 2: mine"},
		{role.AddPermissions("run.services.update", ""), codes.InvalidArgument, "AddPermissions: permission 2 of 2 is empty"},
		{role.RemovePermissions("run services"), codes.InvalidArgument, `RemovePermissions: permission "run services" contains white space`},
		{role.SetStage(3), codes.InvalidArgument, "SetStage: 3 is not a launch stage"},
		{func(r *adminpb.Role) (bool, error) { r.Etag = nil; return true, nil }, codes.InvalidArgument, "changed the role's etag"},
		{func(r *adminpb.Role) (bool, error) { r.Name = "projects/p/roles/other"; return true, nil }, codes.InvalidArgument, "changed the role's name"},
		{func(r *adminpb.Role) (bool, error) { r.Deleted = true; return true, nil }, codes.InvalidArgument, "changed the role's deleted"},
	} {
		_, err := u.Update(context.Background(), roleName, role.SetTitle("x"), tc.c)
		if status.Code(err) != tc.code || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("got %v (code %v), want %v with %q", err, status.Code(err), tc.code, tc.msg)
		}
	}
	if _, err := u.Update(context.Background(), roleName, func(*adminpb.Role) (bool, error) { return false, mine }); !errors.Is(err, mine) {
		t.Errorf("errors.Is(%v, mine) = false", err)
	}
	if n, _ := e.calls(iamtest.MethodUpdateRole); n != 0 {
		t.Fatalf("%d UpdateRole calls, want none", n)
	}
}

// TestNewUpdaterRefusesBadInput names each problem.
func TestNewUpdaterRefusesBadInput(t *testing.T) {
	_, err := role.NewUpdater(nil, nil, nil, role.WithConflictBackoff(interceptor.ConflictBackoff(9)))
	for _, want := range []string{"needs a Client", "needs the *interceptor.Retrier", "option 1 of 2 is nil", "WithConflictBackoff(ConflictBackoff(9)"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("NewUpdater: %v; want it to say %q", err, want)
		}
	}
	e := newEnv(t)
	if _, err := role.NewUpdater(e.admin, new(interceptor.Retrier)); err == nil || !strings.Contains(err.Error(), "not built by interceptor.New") {
		t.Errorf("zero Retrier: %v", err)
	}
	var nilAdmin *struct{ role.Client }
	if _, err := role.NewUpdater(nilAdmin, e.r); err == nil {
		t.Error("a typed nil Client was accepted")
	}
}

// TestStaleEtagAsFailedPrecondition: where a stale etag is answered
// FAILED_PRECONDITION, a fresh read that shows the etag moved makes it a
// conflict, rerun from the read; with the etag unmoved it is the server's
// refusal, returned at once.
func TestStaleEtagAsFailedPrecondition(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			e := newEnv(t)
			e.createRole(t, "run.services.get")
			e.srv.SetStaleEtagCode(codes.FailedPrecondition)
			ctx := context.Background()
			rec := &recorder{Client: k.client(e)}
			rec.beforeWrite = func(n int) {
				if n != 1 {
					return
				}
				cur, err := e.admin.GetRole(ctx, &adminpb.GetRoleRequest{Name: roleName}, gax.WithRetry(nil))
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := e.admin.UpdateRole(ctx, &adminpb.UpdateRoleRequest{Name: roleName,
					Role:       &adminpb.Role{Etag: cur.Etag, Title: "other writer"},
					UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"title"}}}, gax.WithRetry(nil)); err != nil {
					t.Error(err)
				}
			}
			u := e.updater(t, rec)
			if _, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update")); err != nil {
				t.Fatal(err)
			}
			stored := e.srv.CustomRole(roleName)
			if stored.Title != "other writer" || !slices.Equal(stored.IncludedPermissions, []string{"run.services.get", "run.services.update"}) {
				t.Fatalf("stored %v", stored)
			}
			if as := e.takeAttempts(); len(as) != 2 || as[0].Class.String() != "Conflict" || status.Code(as[0].Err) != codes.Aborted {
				t.Fatalf("attempts %+v", as)
			}

			// The server's own FAILED_PRECONDITION, etag unmoved: returned.
			e.srv.FailNext(iamtest.MethodUpdateRole, 1, codes.FailedPrecondition)
			_, err := u.Update(ctx, roleName, role.AddPermissions("run.services.list"))
			if status.Code(err) != codes.FailedPrecondition {
				t.Fatalf("got %v, want FAILED_PRECONDITION", err)
			}
		})
	}
}

// TestChangePanicReachesCaller: Update runs on the caller's goroutine, so a
// Change's panic is the caller's, with nothing written.
func TestChangePanicReachesCaller(t *testing.T) {
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	u := e.updater(t, e.admin)
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Fatalf("recovered %v, want boom", v)
			}
		}()
		u.Update(context.Background(), roleName, func(*adminpb.Role) (bool, error) { panic("boom") })
		t.Fatal("Update returned")
	}()
	if n, _ := e.calls(iamtest.MethodUpdateRole); n != 0 {
		t.Fatalf("%d UpdateRole calls, want none", n)
	}
}

// TestCancelledContext: an Update whose context has ended sends nothing
// and reports the context's code, wrapping its error.
func TestCancelledContext(t *testing.T) {
	e := newEnv(t)
	e.createRole(t, "run.services.get")
	u := e.updater(t, e.admin)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := u.Update(ctx, roleName, role.AddPermissions("run.services.update"))
	if status.Code(err) != codes.Canceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v (code %v), want CANCELED wrapping context.Canceled", err, status.Code(err))
	}
	if n := e.srv.CountCalls(iamtest.AnyMethod); n != 0 {
		t.Fatalf("%d calls sent", n)
	}
}
