package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	expr "google.golang.org/genproto/googleapis/type/expr"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
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

The resource picks the API that owns its policy:
  projects/P/serviceAccounts/EMAIL         IAM admin API (service accounts)
  projects/P, folders/F, organizations/O   Resource Manager v3
  //SERVICE/NAME, a full resource name     that service, e.g.
      //pubsub.googleapis.com/projects/P/topics/T (topics, subscriptions, ...)
      //secretmanager.googleapis.com/projects/P/secrets/S
      //cloudkms.googleapis.com/projects/P/locations/L/keyRings/R
      //run.googleapis.com/projects/P/locations/L/services/S (or jobs/J)

By default it calls the real API over gRPC, with Application Default Credentials
(gcloud auth application-default login). --endpoint HOST:PORT --insecure
points it at a fake instead (iamretry fake-server).

--transport rest calls the REST (HTTP/JSON) APIs instead, for projects,
folders, organizations (cloudresourcemanager/v3) and service accounts
(iam/v1), with the iamretry RoundTripper as the layer that retries;
--endpoint then takes a base URL, such as the one of
"iamretry fake-server --rest-listen 127.0.0.1:8086": http://127.0.0.1:8086/.

Examples:
  iamretry policy get --resource projects/my-project
  iamretry policy add-binding --resource projects/my-project \
      --role roles/viewer --member user:alice@example.com --dry-run
  iamretry fake-server &    # then:
  iamretry policy add-binding --endpoint 127.0.0.1:8085 --insecure \
      --resource projects/demo --role roles/viewer --member group:ops@example.com
  iamretry fake-server --rest-listen 127.0.0.1:8086 &    # then:
  iamretry policy get --transport rest --endpoint http://127.0.0.1:8086/ \
      --insecure --resource projects/demo

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
		"get": {name: "get", usage: "iamretry policy get --resource NAME [--transport grpc|rest] [--endpoint HOST:PORT|URL --insecure] [--json]",
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
	json                            bool
	transport                       string // "grpc" or "rest"
	restBase                        string // with rest and --endpoint: the base URL
	deadline, timeout               time.Duration

	route route  // where the policy lives (from --resource)
	name  string // the relative name sent to it
}

