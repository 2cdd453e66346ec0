package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"

	admin "cloud.google.com/go/iam/admin/apiv1"
	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	iamv2 "cloud.google.com/go/iam/apiv2"
	iampb2 "cloud.google.com/go/iam/apiv2/iampb"
	iamrest "google.golang.org/api/iam/v1"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/deny"
	"github.com/iamretry/iamretry/interceptor/role"
	"github.com/iamretry/iamretry/interceptor/role/iamv1"
)

// roleAPI is what apply needs of the IAM admin API for custom roles: the
// library's role.Client (read and update), and CreateRole for
// create_if_absent.
type roleAPI struct {
	role.Client
	create func(ctx context.Context, parent, id string, r *adminpb.Role) error
	close  func() error
}

// denyAPI is the IAM v2 Policies client the deny Updaters run on.
type denyAPI struct {
	client deny.Client
	close  func() error
}

// apiOptions are the client options of a GAPIC or discovery client for
// the API at endpoint (gRPC HOST:443), from --transport, --endpoint and
// --insecure. The face (interceptor or RoundTripper) is added by
// interceptor.NewClient and NewRESTClient.
func apiOptions(cf connFlags, endpoint string) []option.ClientOption {
	opts := []option.ClientOption{option.WithScopes("https://www.googleapis.com/auth/cloud-platform")}
	switch {
	case cf.transport == transportREST && cf.restBase != "":
		opts = append(opts, option.WithEndpoint(cf.restBase))
	case cf.transport == transportREST:
	case cf.endpoint != "":
		opts = append(opts, option.WithEndpoint(cf.endpoint))
	default:
		opts = append(opts, option.WithEndpoint(endpoint))
	}
	if cf.insecure {
		opts = append(opts, option.WithoutAuthentication())
		if cf.transport == transportREST {
			opts = append(opts, option.WithHTTPClient(&http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}))
		} else {
			opts = append(opts, option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
		}
	}
	return opts
}

// connectRoles builds the admin client for custom roles on r's face.
func connectRoles(ctx context.Context, cf connFlags, r *interceptor.Retrier) (*roleAPI, error) {
	opts := apiOptions(cf, "iam.googleapis.com:443")
	if cf.transport == transportREST {
		s, err := interceptor.NewRESTClient(ctx, r, iamrest.NewService, opts...)
		if err != nil {
			return nil, err
		}
		return &roleAPI{Client: iamv1.Roles(s), close: func() error { return nil },
			create: func(ctx context.Context, parent, id string, ro *adminpb.Role) error {
				req := &iamrest.CreateRoleRequest{RoleId: id, Role: &iamrest.Role{Title: ro.GetTitle(), Description: ro.GetDescription(),
					IncludedPermissions: ro.GetIncludedPermissions(), Stage: ro.GetStage().String()}}
				var err error
				if strings.HasPrefix(parent, "organizations/") {
					_, err = s.Organizations.Roles.Create(parent, req).Context(ctx).Do()
				} else {
					_, err = s.Projects.Roles.Create(parent, req).Context(ctx).Do()
				}
				return err
			}}, nil
	}
	c, err := interceptor.NewClient(ctx, r, admin.NewIamClient, opts...)
	if err != nil {
		return nil, err
	}
	return &roleAPI{Client: c, close: c.Close, create: func(ctx context.Context, parent, id string, ro *adminpb.Role) error {
		_, err := c.CreateRole(ctx, &adminpb.CreateRoleRequest{Parent: parent, RoleId: id, Role: ro})
		return err
	}}, nil
}

// connectDeny builds the IAM v2 Policies client on r's face.
func connectDeny(ctx context.Context, cf connFlags, r *interceptor.Retrier) (*denyAPI, error) {
	opts := apiOptions(cf, "iam.googleapis.com:443")
	var c *iamv2.PoliciesClient
	var err error
	if cf.transport == transportREST {
		c, err = interceptor.NewRESTClient(ctx, r, iamv2.NewPoliciesRESTClient, opts...)
	} else {
		c, err = interceptor.NewClient(ctx, r, iamv2.NewPoliciesClient, opts...)
	}
	if err != nil {
		return nil, err
	}
	return &denyAPI{client: c, close: c.Close}, nil
}

