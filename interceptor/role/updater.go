package role

import (
	"context"
	"slices"
	"strings"
	"unicode"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	gax "github.com/googleapis/gax-go/v2"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/internal/rmwhook"
	"github.com/iamretry/iamretry/interceptor/internal/updaters"
	"github.com/iamretry/iamretry/internal/iammethods"
)

// UpdateMethod is the Method of the Attempts an Updater reports (and the
// method its classifier is given), and the grpc.method of its metrics: the
// read-modify-write as a whole, whose role is in Attempt.Resource.
// Its value is "iamretry.role/Update".
const UpdateMethod = iammethods.RoleUpdate

// noGAXRetry is passed on every call the Updater makes: the Updater owns
// its retries, and the admin client's own would multiply them.
var noGAXRetry = gax.WithRetry(nil)

// Updater changes custom roles by read-modify-write, retried as Google's
// IAM guidance says. It is safe for concurrent use; share one per client.
// Concurrent Updates of one role through one Updater are coalesced into one
// read-modify-write, as the policy Updater's are. It has no goroutine of
// its own (a batch runs on its callers' goroutines), so it needs no Close.
type Updater struct {
	c         Client
	r         *interceptor.Retrier
	conflicts interceptor.ConflictBackoff
	core      *updaters.Core[[]Change, *adminpb.Role]
}

// Option configures what only an Updater has (everything else is the
// Retrier's, given to NewUpdater). A nil Option is refused.
type Option func(*config)

type config struct {
	conflicts interceptor.ConflictBackoff
	errs      []error
}

// WithConflictBackoff chooses the schedule of the reruns after a concurrent
// change (default interceptor.ScaledConflicts; interceptor.DocumentedConflicts
// reruns on the Retrier's Backoff, n counting conflicts). An unknown value
// is refused by NewUpdater with an error naming it.
func WithConflictBackoff(s interceptor.ConflictBackoff) Option {
	return func(c *config) { updaters.SetConflicts(s, &c.conflicts, &c.errs) }
}

// NewUpdater returns an Updater that reads and writes custom roles through
// c and runs each read-modify-write on r (interceptor.Transact), sharing
// r's backoff, retry deadline, attempt cap, budget, clock, random source,
// observers, logger, meter and per-attempt timeout (which bounds each
// GetRole and UpdateRole call) with every other face of r. Observers see
// one Attempt per failed read-modify-write, with Method UpdateMethod and
// Resource the role's name. Reruns after a conflict follow
// WithConflictBackoff's schedule and never count toward r's attempt cap.
// r's 404 opt-in (WithRetryNotFound, RetryNotFoundContext) reruns a read of
// a role not visible yet (one just created). A nil c, a nil r or one not
// built by interceptor.New, and invalid options give an error naming each,
// and no Updater.
func NewUpdater(c Client, r *interceptor.Retrier, opts ...Option) (*Updater, error) {
	var cfg config
	if err := updaters.Check("iamretry/role", c, "an admin.IamClient, iamv1.Roles, ...", r, &cfg, &cfg.errs, opts); err != nil {
		return nil, err
	}
	return &Updater{c: c, r: r, conflicts: cfg.conflicts, core: updaters.NewCore[[]Change, *adminpb.Role](r)}, nil
}

// Update applies the changes, in order, to the custom role name
// (projects/PROJECT_ID/roles/ID or organizations/ORG_ID/roles/ID) and
// returns the role as it stands after them: the role written, or the role
// read when nothing changed (then nothing is written). After a conflict or
// a transient failure it reruns all from a fresh read, within the
// Retrier's deadline and ctx, so Changes must be idempotent (see Change).
// Concurrent Updates of a role are coalesced (package doc: Coalescing).
//
// Errors name the role and keep their cause's gRPC status, also over REST
// (a conflict is ABORTED). A predefined role (ErrPredefined), a malformed
// name and a nil Change are refused before any call, a deleted role
// (ErrDeleted) after the read; the rest: package doc, Errors.
func (u *Updater) Update(ctx context.Context, name string, changes ...Change) (*adminpb.Role, error) {
	if err := checkName(name); err != nil {
		return nil, wrap(name, err)
	}
	for i, c := range changes {
		if c == nil {
			return nil, wrap(name, invalid("Update: change %d of %d is nil", i+1, len(changes)))
		}
	}
	if ctx.Err() != nil {
		return nil, wrap(name, updaters.Left(ctx, true))
	}
	role, err, gone, queued := u.core.Do(ctx, name, UpdateMethod, slices.Clone(changes), u.lead)
	if gone {
		return nil, wrap(name, updaters.Left(ctx, queued))
	}
	return role, err
}

// checkName refuses a predefined role and a name that is not a custom
// role's.
func checkName(name string) error {
	if strings.HasPrefix(name, "roles/") {
		return &refusal{err: ErrPredefined, code: grpccodes.InvalidArgument}
	}
	parts := strings.Split(name, "/")
	if len(parts) != 4 || (parts[0] != "projects" && parts[0] != "organizations") ||
		parts[1] == "" || parts[2] != "roles" || parts[3] == "" {
		return invalid("%q is not a custom role's name: expected projects/PROJECT_ID/roles/ID or organizations/ORG_ID/roles/ID", name)
	}
	if strings.ContainsFunc(parts[1], func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("?#%", r) }) {
		return invalid("%q is not a custom role's name: its project or organization ID %q holds white space, '?', '#' or '%%'", name, parts[1])
	}
	if id := parts[3]; len(id) > maxRoleID || strings.Trim(id, roleIDChars) != "" {
		return invalid("%q is not a custom role's name: a role ID is at most %d letters, digits, underscores and periods, not %q", name, maxRoleID, id)
	}
	return nil
}

