package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	admin "cloud.google.com/go/iam/admin/apiv1"
	iamapi "cloud.google.com/go/iam/apiv1"
	"cloud.google.com/go/iam/apiv1/iampb"
	resourcemanager "cloud.google.com/go/resourcemanager/apiv3"
	"google.golang.org/api/option"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

const policyLong = `
Reads and changes IAM policies with retries as Google's IAM guidance says:
every call goes through the iamretry interceptor (transient failures retried
with backoff), and changes are a read-modify-write with the policy's etag,
rerun from the read when a concurrent change gets in the way (409 ABORTED).
A change that is already there writes nothing.

Subcommands:
  get              print the policy's bindings
  add-binding      grant --role to --member (optionally under a condition)
  remove-binding   revoke --role from --member (optionally the conditional grant)

The resource picks the API:
  projects/P/serviceAccounts/EMAIL         IAM admin API (service accounts)
  projects/P, folders/F, organizations/O   Resource Manager v3
  anything else                            google.iam.v1.IAMPolicy

By default it calls the real API with Application Default Credentials
(gcloud auth application-default login). --endpoint HOST:PORT --insecure
points it at a fake instead (iamretry fake-server).

Examples:
  iamretry policy get --resource projects/my-project
  iamretry policy add-binding --resource projects/my-project \
      --role roles/viewer --member user:alice@example.com --dry-run
  iamretry fake-server &    # then:
  iamretry policy add-binding --endpoint 127.0.0.1:8085 --insecure \
      --resource projects/demo --role roles/viewer --member group:ops@example.com

Run "iamretry policy SUBCOMMAND -h" for the flags of one.`

func policyCommand() *command {
	return &command{
		name:    "policy",
		summary: "get, add-binding, remove-binding on a real or fake IAM API, with retries",
		usage:   "iamretry policy get|add-binding|remove-binding --resource NAME [flags]",
		long:    policyLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) == 0 {
					return &usageError{msg: "missing subcommand: get, add-binding or remove-binding",
						hint: "Run 'iamretry policy -h' for usage."}
				}
				sub, ok := policySubcommands()[args[0]]
				if !ok {
					return &usageError{msg: fmt.Sprintf("unknown subcommand %q: want get, add-binding or remove-binding", args[0]),
						hint: "Run 'iamretry policy -h' for usage."}
				}
				if code := runPolicySubcommand(ctx, cio, sub, args[1:]); code != exitOK {
					return exitCodeError(code)
				}
				return nil
			}
		},
	}
}

type policySub struct {
	name   string // "get"
	usage  string
	long   string
	change bool // add-binding, remove-binding
	add    bool
}

func policySubcommands() map[string]*policySub {
	return map[string]*policySub{
		"get": {name: "get", usage: "iamretry policy get --resource NAME [--endpoint HOST:PORT --insecure]",
			long: "Prints the IAM policy of --resource: its version, etag and bindings (read with\nrequested policy version 3, so conditional bindings show)."},
		"add-binding": {name: "add-binding", change: true, add: true,
			usage: "iamretry policy add-binding --resource NAME --role ROLE --member MEMBER [--condition-title T --condition-expression CEL] [--dry-run]",
			long:  "Grants --role to --member on --resource by read-modify-write with the etag,\nand prints the resulting bindings. With --dry-run it reads the policy, applies\nthe change locally and prints the difference, writing nothing."},
		"remove-binding": {name: "remove-binding", change: true,
			usage: "iamretry policy remove-binding --resource NAME --role ROLE --member MEMBER [--condition-title T --condition-expression CEL] [--dry-run]",
			long:  "Revokes --member's grant of --role on --resource (the unconditional one, or\nthe one under the given condition) by read-modify-write with the etag, and\nprints the resulting bindings. With --dry-run it prints the difference only."},
	}
}

type policyFlags struct {
	resource, role, member          string
	condTitle, condExpr, condDesc   string
	endpoint                        string
	insecure, dryRun, retryNotFound bool
	deadline, timeout               time.Duration
}

