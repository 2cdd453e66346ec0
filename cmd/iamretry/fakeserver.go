package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"
	"google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/iamtest"
)

const fakeServerLong = `
Serves the in-process fake of the Google Cloud IAM gRPC API on a TCP port, so
that any program (this CLI's policy command, a Go client, a test in another
language) can be pointed at it. It speaks google.iam.v1.IAMPolicy,
google.iam.admin.v1.IAM (service accounts, keys, roles, their policies) and
the IAM methods of Resource Manager v3 Projects, Folders and Organizations,
all on one policy store with IAM's etags, and google.iam.v2.Policies (deny
policies, with their long-running operations). With --rest-listen it serves
the same store over REST (HTTP/JSON, as Google's REST APIs: the IAM mixin's
:getIamPolicy, :setIamPolicy, :testIamPermissions, Resource Manager v3's IAM
methods, service accounts and keys, /v2/policies/...) on a second port, for the discovery
clients (google.golang.org/api/iam/v1, cloudresourcemanager/v3), GAPIC REST
clients and "iamretry policy --transport rest". There is no authentication:
it listens on loopback unless told otherwise.

Fault flags make it misbehave the way IAM can: random failures with the codes
you choose, writes that commit but whose answer is lost (for every method or
per method: --method-fail-rate, --method-lost-answer-rate, repeatable,
METHOD=P with METHOD a full gRPC method name such as
google.iam.v1.IAMPolicy/SetIamPolicy), latency, and new service accounts that
stay invisible (NOT_FOUND) for a while. Random choices are seeded (--seed), so
a run can be repeated.

--seed-file FILE (YAML or JSON) sets up what the fake starts with, as
iamtest's LoadSeed documents it:

  projects:                        # a number registers the project: others then do not exist
    - {id: my-project, number: 123456789012, policy: {bindings: [{role: roles/viewer, members: [user:alice@example.com]}]}}
  folders:         [{name: folders/42, policy: {...}}]
  organizations:   [{name: organizations/7, policy: {...}}]
  serviceAccounts: [{project: my-project, accountId: deployer, policy: {...}}]
  users:           [alice@example.com]      # with --strict: the only users that exist
  groups:          [ops@example.com]        # with --strict: the only groups that exist
  customRoles:     [{parent: projects/my-project, roleId: deployer, role: {title: Deployer, includedPermissions: [iam.roles.get]}}]
  denyPolicies:    [{name: "policies/cloudresourcemanager.googleapis.com%2Fprojects%2Fmy-project/denypolicies/p", policy: {rules: [...]}}]
  policies:        {"projects/my-project/serviceAccounts/x@my-project.iam.gserviceaccount.com": {...}}

Policies are google.iam.v1.Policy in the REST JSON form (version, bindings
with role, members, condition), roles google.iam.admin.v1.Role, deny
policies google.iam.v2.Policy.

--quotas enforces IAM's per-minute request quotas (off by default), so that
a pipeline's sixth deny-policy change in a minute meets the 429 IAM sends.

--strict refuses grants as IAM does: to a service account the fake does not
hold ("Service account EMAIL does not exist."), and, when the seed file lists
users or groups, to any other user or group ("User EMAIL does not exist.").

It stops cleanly on SIGINT (Ctrl-C) or SIGTERM.`

type fakeServerFlags struct {
	listen      string
	restListen  string // "" serves no REST face
	failRate    float64
	codes       string
	lostRate    float64
	latency     time.Duration
	propagation time.Duration
	propReads   int
	seed        int64
	seedFile    string
	strict      bool
	queryBinds  bool
	quotas      bool
	methodFail  methodRates
	methodLost  methodRates
	timeScale   float64 // the fake's clock runs this many times faster (tests)

	failCodes []codes.Code
	seedJSON  []byte // --seed-file's content, as JSON
}

// methodRates is a repeatable METHOD=P flag.
type methodRates struct {
	flagName string
	rates    map[iamtest.Method]float64
	order    []iamtest.Method
}