// A custom role's ID (https://cloud.google.com/iam/docs/creating-custom-roles).
const (
	maxRoleID   = 64
	roleIDChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_."
)

// rmw is one batch's read-modify-write: the Read, Modify and Write of its
// interceptor.Transact.
type rmw struct {
	c     Client
	name  string
	b     *batch
	read  *adminpb.Role // the role the last Modify was given
	paths []string      // the fields the last Modify changed
	// out is each member's outcome in the last attempt: its change ran to
	// its end (ran), or failed on its own (err).
	out []outcome
	// refused: the last attempt's write was refused (a refusal a batch is
	// split on); end is Transact's end (rmwhook.Run.Ended).
	refused bool
	end     rmwhook.End
}

type outcome struct {
	ran bool
	err error
}

func (t *rmw) readRole(ctx context.Context) (*adminpb.Role, error) {
	r, err := t.c.GetRole(ctx, &adminpb.GetRoleRequest{Name: t.name}, noGAXRetry)
	if err != nil {
		t.b.Fail()
		return nil, err
	}
	if r == nil {
		return nil, status.Error(grpccodes.Internal, "GetRole answered no role")
	}
	return r, nil
}

// modify refuses a deleted role, runs each member's changes on a copy of
// the role as the members before it left it (on the member's goroutine, in
// arrival order), keeps the copies of the members whose changes succeeded,
// and returns the result and whether a field differs from the read.
func (t *rmw) modify(read *adminpb.Role) (*adminpb.Role, bool, error) {
	if read.GetDeleted() {
		return nil, false, &refusal{err: ErrDeleted, code: grpccodes.FailedPrecondition}
	}
	t.read, t.refused = read, false
	t.out = make([]outcome, len(t.b.Members))
	work := proto.Clone(read).(*adminpb.Role)
	ran := false
	for i, w := range t.b.Members {
		if !t.b.Live(i) {
			continue
		}
		cp := proto.Clone(work).(*adminpb.Role)
		var err error
		if !t.b.Apply(i, func() { err = runChanges(work, cp, w.Change) }) {
			continue // its caller left, or its Change panicked or called runtime.Goexit
		}
		ran = true
		if err != nil {
			t.out[i].err = err
			continue
		}
		t.out[i].ran = true
		work = cp
	}
	if !ran {
		return nil, false, context.Canceled // every caller has given up
	}
	t.paths = changedPaths(read, work)
	if len(t.paths) == 0 {
		return read, false, nil
	}
	return work, true, nil
}

// runChanges runs one caller's changes, in order, on cp, a copy of before.
func runChanges(before, cp *adminpb.Role, changes []Change) error {
	for i, c := range changes {
		if _, err := c(cp); err != nil {
			return &changeError{n: i + 1, err: err}
		}
		if f := fixedField(before, cp); f != "" {
			return &changeError{n: i + 1, err: invalid(
				"it changed the role's %s; a Change may change title, description, included_permissions and stage only", f)}
		}
	}
	return nil
}

// fixedField names a field a Change must not touch that differs between
// read and work, or returns "".
func fixedField(read, work *adminpb.Role) string {
	switch {
	case work.GetName() != read.GetName():
		return "name"
	case string(work.GetEtag()) != string(read.GetEtag()):
		return "etag"
	case work.GetDeleted() != read.GetDeleted():
		return "deleted"
	}
	return ""
}

// changedPaths names the fields whose value differs, in the order of the
// Role message (included_permissions compared as a set).
func changedPaths(read, work *adminpb.Role) []string {
	var paths []string
	if work.GetTitle() != read.GetTitle() {
		paths = append(paths, "title")
	}
	if work.GetDescription() != read.GetDescription() {
		paths = append(paths, "description")
	}
	if !samePermissions(work.GetIncludedPermissions(), read.GetIncludedPermissions()) {
		paths = append(paths, "included_permissions")
	}
	if work.GetStage() != read.GetStage() {
		paths = append(paths, "stage")
	}
	return paths
}

func samePermissions(a, b []string) bool {
	for _, p := range a {
		if !slices.Contains(b, p) {
			return false
		}
	}
	for _, p := range b {
		if !slices.Contains(a, p) {
			return false
		}
	}
	return true
}

// write sends the changed fields of work with the etag read and the mask
// naming them.
func (t *rmw) write(ctx context.Context, work *adminpb.Role) (*adminpb.Role, error) {
	r, err := t.c.UpdateRole(ctx, updateRequest(t.name, t.read, work, t.paths), noGAXRetry)
	if err != nil {
		t.b.Fail()
		t.refused = updaters.Splittable(err)
		return nil, err
	}
	if r == nil {
		return nil, status.Error(grpccodes.Internal, "UpdateRole answered no role")
	}
	return r, nil
}

// updateRequest builds the UpdateRole request: the role's name, the fields
// of paths from work, the etag of read, and paths as the update_mask.
func updateRequest(name string, read, work *adminpb.Role, paths []string) *adminpb.UpdateRoleRequest {
	out := &adminpb.Role{Name: name, Etag: read.GetEtag()}
	for _, p := range paths {
		switch p {
		case "title":
			out.Title = work.GetTitle()
		case "description":
			out.Description = work.GetDescription()
		case "included_permissions":
			out.IncludedPermissions = slices.Clone(work.GetIncludedPermissions())
		case "stage":
			out.Stage = work.GetStage()
		}
	}
	return &adminpb.UpdateRoleRequest{
		Name:       name,
		Role:       out,
		UpdateMask: &fieldmaskpb.FieldMask{Paths: slices.Clone(paths)},
	}
}
