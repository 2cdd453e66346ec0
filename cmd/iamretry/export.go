package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/iam/admin/apiv1/adminpb"
	"cloud.google.com/go/iam/apiv1/iampb"
	yaml "go.yaml.in/yaml/v3"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

const exportLong = `
Reads the live IAM allow policies of the resources named (and, with --role,
custom roles) and writes an apply file that says what is there: each
resource with a bindings entry for every role and condition found, which
apply treats as authoritative, and each role with its title, description,
stage and permissions list, also authoritative. Deleted principals (deleted:...) are left out (apply
leaves them in place). Applied straight away, the file writes nothing: it
is how a team adopts "iamretry apply" for resources it already has.

  iamretry export --resource projects/my-project --resource folders/123 -f iam/bindings.yaml
  iamretry apply -f iam/bindings.yaml --dry-run --detailed-exitcode   # exit 0: nothing to do

The file is written on stdout without -f, and only once every read
succeeded (a failed read: exit 1, the file untouched). The file's schema
is apply's: see "iamretry apply -h". Reads are retried as apply retries
them (transient failures within --deadline; a resource that answers
NOT_FOUND for up to --resource-wait).

Exit codes: 0 written; 1 a read failed; 2 bad input.`

type exportFlags struct {
	resources, roles listFlag
	file             string
	deadline         time.Duration
	resourceWait     time.Duration
	transport        string
	endpoint         string
	insecure         bool
	timeScale        float64
	restBase         string
}

func exportCommand() *command {
	return &command{
		name:    "export",
		summary: "write an apply file of the live bindings (and custom roles) of resources, to adopt apply",
		usage:   "iamretry export --resource R [--resource R ...] [--role ROLE ...] [-f FILE] [--transport grpc|rest] [--endpoint HOST:PORT|URL --insecure]",
		long:    exportLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &exportFlags{}
			fs.Var(&f.resources, "resource", "a `RESOURCE` whose allow policy to export, as apply's file names it (repeat for more)")
			fs.Var(&f.roles, "role", "a custom `ROLE` to export, projects/P/roles/NAME or organizations/O/roles/NAME, with its permissions (repeat for more)")
			fs.StringVar(&f.file, "f", "", "the `FILE` to write (default: stdout)")
			fs.DurationVar(&f.deadline, "deadline", 300*time.Second, "how long each read keeps retrying, from its first failure")
			fs.DurationVar(&f.resourceWait, "resource-wait", 60*time.Second, "how long a resource that answers NOT_FOUND is waited for (0: at once)")
			fs.StringVar(&f.transport, "transport", transportGRPC, "grpc, or rest (HTTP/JSON, for "+restKinds+")")
			fs.StringVar(&f.endpoint, "endpoint", "", "HOST:PORT of the API to call instead of Google's (e.g. an iamretry fake-server); with --transport rest a base URL")
			fs.BoolVar(&f.insecure, "insecure", false, "with --endpoint: no TLS and no credentials (for a local fake)")
			fs.Float64Var(&f.timeScale, "time-scale", 1, hiddenUsage+"run the retry schedule this many times faster (tests)")
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q; name resources with --resource", args[0])
				}
				return runExport(ctx, cio, f)
			}
		},
	}
}

// exportResource is a resource to export, resolved.
type exportResource struct {
	name  string
	route route
	rel   string
}