// sidecar is what a run needs for the roles and deny lists: their clients
// and Updaters, a Retrier without the 404 opt-in for the reads that decide
// whether to create, and a lock per deny attachment point (IAM v2 allows 5
// writes and 5 reads a minute per project: one change at a time).
type sidecar struct {
	plain   *interceptor.Retrier
	roles   *roleAPI
	roleU   *role.Updater
	deny    *denyAPI
	denyU   *deny.Updater // without CreateIfAbsent
	denyUC  *deny.Updater // with CreateIfAbsent
	mu      sync.Mutex
	attachM map[string]*sync.Mutex
}

func (sc *sidecar) lock(attachment string) func() {
	sc.mu.Lock()
	m := sc.attachM[attachment]
	if m == nil {
		m = &sync.Mutex{}
		sc.attachM[attachment] = m
	}
	sc.mu.Unlock()
	m.Lock()
	return m.Unlock
}

// connectSidecar connects what the file's roles and deny lists need.
func (run *applyRun) connectSidecar(ctx context.Context, r *interceptor.Retrier, opts []interceptor.Option) (*sidecar, func() error, error) {
	sc := &sidecar{attachM: map[string]*sync.Mutex{}}
	var hasRole, hasDeny bool
	for _, st := range run.states {
		hasRole = hasRole || st.res.kind == kindRole
		hasDeny = hasDeny || st.res.kind == kindDeny
	}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	if !hasRole && !hasDeny {
		return sc, closeAll, nil
	}
	plain, err := interceptor.New(opts...) // opts lack WithRetryNotFound
	if err != nil {
		return nil, nil, err
	}
	sc.plain = plain
	cf := run.f.conn()
	if hasRole {
		if sc.roles, err = connectRoles(ctx, cf, r); err != nil {
			return nil, nil, fmt.Errorf("connecting to the IAM admin API: %w", err)
		}
		closers = append(closers, sc.roles.close)
		if sc.roleU, err = role.NewUpdater(sc.roles, r); err != nil {
			_ = closeAll()
			return nil, nil, err
		}
	}
	if hasDeny {
		if sc.deny, err = connectDeny(ctx, cf, r); err != nil {
			_ = closeAll()
			return nil, nil, fmt.Errorf("connecting to the IAM v2 API: %w", err)
		}
		closers = append(closers, sc.deny.close)
		if sc.denyU, err = deny.NewUpdater(sc.deny.client, r); err == nil {
			sc.denyUC, err = deny.NewUpdater(sc.deny.client, r, deny.CreateIfAbsent())
		}
		if err != nil {
			_ = closeAll()
			return nil, nil, err
		}
	}
	return sc, closeAll, nil
}

// undeleteHint names the way back for a deleted role.
type hintedError struct {
	err  error
	text string
}

func (e *hintedError) Error() string { return e.err.Error() + " " + e.text }
func (e *hintedError) Unwrap() error { return e.err }
func (e *hintedError) hint() string  { return e.text }

// deletedRole is the error of a role found deleted, naming gcloud's undelete.
func deletedRole(name string, err error) error {
	parent, id, _ := strings.Cut(name, "/roles/")
	scope := "--project " + strings.TrimPrefix(parent, "projects/")
	if o, ok := strings.CutPrefix(parent, "organizations/"); ok {
		scope = "--organization " + o
	}
	return &hintedError{err: err, text: fmt.Sprintf("(refused: the role is deleted; undelete it with 'gcloud iam roles undelete %s %s', then apply again)", id, scope)}
}

// readRole reads a role without the 404 opt-in (NOT_FOUND at once);
// transient failures are retried.
func (sc *sidecar) readRole(ctx context.Context, name string) (*adminpb.Role, error) {
	var got *adminpb.Role
	err := sc.plain.Do(ctx, "google.iam.admin.v1.IAM/GetRole", func(ctx context.Context) error {
		var err error
		got, err = sc.roles.GetRole(ctx, &adminpb.GetRoleRequest{Name: name})
		return err
	})
	return got, err
}

// roleOf is the role create_if_absent creates: the entry's fields and the
// permissions it adds (or sets).
func roleOf(ar *applyRole) *adminpb.Role {
	ro := &adminpb.Role{}
	for _, c := range ar.changes() {
		_, _ = c(ro) // checked when the file was read
	}
	return ro
}