func (m *methodRates) String() string {
	var parts []string
	for _, k := range m.order {
		parts = append(parts, fmt.Sprintf("%s=%g", k, m.rates[k]))
	}
	return strings.Join(parts, ",")
}

func (m *methodRates) Set(v string) error {
	name, p, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want METHOD=P, such as google.iam.v1.IAMPolicy/SetIamPolicy=0.2")
	}
	method := iamtest.Method("/" + strings.TrimPrefix(strings.TrimSpace(name), "/"))
	if !slices.Contains(iamtest.Methods(), method) {
		var names []string
		for _, m := range iamtest.Methods() {
			names = append(names, strings.TrimPrefix(string(m), "/"))
		}
		return fmt.Errorf("method %q is not one the fake serves; use one of %s", name, strings.Join(names, ", "))
	}
	rate, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
	if err != nil {
		return fmt.Errorf("rate %q of %s is not a number", p, name)
	}
	if err := checkRate(m.flagName, rate); err != nil {
		return err
	}
	if m.rates == nil {
		m.rates = map[iamtest.Method]float64{}
	}
	if _, seen := m.rates[method]; !seen {
		m.order = append(m.order, method)
	}
	m.rates[method] = rate
	return nil
}

func fakeServerCommand() *command {
	return &command{
		name:    "fake-server",
		summary: "serve a fake IAM API on a local port, with fault injection",
		usage:   "iamretry fake-server [--listen 127.0.0.1:8085] [--rest-listen 127.0.0.1:8086] [--seed-file FILE] [--strict] [--quotas] [--fail-rate P --codes UNAVAILABLE,INTERNAL] [--method-fail-rate METHOD=P] [--lost-answer-rate P] [--method-lost-answer-rate METHOD=P] [--latency D] [--propagation D] [--propagation-reads N]",
		long:    fakeServerLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &fakeServerFlags{methodFail: methodRates{flagName: "method-fail-rate"}, methodLost: methodRates{flagName: "method-lost-answer-rate"}}
			fs.StringVar(&f.listen, "listen", "127.0.0.1:8085", "host:port to listen on (port 0 picks a free one)")
			fs.StringVar(&f.restListen, "rest-listen", "", "host:port to serve the REST face on as well, e.g. 127.0.0.1:8086 (port 0 picks a free one; default: no REST face)")
			fs.Float64Var(&f.failRate, "fail-rate", 0, "probability (0..1) that a call fails, before it runs, with one of --codes")
			fs.StringVar(&f.codes, "codes", "UNAVAILABLE", "comma-separated gRPC codes that --fail-rate draws from, e.g. UNAVAILABLE,INTERNAL,DEADLINE_EXCEEDED")
			fs.Float64Var(&f.lostRate, "lost-answer-rate", 0, "probability (0..1) that a write commits and then answers UNAVAILABLE (a lost answer)")
			fs.DurationVar(&f.latency, "latency", 0, "delay added to every call")
			fs.DurationVar(&f.propagation, "propagation", 0, "how long a new service account answers NOT_FOUND (eventual consistency)")
			fs.IntVar(&f.propReads, "propagation-reads", 0, "how many reads of a new service account (and grants to it) answer NOT_FOUND: eventual consistency in calls, not time")
			fs.Int64Var(&f.seed, "seed", 1, "seed of the random faults; equal seeds and calls give equal faults")
			fs.StringVar(&f.seedFile, "seed-file", "", "YAML or JSON file of what the fake starts with: projects, folders, organizations, service accounts, users, groups, policies, custom roles, deny policies (format above)")
			fs.BoolVar(&f.strict, "strict", false, "refuse grants to service accounts the fake does not hold, and to users and groups the seed file does not list (when it lists any), as IAM does")
			fs.Var(&f.methodFail, "method-fail-rate", "METHOD=P: probability that a call of METHOD fails with one of --codes (repeatable; wins over --fail-rate)")
			fs.Var(&f.methodLost, "method-lost-answer-rate", "METHOD=P: probability that a call of METHOD commits and answers UNAVAILABLE (repeatable; wins over --lost-answer-rate)")
			fs.BoolVar(&f.quotas, "quotas", false, "enforce IAM's per-minute request quotas per project: v1 6,000 reads and 600 writes, deny policies (v2) 5 and 5; past them a call is refused RESOURCE_EXHAUSTED (429) as Google's front end refuses it, without RetryInfo")
			fs.BoolVar(&f.queryBinds, "rest-query-binds-body", false, "on the REST face, bind query parameters to request fields also on methods whose body is the whole request")
			fs.Float64Var(&f.timeScale, "time-scale", 1, hiddenUsage+"run the fake's clock (latency, propagation) this many times faster (tests)")
			return func(ctx context.Context, cio *cmdIO, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q; fake-server takes flags only", args[0])
				}
				if err := f.validate(); err != nil {
					return err
				}
				return runFakeServer(ctx, cio, f)
			}
		},
	}
}