func (f *exportFlags) validate() ([]exportResource, error) {
	if len(f.resources) == 0 && len(f.roles) == 0 {
		return nil, usagef("give at least one --resource (or --role) to export")
	}
	if err := checkNonNegative("deadline", f.deadline); err != nil {
		return nil, err
	}
	if err := checkNonNegative("resource-wait", f.resourceWait); err != nil {
		return nil, err
	}
	if !(f.timeScale >= 1 && f.timeScale <= maxTimeScale) {
		return nil, usagef("--time-scale %v: must be from 1 to %g", f.timeScale, float64(maxTimeScale))
	}
	c := connFlags{transport: f.transport, endpoint: f.endpoint, insecure: f.insecure}
	if err := c.check(); err != nil {
		return nil, err
	}
	f.restBase = c.restBase
	var out []exportResource
	seen := map[string]bool{}
	for _, name := range f.roles {
		if err := checkRole(name); err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "roles/") {
			return nil, usagef("--role %q: export writes custom roles (projects/P/roles/NAME, organizations/O/roles/NAME); a predefined role cannot be changed", name)
		}
		if why := projectsProblem(name); why != "" {
			return nil, usagef("--role %q: %s", name, why)
		}
		if seen[name] {
			return nil, usagef("--role %q is given twice", name)
		}
		seen[name] = true
	}
	for _, name := range f.resources {
		rt, rel, err := resolve(name)
		if err != nil {
			return nil, err
		}
		if why := projectsProblem(rel); why != "" {
			return nil, usagef("--resource %q: %s", name, why)
		}
		if _, ok := restAdapters[rt.grpcService]; f.transport == transportREST && !ok {
			return nil, usagef("--resource %q: --transport rest reaches %s; use --transport grpc for this one", name, restKinds)
		}
		if seen[rt.host+"/"+rel] {
			return nil, usagef("--resource %q is given twice", name)
		}
		seen[rt.host+"/"+rel] = true
		out = append(out, exportResource{name: name, route: rt, rel: rel})
	}
	return out, nil
}

// The exported file: apply's schema (apply_file.go), as yaml.v3 writes
// these types.
type (
	exportFile struct {
		Resources []exportedResource `yaml:"resources,omitempty"`
		Roles     []exportedRole     `yaml:"roles,omitempty"`
	}
	exportedRole struct {
		Role        string   `yaml:"role"`
		Title       string   `yaml:"title,omitempty"`
		Description string   `yaml:"description,omitempty"`
		Stage       string   `yaml:"stage"`
		Permissions []string `yaml:"permissions"`
	}
	exportedResource struct {
		Resource string            `yaml:"resource"`
		Bindings []exportedBinding `yaml:"bindings"`
	}
	exportedBinding struct {
		Role      string             `yaml:"role"`
		Members   []string           `yaml:"members,flow"`
		Condition *exportedCondition `yaml:"condition,omitempty"`
	}
	exportedCondition struct {
		Title       string `yaml:"title"`
		Expression  string `yaml:"expression"`
		Description string `yaml:"description,omitempty"`
	}
)