// convergeRole runs the role's read-modify-write (creating it first when
// create_if_absent and absent).
func (run *applyRun) convergeRole(ctx context.Context, sc *sidecar, st *resState) {
	res, ar := st.res, st.res.role
	var err error
	created := false
	if ar.createIfAbsent {
		if _, rerr := sc.readRole(ctx, res.name); iamcodes.CodeOf(rerr) == codes.NotFound {
			parent, id, _ := strings.Cut(res.name, "/roles/")
			st.mu.Lock()
			st.writes++
			st.mu.Unlock()
			err = sc.roles.create(ctx, parent, id, roleOf(ar))
			created = err == nil
			if iamcodes.CodeOf(err) == codes.AlreadyExists {
				err = nil // made meanwhile (or by a write whose answer was lost): update it
			}
		}
	}
	changed := false
	if err == nil {
		cs := ar.changes()
		_, err = sc.roleU.Update(ctx, res.name, func(r *adminpb.Role) (bool, error) {
			any := false
			for _, c := range cs {
				ch, err := c(r)
				if err != nil {
					return false, err
				}
				any = any || ch
			}
			changed = any
			return any, nil
		})
		if changed && err == nil {
			st.mu.Lock()
			st.writes++
			st.mu.Unlock()
		}
	}
	if errors.Is(err, role.ErrDeleted) {
		err = deletedRole(res.name, err)
	}
	run.finish(ctx, st, created || changed, err)
}

// finish records the outcome of a resource, role or deny entry: changed
// tells whether it wrote (or may have written) anything.
func (run *applyRun) finish(ctx context.Context, st *resState, changed bool, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.attempts = max(st.attempts, 1)
	var wl *waitLimitError
	switch {
	case err == nil && changed:
		st.outcome = outChanged
	case err == nil:
		st.outcome = outUnchanged
	case errors.As(context.Cause(ctx), &wl):
		st.outcome, st.err = outFailed, wl
	case errors.Is(context.Cause(ctx), errStopped) || run.stopping.Load() && ctx.Err() != nil:
		st.outcome, st.err = outInterrupted, err
	default:
		st.outcome, st.err = outFailed, err
	}
}

// planRole reads the role and says what converging it would change.
func (run *applyRun) planRole(ctx context.Context, sc *sidecar, st *resState) {
	ar := st.res.role
	before, err := sc.readRole(ctx, st.res.name)
	var plan []string
	switch {
	case iamcodes.CodeOf(err) == codes.NotFound && ar.createIfAbsent:
		err = nil
		after := roleOf(ar)
		plan = append(plan, "+ create "+st.res.name)
		plan = append(plan, roleDiff(&adminpb.Role{}, after)...)
	case err == nil && before.GetDeleted():
		err = deletedRole(st.res.name, fmt.Errorf("%s: %w", st.res.name, role.ErrDeleted))
	case err == nil:
		after := proto.Clone(before).(*adminpb.Role)
		for _, c := range ar.changes() {
			if _, cerr := c(after); cerr != nil {
				err = cerr
				break
			}
		}
		plan = roleDiff(before, after)
	}
	run.finishPlan(ctx, st, plan, err)
}

// finishPlan records a dry run's outcome of a role or deny entry.
func (run *applyRun) finishPlan(ctx context.Context, st *resState, plan []string, err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.attempts = max(st.attempts, 1)
	if err != nil {
		st.outcome, st.err = outFailed, err
		if ctx.Err() != nil {
			st.outcome = outInterrupted
		}
		return
	}
	st.plan, st.outcome = plan, outNothingToDo
	if len(plan) > 0 {
		st.outcome = outWouldChange
	}
}