func runPolicySubcommand(ctx context.Context, cio *cmdIO, sub *policySub, args []string) int {
	fs := flag.NewFlagSet("iamretry policy "+sub.name, flag.ContinueOnError)
	f := &policyFlags{}
	fs.StringVar(&f.resource, "resource", "", "the resource whose policy to use, e.g. projects/my-project (required)")
	if sub.change {
		fs.StringVar(&f.role, "role", "", "the role, e.g. roles/viewer (required)")
		fs.StringVar(&f.member, "member", "", "the principal, e.g. user:alice@example.com, serviceAccount:EMAIL, group:EMAIL, domain:example.com (required)")
		fs.StringVar(&f.condTitle, "condition-title", "", "title of the binding's condition (with --condition-expression)")
		fs.StringVar(&f.condExpr, "condition-expression", "", `CEL expression of the binding's condition, e.g. 'request.time < timestamp("2030-01-01T00:00:00Z")'`)
		fs.StringVar(&f.condDesc, "condition-description", "", "description of the binding's condition (optional)")
		fs.BoolVar(&f.dryRun, "dry-run", false, "read the policy, apply the change locally and print the difference; write nothing")
	}
	fs.StringVar(&f.endpoint, "endpoint", "", "HOST:PORT of the API to call instead of Google's (e.g. an iamretry fake-server)")
	fs.BoolVar(&f.insecure, "insecure", false, "with --endpoint: no TLS and no credentials (for a local fake)")
	fs.BoolVar(&f.retryNotFound, "retry-not-found", false, "retry NOT_FOUND too, for a resource just created (IAM reads are eventually consistent)")
	fs.DurationVar(&f.deadline, "deadline", interceptor.DefaultDeadline, "how long to keep retrying, from the first failure")
	fs.DurationVar(&f.timeout, "timeout", 2*time.Minute, "bound on the whole command (0: none)")
	return parseAndRun(ctx, fs, "policy "+sub.name, sub.usage, sub.long, args, cio, func(ctx context.Context, cio *cmdIO, args []string) error {
		if len(args) > 0 {
			return usagef("unexpected argument %q; give everything as flags", args[0])
		}
		if err := f.validate(sub); err != nil {
			return err
		}
		return runPolicy(ctx, cio, sub, f)
	})
}

func (f *policyFlags) validate(sub *policySub) error {
	if err := checkResource(f.resource); err != nil {
		return err
	}
	if sub.change {
		if err := checkRole(f.role); err != nil {
			return err
		}
		if err := checkMember(f.member); err != nil {
			return err
		}
		if (f.condTitle == "") != (f.condExpr == "") {
			return usagef("a condition needs both --condition-title and --condition-expression")
		}
		if f.condDesc != "" && f.condExpr == "" {
			return usagef("--condition-description needs --condition-title and --condition-expression")
		}
	}
	if f.insecure && f.endpoint == "" {
		return usagef("--insecure turns off TLS and credentials for --endpoint; give --endpoint HOST:PORT too (or drop --insecure to use Google's API)")
	}
	if f.endpoint != "" {
		if _, port, err := net.SplitHostPort(f.endpoint); err != nil {
			return usagef("--endpoint %q: want HOST:PORT, such as 127.0.0.1:8085", f.endpoint)
		} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return usagef("--endpoint %q: the port must be a number from 1 to 65535", f.endpoint)
		}
	}
	if err := checkNonNegative("deadline", f.deadline); err != nil {
		return err
	}
	return checkNonNegative("timeout", f.timeout)
}

func (f *policyFlags) condition() *expr.Expr {
	if f.condExpr == "" {
		return nil
	}
	return &expr.Expr{Title: f.condTitle, Expression: f.condExpr, Description: f.condDesc}
}

func (f *policyFlags) mutation(sub *policySub) policy.Mutation {
	if sub.add {
		return policy.AddConditionalBinding(f.role, f.member, f.condition())
	}
	return policy.RemoveConditionalBinding(f.role, f.member, f.condition())
}

// apiFor names the API that serves resource's policy.
func apiFor(resource string) string {
	parts := strings.Split(resource, "/")
	switch {
	case len(parts) == 4 && parts[0] == "projects" && parts[2] == "serviceAccounts":
		return "admin"
	case len(parts) == 2 && parts[0] == "projects":
		return "projects"
	case len(parts) == 2 && parts[0] == "folders":
		return "folders"
	case len(parts) == 2 && parts[0] == "organizations":
		return "organizations"
	}
	return "iampolicy"
}

// policyClient builds the client for resource, with the interceptor as a
// dial option and the client's own (gax) retries off.
func policyClient(ctx context.Context, resource string, f *policyFlags, opts ...interceptor.Option) (policy.Client, func() error, error) {
	r, err := interceptor.New(opts...)
	if err != nil {
		return nil, nil, err
	}
	copts := []option.ClientOption{
		option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(r.UnaryClientInterceptor())),
	}
	if f.endpoint != "" {
		copts = append(copts, option.WithEndpoint(f.endpoint))
	}
	if f.insecure {
		copts = append(copts,
			option.WithoutAuthentication(),
			option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))
	}
	// Retry at one layer: gax's own retries are turned off in each client's
	// CallOptions (their timeouts stay; the command's --timeout context
	// deadline overrides them) so that gax does not retry over the
	// interceptor, multiplying attempts; the interceptor and the updater
	// retry alone.
	switch apiFor(resource) {
	case "admin":
		c, err := admin.NewIamClient(ctx, copts...)
		if err != nil {
			return nil, nil, err
		}
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			return nil, nil, err
		}
		return policy.FromAdmin(c), c.Close, nil
	case "projects":
		c, err := resourcemanager.NewProjectsClient(ctx, copts...)
		if err != nil {
			return nil, nil, err
		}
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	case "folders":
		c, err := resourcemanager.NewFoldersClient(ctx, copts...)
		if err != nil {
			return nil, nil, err
		}
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	case "organizations":
		c, err := resourcemanager.NewOrganizationsClient(ctx, copts...)
		if err != nil {
			return nil, nil, err
		}
		if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
			return nil, nil, err
		}
		return c, c.Close, nil
	}
	c, err := iamapi.NewIamPolicyClient(ctx, copts...)
	if err != nil {
		return nil, nil, err
	}
	if err := interceptor.DisableGAXRetries(c.CallOptions); err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