func (f *fakeServerFlags) validate() error {
	if err := checkRate("fail-rate", f.failRate); err != nil {
		return err
	}
	if err := checkRate("lost-answer-rate", f.lostRate); err != nil {
		return err
	}
	cs, err := parseFailureCodes("codes", f.codes)
	if err != nil {
		return err
	}
	f.failCodes = cs
	if !(f.timeScale >= 1 && f.timeScale <= maxTimeScale) { // also NaN, +Inf
		return usagef("--time-scale %v: must be from 1 to %g", f.timeScale, float64(maxTimeScale))
	}
	if err := checkNonNegative("latency", f.latency); err != nil {
		return err
	}
	if err := checkNonNegative("propagation", f.propagation); err != nil {
		return err
	}
	if f.propReads < 0 {
		return usagef("--propagation-reads %d: must not be negative", f.propReads)
	}
	if err := checkListen("listen", f.listen, "127.0.0.1:8085"); err != nil {
		return err
	}
	if f.restListen != "" {
		if err := checkListen("rest-listen", f.restListen, "127.0.0.1:8086"); err != nil {
			return err
		}
	}
	if f.seedFile != "" {
		data, err := readSeedFile(f.seedFile)
		if err != nil {
			return usagef("--seed-file %s: %v", f.seedFile, err)
		}
		f.seedJSON = data
	}
	return nil
}

// readSeedFile reads a YAML or JSON seed file (JSON is YAML) into the JSON
// that iamtest's LoadSeed reads.
func readSeedFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return []byte("{}"), nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, errors.New("want a mapping of projects, folders, organizations, serviceAccounts, users, groups, customRoles, denyPolicies, policies")
	}
	return json.Marshal(doc)
}

// checkListen validates an address to listen on.
func checkListen(flagName, addr, example string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--%s %q: want host:port, such as %s (%v)", flagName, addr, example, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return usagef("--%s %q: the port must be a number from 0 to 65535", flagName, addr)
	}
	return nil
}

// fakeRun is a running fake-server: the fake, the addresses it serves on
// and the results of its Serve calls.
type fakeRun struct {
	srv      *iamtest.Server
	addr     string // the gRPC listener's
	restAddr string // the REST listener's, "" without --rest-listen
	done     chan error
	serving  int // how many results done will receive
}