func runPolicySubcommand(ctx context.Context, cio *cmdIO, sub *policySub, args []string) int {
	fs := flag.NewFlagSet("iamretry policy "+sub.name, flag.ContinueOnError)
	f := &policyFlags{}
	fs.StringVar(&f.resource, "resource", "", "the resource whose policy to use: projects/P, folders/F, organizations/O, projects/P/serviceAccounts/EMAIL, or a full name such as //pubsub.googleapis.com/projects/P/topics/T (required)")
	if sub.change {
		fs.StringVar(&f.role, "role", "", "the role, e.g. roles/viewer (required)")
		fs.StringVar(&f.member, "member", "", "the principal, e.g. user:alice@example.com, serviceAccount:EMAIL, group:EMAIL, domain:example.com (required)")
		fs.StringVar(&f.condTitle, "condition-title", "", "title of the binding's condition (with --condition-expression)")
		fs.StringVar(&f.condExpr, "condition-expression", "", `CEL expression of the binding's condition, e.g. 'request.time < timestamp("2030-01-01T00:00:00Z")'`)
		fs.StringVar(&f.condDesc, "condition-description", "", "description of the binding's condition (optional)")
		fs.BoolVar(&f.dryRun, "dry-run", false, "read the policy, apply the change locally and print the difference; write nothing")
	} else {
		fs.BoolVar(&f.json, "json", false, "print the policy as JSON (the API's own form) instead of text")
	}
	fs.StringVar(&f.transport, "transport", transportGRPC, "grpc, or rest (HTTP/JSON through cloudresourcemanager/v3 and iam/v1, for "+restKinds+")")
	fs.StringVar(&f.endpoint, "endpoint", "", "HOST:PORT of the API to call instead of Google's (e.g. an iamretry fake-server); with --transport rest a base URL such as http://127.0.0.1:8086/ (fake-server --rest-listen)")
	fs.BoolVar(&f.insecure, "insecure", false, "with --endpoint: no TLS and no credentials (for a local fake)")
	fs.BoolVar(&f.retryNotFound, "retry-not-found", false, "retry NOT_FOUND too, for a resource just created (IAM reads are eventually consistent)")
	fs.DurationVar(&f.deadline, "deadline", interceptor.DefaultDeadline, "how long to keep retrying, from the first failure (0: no retry deadline of its own; --timeout or Ctrl-C still end the command)")
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
	rt, name, err := resolve(f.resource)
	if err != nil {
		return err
	}
	f.route, f.name = rt, name
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
	if err := f.checkTransport(); err != nil {
		return err
	}
	if f.endpoint != "" && f.transport == transportGRPC {
		if err := checkHostPort(f.endpoint, "127.0.0.1:8085"); err != nil {
			return err
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

// policyClient connects to the service that holds the policy of the
// resource (see routes), with r's interceptor as a dial option; with
// --transport rest, to its discovery client with r's RoundTripper
// (restclient.go).
func policyClient(ctx context.Context, f *policyFlags, r *interceptor.Retrier) (policy.Client, func() error, error) {
	if f.transport == transportREST {
		return restClient(ctx, f, r)
	}
	conn, err := f.route.dial(ctx, f, r.UnaryClientInterceptor())
	if err != nil {
		return nil, nil, err
	}
	return policy.FromService(conn, f.route.grpcService), conn.Close, nil
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
	progress := newStream(progressRenderer{w: cio.stderr})
	observe := interceptor.WithObserver(func(_ context.Context, a interceptor.Attempt) {
		progress.emit(failedAttempt(0, 0, "", a))
	})
	opts := []interceptor.Option{interceptor.WithDeadline(f.deadline), observe}
	if f.retryNotFound {
		opts = append(opts, interceptor.WithRetryNotFound())
	}
	if policyTestClock != nil {
		opts = append(opts, interceptor.WithClock(policyTestClock))
	}
	// One Retrier for the client's interceptor (or RoundTripper) and the
	// Updater: one budget, one deadline, one set of observers.
	r, err := interceptor.New(opts...)
	if err != nil {
		return err
	}
	client, closeClient, err := policyClient(ctx, f, r)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := closeClient(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	if !sub.change {
		p, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: f.name,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			return f.explain(fmt.Errorf("reading the policy of %s: %w", f.resource, err))
		}
		if f.json {
			b, err := protojson.MarshalOptions{Multiline: true}.Marshal(p)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cio.stdout, "%s\n", b)
			return err
		}
		return writePolicy(cio.stdout, f.resource, p)
	}

	var changed atomic.Bool // did any run of the mutation change the policy?
	mut := f.mutation(sub)
	m := func(p *iampb.Policy) (bool, error) {
		c, err := mut(p)
		if c {
			changed.Store(true)
		}
		return c, err
	}
	if f.dryRun {
		before, err := client.GetIamPolicy(ctx, &iampb.GetIamPolicyRequest{Resource: f.name,
			Options: &iampb.GetPolicyOptions{RequestedPolicyVersion: 3}})
		if err != nil {
			return f.explain(fmt.Errorf("reading the policy of %s: %w", f.resource, err))
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

	u, err := policy.NewUpdater(client, r)
	if err != nil {
		return err
	}
	p, err := u.Update(ctx, f.name, m)
	if err != nil {
		return f.explain(err)
	}
	switch {
	case changed.Load():
		fmt.Fprintf(cio.stdout, "%s: done\n", f.describeChange(sub))
	case sub.add:
		fmt.Fprintf(cio.stdout, "%s: already present, nothing written\n", f.describeChange(sub))
	default:
		fmt.Fprintf(cio.stdout, "%s: not present, nothing written\n", f.describeChange(sub))
	}
	return writePolicy(cio.stdout, f.resource, p)
}

// explain adds what to do to an error the user can act on: a NOT_FOUND
// without --retry-not-found may be a resource that has not propagated yet.
func (f *policyFlags) explain(err error) error {
	if iamcodes.CodeOf(err) == codes.NotFound && !f.retryNotFound {
		return fmt.Errorf("%w\n(IAM is eventually consistent: a resource or service account created moments ago can answer NOT_FOUND for a while; if it is new, run again with --retry-not-found)", err)
	}
	return err
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