// policyTestClock, when set (by tests only), is the clock of the policy
// command's retries, so that a test of retries waits no real time.
var policyTestClock interceptor.Clock

func runPolicy(ctx context.Context, cio *cmdIO, sub *policySub, f *policyFlags) (err error) {
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	// Every retry and every give-up is told on stderr, so a slow command
	// says why it is slow.
	observe := interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
		if a.Reason == interceptor.Succeeded {
			fmt.Fprintf(cio.stderr, "iamretry: %s attempt %d: succeeded\n", shortMethod(a.Method), a.N)
			return
		}
		what := "gave up: " + a.Reason.String()
		switch {
		case a.Reason == interceptor.Retry:
			what = "retrying in " + fmtDur(a.Wait)
		case a.Reason == interceptor.NotRetryable && a.Class == iamcodes.Conflict:
			what = "a concurrent change"
		}
		fmt.Fprintf(cio.stderr, "iamretry: %s attempt %d: %s (HTTP %d, %s): %s\n",
			shortMethod(a.Method), a.N, codeName(status.Code(a.Err)), httpStatus(status.Code(a.Err)), a.Class, what)
	})
	opts := []interceptor.Option{interceptor.WithDeadline(f.deadline), observe}
	if f.retryNotFound {
		opts = append(opts, interceptor.WithRetryNotFound())
	}
	if policyTestClock != nil {
		opts = append(opts, interceptor.WithClock(policyTestClock))
	}
	client, closeClient, err := policyClient(ctx, f.resource, f, opts...)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeClient(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	if !sub.change {
		p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: f.resource,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			return fmt.Errorf("reading the policy of %s: %w", f.resource, err)
		}
		return writePolicy(cio.stdout, f.resource, p)
	}

	m := f.mutation(sub)
	if f.dryRun {
		before, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: f.resource,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			return fmt.Errorf("reading the policy of %s: %w", f.resource, err)
		}
		after := proto.Clone(before).(*iampb.Policy)
		changed, err := m(after)
		if err != nil {
			return err
		}
		if !changed {
			fmt.Fprintf(cio.stdout, "dry run: no change to the policy of %s (%s); nothing would be written\n", f.resource, f.describeChange(sub))
			return nil
		}
		fmt.Fprintf(cio.stdout, "dry run: the policy of %s would change (nothing written):\n", f.resource)
		writeDiff(cio.stdout, before, after)
		return nil
	}

	u, err := policy.NewUpdater(client, opts...)
	if err != nil {
		return err
	}
	p, err := u.Update(ctx, f.resource, m)
	if err != nil {
		return err
	}
	fmt.Fprintf(cio.stdout, "%s: done\n", f.describeChange(sub))
	return writePolicy(cio.stdout, f.resource, p)
}

func (f *policyFlags) describeChange(sub *policySub) string {
	verb := "revoke " + f.role + " from " + f.member
	if sub.add {
		verb = "grant " + f.role + " to " + f.member
	}
	if f.condExpr != "" {
		verb += " under condition " + strconv.Quote(f.condTitle)
	}
	return verb
}

// writePolicy prints a policy for a person.
func writePolicy(w io.Writer, resource string, p *iampb.Policy) error {
	var b strings.Builder
	fmt.Fprintf(&b, "policy of %s (version %d, etag %s)\n", resource, max(p.GetVersion(), 1), base64.StdEncoding.EncodeToString(p.GetEtag()))
	if len(p.GetBindings()) == 0 {
		b.WriteString("  no bindings\n")
	}
	for _, bd := range p.GetBindings() {
		fmt.Fprintf(&b, "  %s%s\n", bd.GetRole(), conditionSuffix(bd.GetCondition()))
		for _, m := range bd.GetMembers() {
			fmt.Fprintf(&b, "    %s\n", m)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func conditionSuffix(c *expr.Expr) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf(" (condition %q: %s)", c.GetTitle(), c.GetExpression())
}

// writeDiff prints the grants (role, condition, member) that differ between
// two policies: "-" for revoked, "+" for granted.
func writeDiff(w io.Writer, before, after *iampb.Policy) {
	grants := func(p *iampb.Policy) map[string]bool {
		out := map[string]bool{}
		for _, b := range p.GetBindings() {
			for _, m := range b.GetMembers() {
				out[b.GetRole()+conditionSuffix(b.GetCondition())+"  "+m] = true
			}
		}
		return out
	}
	was, is := grants(before), grants(after)
	var lines []string
	for g := range was {
		if !is[g] {
			lines = append(lines, "- "+g)
		}
	}
	for g := range is {
		if !was[g] {
			lines = append(lines, "+ "+g)
		}
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a[2:]+a[:1], b[2:]+b[:1]) })
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
	}
}