// startFakeServer builds the fake with the flags' faults and starts serving
// it on a TCP listener, and its REST face on a second one with
// --rest-listen. The fake-server command and the tests start it the same
// way. done receives each Serve's result once the server stops.
func startFakeServer(f *fakeServerFlags) (*fakeRun, error) {
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, fmt.Errorf("cannot listen on %s: %w", f.listen, err)
	}
	var restLis net.Listener
	if f.restListen != "" {
		if restLis, err = net.Listen("tcp", f.restListen); err != nil {
			_ = lis.Close()
			return nil, fmt.Errorf("cannot listen on %s (--rest-listen): %w", f.restListen, err)
		}
	}
	opts := []iamtest.Option{iamtest.WithSeed(f.seed)}
	if f.timeScale > 1 {
		opts = append(opts, iamtest.WithClock(newScaledClock(f.timeScale)))
	}
	srv, err := iamtest.New(opts...)
	if err != nil {
		_ = lis.Close()
		if restLis != nil {
			_ = restLis.Close()
		}
		return nil, err
	}
	if f.seedJSON != nil {
		if err := srv.LoadSeed(f.seedJSON); err != nil {
			srv.Close()
			_ = lis.Close()
			if restLis != nil {
				_ = restLis.Close()
			}
			return nil, usagef("--seed-file %s: %s", f.seedFile, strings.TrimPrefix(err.Error(), "iamtest: LoadSeed: "))
		}
	}
	// iamtest refuses grants to unknown service accounts by default, as IAM
	// does; fake-server, for other processes' tests, does so under --strict.
	srv.SetRefuseUnknownServiceAccounts(f.strict)
	if !f.strict {
		srv.SetKnownPrincipals() // users and groups are checked under --strict only
	}
	srv.SetRESTQueryBindsBodyFields(f.queryBinds)
	srv.SetQuotas(f.quotas)
	for _, m := range f.methodFail.order {
		srv.SetFailureRate(m, f.methodFail.rates[m], f.failCodes...)
	}
	for _, m := range f.methodLost.order {
		srv.SetLostAnswerRate(m, f.methodLost.rates[m])
	}
	if f.propagation > 0 {
		srv.SetPropagationDelay(f.propagation)
	}
	if f.propReads > 0 {
		srv.SetPropagationReads(f.propReads)
	}
	if f.failRate > 0 {
		srv.SetFailureRate(iamtest.AnyMethod, f.failRate, f.failCodes...)
	}
	if f.lostRate > 0 {
		srv.SetLostAnswerRate(iamtest.AnyMethod, f.lostRate)
	}
	if f.latency > 0 {
		srv.SetLatency(iamtest.AnyMethod, f.latency)
	}
	run := &fakeRun{srv: srv, addr: lis.Addr().String(), done: make(chan error, 2), serving: 1}
	go func() { run.done <- servingErr(run.addr, srv.Serve(lis)) }()
	if restLis != nil {
		run.restAddr = restLis.Addr().String()
		run.serving++
		go func() { run.done <- servingErr(run.restAddr, srv.ServeREST(restLis)) }()
	}
	return run, nil
}