func runExport(ctx context.Context, cio *cmdIO, f *exportFlags) error {
	resources, err := f.validate()
	if err != nil {
		return err
	}
	clock := interceptor.WallClock()
	if f.timeScale != 1 {
		clock = newScaledClock(f.timeScale)
	}
	bound := func(ctx context.Context, a interceptor.Attempt) {
		if a.Retrying && a.Class == iamcodes.Propagation && a.Elapsed+a.Wait > f.resourceWait {
			if cancel, ok := ctx.Value(exportCancelKey{}).(context.CancelCauseFunc); ok {
				cancel(&waitLimitError{err: a.Err, flag: "resource-wait", limit: f.resourceWait})
			}
		}
	}
	r, err := interceptor.New(interceptor.WithDeadline(f.deadline), interceptor.WithClock(clock),
		interceptor.WithClassifier(classifyNotExist), interceptor.WithRetryNotFound(), interceptor.WithObserver(bound))
	if err != nil {
		return err
	}
	var rts []route
	for _, res := range resources {
		rts = append(rts, res.route)
	}
	conn := connFlags{transport: f.transport, endpoint: f.endpoint, insecure: f.insecure, restBase: f.restBase}
	clients, closeAll, err := connectRoutes(ctx, rts, conn, r)
	if err != nil {
		return err
	}
	defer closeAll()

	out := exportFile{}
	var failed []string
	for _, res := range resources {
		rctx, cancel := context.WithCancelCause(ctx)
		rctx = context.WithValue(rctx, exportCancelKey{}, cancel)
		p, err := clients[res.route.grpcService].GetIamPolicy(rctx, &iampb.GetIamPolicyRequest{Resource: res.rel,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		var wl *waitLimitError
		if err != nil && errors.As(context.Cause(rctx), &wl) {
			err = wl
		}
		cancel(nil)
		if ctx.Err() != nil {
			fmt.Fprintf(cio.stderr, "iamretry export: stopped by a signal; nothing was written\n")
			return exitCodeError(signalExitCode(ctx))
		}
		if err != nil {
			code, msg := failure(err)
			failed = append(failed, fmt.Sprintf("%s: %s: %s", res.name, code, msg))
			continue
		}
		out.Resources = append(out.Resources, exportedResource{Resource: res.name, Bindings: exportBindings(p)})
	}
	if ctx.Err() != nil {
		return exitCodeError(signalExitCode(ctx))
	}
	if len(f.roles) > 0 {
		roles, err := connectRoles(ctx, conn, r)
		if err != nil {
			return fmt.Errorf("connecting to the IAM admin API: %w", err)
		}
		defer roles.close()
		for _, name := range f.roles {
			rctx, cancel := context.WithCancelCause(ctx)
			rctx = context.WithValue(rctx, exportCancelKey{}, cancel)
			ro, err := roles.GetRole(rctx, &adminpb.GetRoleRequest{Name: name})
			var wl *waitLimitError
			if err != nil && errors.As(context.Cause(rctx), &wl) {
				err = wl
			}
			cancel(nil)
			if err == nil && ro.GetDeleted() {
				err = deletedRole(name, errors.New(name+": the role is deleted"))
			}
			if err != nil {
				code, msg := failure(err)
				failed = append(failed, fmt.Sprintf("%s: %s: %s", name, code, msg))
				continue
			}
			perms := slices.Clone(ro.GetIncludedPermissions())
			slices.Sort(perms)
			if perms == nil {
				perms = []string{}
			}
			out.Roles = append(out.Roles, exportedRole{Role: name, Title: ro.GetTitle(), Description: ro.GetDescription(),
				Stage: ro.GetStage().String(), Permissions: perms})
		}
	}
	if len(failed) > 0 {
		for _, l := range failed {
			fmt.Fprintf(cio.stderr, "iamretry export: FAILED %s\n", l)
		}
		fmt.Fprintf(cio.stderr, "iamretry export: %d of %d reads failed; nothing was written\n", len(failed), len(resources)+len(f.roles))
		return exitCodeError(exitFailure)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Written by iamretry export: the live bindings, each authoritative for its role and\n# condition; apply of this file as it is writes nothing. See 'iamretry apply -h'.\n")
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	if f.file == "" {
		_, err := cio.stdout.Write(b.Bytes())
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.file), ".iamretry-export-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), f.file); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	fmt.Fprintf(cio.stderr, "iamretry export: wrote %s (%s, %s)\n", f.file, plural(len(out.Resources), "resource"), plural(len(out.Roles), "role"))
	return nil
}

// exportCancelKey carries the cancel function of one export read, so that
// the observer can end a wait past --resource-wait.
type exportCancelKey struct{}

// exportBindings is p's bindings as authoritative entries, one per role and
// condition, members sorted, deleted: members left out (apply leaves them
// in place), bindings that hold only deleted members left out.
func exportBindings(p *iampb.Policy) []exportedBinding {
	byID := map[string]*exportedBinding{}
	var out []*exportedBinding
	for _, pb := range p.GetBindings() {
		id := pb.GetRole() + condKey(pb.GetCondition())
		b := byID[id]
		if b == nil {
			b = &exportedBinding{Role: pb.GetRole(), Members: []string{}}
			if c := pb.GetCondition(); c != nil {
				b.Condition = &exportedCondition{Title: c.GetTitle(), Expression: c.GetExpression(), Description: c.GetDescription()}
			}
			byID[id] = b
			out = append(out, b)
		}
		for _, m := range pb.GetMembers() {
			if !strings.HasPrefix(m, "deleted:") && !slices.Contains(b.Members, m) {
				b.Members = append(b.Members, m)
			}
		}
	}
	res := []exportedBinding{}
	for _, b := range out {
		if len(b.Members) == 0 {
			continue
		}
		slices.SortFunc(b.Members, func(x, y string) int { return cmp.Compare(policy.CanonicalMember(x), policy.CanonicalMember(y)) })
		res = append(res, *b)
	}
	slices.SortStableFunc(res, func(x, y exportedBinding) int {
		return cmp.Or(cmp.Compare(x.Role, y.Role), cmp.Compare(condOrder(x.Condition), condOrder(y.Condition)))
	})
	return res
}

func condOrder(c *exportedCondition) string {
	if c == nil {
		return ""
	}
	return "\x00" + c.Title + "\x00" + c.Expression + "\x00" + c.Description
}