// roleDiff lists what differs between two roles: "+ PERMISSION",
// "- PERMISSION", "~ FIELD: OLD -> NEW".
func roleDiff(before, after *adminpb.Role) []string {
	var out []string
	for _, f := range []struct{ name, was, is string }{
		{"title", before.GetTitle(), after.GetTitle()},
		{"description", before.GetDescription(), after.GetDescription()},
		{"stage", before.GetStage().String(), after.GetStage().String()},
	} {
		if f.was != f.is {
			out = append(out, fmt.Sprintf("~ %s: %q -> %q", f.name, f.was, f.is))
		}
	}
	was, is := before.GetIncludedPermissions(), after.GetIncludedPermissions()
	var perms []string
	for _, p := range was {
		if !slices.Contains(is, p) {
			perms = append(perms, "- "+p)
		}
	}
	for _, p := range is {
		if !slices.Contains(was, p) {
			perms = append(perms, "+ "+p)
		}
	}
	slices.SortFunc(perms, func(a, b string) int { return strings.Compare(a[2:], b[2:]) })
	return append(out, perms...)
}

// denyChanges are the entry's changes, as the library's deny Updater runs
// them.
func denyChanges(ad *applyDeny) []deny.Change {
	var cs []deny.Change
	for _, r := range ad.remove {
		cs = append(cs, deny.RemoveRule(r))
	}
	for _, r := range ad.add {
		cs = append(cs, deny.AddRule(r))
	}
	return cs
}

// convergeDeny runs the deny policy's read-modify-write, one at a time per
// attachment point; an entry with no changes is skipped.
func (run *applyRun) convergeDeny(ctx context.Context, sc *sidecar, st *resState) {
	ad := st.res.deny
	cs := denyChanges(ad)
	if len(cs) == 0 {
		run.finish(ctx, st, false, nil)
		return
	}
	defer sc.lock(ad.attachment)()
	before, rerr := sc.readDeny(ctx, st.res.name)
	u := sc.denyU
	if ad.createIfAbsent {
		u = sc.denyUC
	}
	after, err := u.Update(ctx, st.res.name, cs...)
	changed := err == nil && after != nil && (rerr != nil || after.GetEtag() != before.GetEtag())
	if changed {
		st.mu.Lock()
		st.writes++
		st.mu.Unlock()
	}
	run.finish(ctx, st, changed, err)
}

// readDeny reads a deny policy without the 404 opt-in.
func (sc *sidecar) readDeny(ctx context.Context, name string) (*iampb2.Policy, error) {
	var got *iampb2.Policy
	err := sc.plain.Do(ctx, "google.iam.v2.Policies/GetPolicy", func(ctx context.Context) error {
		var err error
		got, err = sc.deny.client.GetPolicy(ctx, &iampb2.GetPolicyRequest{Name: name})
		return err
	})
	return got, err
}

// planDeny reads the deny policy and says which rules converging it would
// add and remove (rules compared as the library compares them).
func (run *applyRun) planDeny(ctx context.Context, sc *sidecar, st *resState) {
	ad := st.res.deny
	if len(ad.add)+len(ad.remove) == 0 {
		run.finishPlan(ctx, st, nil, nil)
		return
	}
	defer sc.lock(ad.attachment)()
	p, err := sc.readDeny(ctx, st.res.name)
	var plan []string
	var have []deny.Rule
	switch {
	case iamcodes.CodeOf(err) == codes.NotFound && ad.createIfAbsent:
		err = nil
		if len(ad.add) > 0 {
			plan = append(plan, "+ create "+st.res.name)
		}
	case err == nil:
		for _, pr := range p.GetRules() {
			if r, ok := deny.RuleOf(pr); ok {
				have = append(have, r)
			}
		}
	}
	if err == nil {
		holds := func(r deny.Rule) bool { return slices.ContainsFunc(have, r.Equal) }
		for _, r := range ad.remove {
			if holds(r) {
				plan = append(plan, "- rule "+ruleString(r))
			}
		}
		for _, r := range ad.add {
			if !holds(r) {
				plan = append(plan, "+ rule "+ruleString(r))
			}
		}
	}
	run.finishPlan(ctx, st, plan, err)
}

// ruleString is a deny rule as the plan shows it.
func ruleString(r deny.Rule) string {
	s := "deny " + strings.Join(r.DeniedPrincipals, ",") + " " + strings.Join(r.DeniedPermissions, ",")
	if len(r.ExceptionPrincipals) > 0 {
		s += " except " + strings.Join(r.ExceptionPrincipals, ",")
	}
	if len(r.ExceptionPermissions) > 0 {
		s += " except permissions " + strings.Join(r.ExceptionPermissions, ",")
	}
	return s + conditionSuffix(r.Condition)
}