func runFakeServer(ctx context.Context, cio *cmdIO, f *fakeServerFlags) error {
	run, err := startFakeServer(f)
	if err != nil {
		return err
	}
	srv, addr := run.srv, run.addr
	defer srv.Close()
	for _, a := range []string{addr, run.restAddr} {
		if a != "" && !isLoopback(a) {
			fmt.Fprintf(cio.stderr, "iamretry fake-server: warning: %s is not a loopback address; the fake has no authentication and anyone who can reach it can use it\n", a)
		}
	}
	w := cio.stdout
	fmt.Fprintf(w, "fake IAM server listening on %s\n", addr)
	if run.restAddr != "" {
		fmt.Fprintf(w, "fake IAM REST face listening on http://%s/\n", run.restAddr)
	}
	fmt.Fprintf(w, "  serves google.iam.v1.IAMPolicy, google.iam.admin.v1.IAM and Resource Manager v3 Projects, Folders, Organizations (IAM methods), google.iam.v2.Policies (deny policies)\n")
	fmt.Fprintf(w, "  faults: %s\n", f.describeFaults())
	if f.seedFile != "" {
		fmt.Fprintf(w, "  seeded from %s\n", f.seedFile)
	}
	if f.quotas {
		fmt.Fprintf(w, "  quotas: IAM's per-minute request quotas per project are enforced (deny policies: 5 reads and 5 writes a minute)\n")
	}
	if f.strict {
		fmt.Fprintf(w, "  strict: grants to service accounts it does not hold, and to users and groups the seed file does not list, are refused\n")
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Point this CLI at it:\n")
	fmt.Fprintf(w, "  iamretry policy add-binding --endpoint %s --insecure --resource projects/my-project --role roles/viewer --member user:alice@example.com\n", addr)
	fmt.Fprintf(w, "  iamretry policy get --endpoint %s --insecure --resource projects/my-project\n", addr)
	if run.restAddr != "" {
		fmt.Fprintf(w, "  iamretry policy get --transport rest --endpoint http://%s/ --insecure --resource projects/my-project\n", run.restAddr)
	}
	fmt.Fprintf(w, "\nPoint a Go client at it, wired as the README says (admin.NewIamClient, iam/apiv1, resourcemanager/apiv3 ...):\n")
	fmt.Fprintf(w, "  r, err := interceptor.New()\n")
	fmt.Fprintf(w, "  client, err := interceptor.NewClient(ctx, r, admin.NewIamClient,\n")
	fmt.Fprintf(w, "      option.WithEndpoint(%q),\n", addr)
	fmt.Fprintf(w, "      option.WithoutAuthentication(),\n")
	fmt.Fprintf(w, "      option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())))\n\n")
	if run.restAddr != "" {
		fmt.Fprintf(w, "Point a REST client at it (iam/v1 and cloudresourcemanager/v3 NewService, NewIamPolicyRESTClient ...):\n")
		fmt.Fprintf(w, "  svc, err := interceptor.NewRESTClient(ctx, r, iam.NewService,\n")
		fmt.Fprintf(w, "      option.WithEndpoint(%q),\n", "http://"+run.restAddr+"/")
		fmt.Fprintf(w, "      option.WithoutAuthentication())\n\n")
	}
	fmt.Fprintf(w, "Stop with Ctrl-C.\n")

	select {
	case <-ctx.Done():
		srv.Close()
		var errs []error
		for range run.serving {
			// A Serve that had not started when Close ran answers
			// net.ErrClosed: stopped before it served, as asked.
			if err := <-run.done; !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		fmt.Fprintf(w, "fake IAM server stopped (%d calls served)\n", srv.CountCalls(iamtest.AnyMethod))
		return nil
	case err := <-run.done:
		if err == nil {
			err = errors.New("the server stopped")
		}
		return err
	}
}

// servingErr names the address a Serve call that failed was serving on.
func servingErr(addr string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("serving on %s: %w", addr, err)
}

func (f *fakeServerFlags) describeFaults() string {
	var parts []string
	if f.failRate > 0 {
		names := make([]string, len(f.failCodes))
		for i, c := range f.failCodes {
			names[i] = codeName(c)
		}
		parts = append(parts, fmt.Sprintf("%g%% of calls fail with %s", f.failRate*100, strings.Join(names, " or ")))
	}
	if f.lostRate > 0 {
		parts = append(parts, fmt.Sprintf("%g%% of writes commit and lose their answer", f.lostRate*100))
	}
	if f.latency > 0 {
		parts = append(parts, fmt.Sprintf("%s latency", fmtDur(f.latency)))
	}
	for _, m := range f.methodFail.order {
		parts = append(parts, fmt.Sprintf("%g%% of %s calls fail", f.methodFail.rates[m]*100, strings.TrimPrefix(string(m), "/")))
	}
	for _, m := range f.methodLost.order {
		parts = append(parts, fmt.Sprintf("%g%% of %s calls lose their answer", f.methodLost.rates[m]*100, strings.TrimPrefix(string(m), "/")))
	}
	if f.propagation > 0 {
		parts = append(parts, fmt.Sprintf("new service accounts answer NOT_FOUND for %s", fmtDur(f.propagation)))
	}
	if f.propReads > 0 {
		parts = append(parts, fmt.Sprintf("new service accounts answer NOT_FOUND to their first %d reads", f.propReads))
	}
	if len(parts) == 0 {
		return "none (see --fail-rate, --method-fail-rate, --lost-answer-rate, --latency, --propagation, --propagation-reads)"
	}
	return strings.Join(parts, "; ") + fmt.Sprintf(" (seed %d)", f.seed)
}

// isLoopback reports whether addr (host:port) is on a loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
