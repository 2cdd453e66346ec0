package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

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
you choose, writes that commit but whose answer is lost, latency, and new
service accounts that stay invisible (NOT_FOUND) for a while. Random choices
are seeded (--seed), so a run can be repeated.

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

	failCodes []codes.Code
}

func fakeServerCommand() *command {
	return &command{
		name:    "fake-server",
		summary: "serve a fake IAM API on a local port, with fault injection",
		usage:   "iamretry fake-server [--listen 127.0.0.1:8085] [--rest-listen 127.0.0.1:8086] [--fail-rate P --codes UNAVAILABLE,INTERNAL] [--lost-answer-rate P] [--latency D] [--propagation D] [--propagation-reads N]",
		long:    fakeServerLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &fakeServerFlags{}
			fs.StringVar(&f.listen, "listen", "127.0.0.1:8085", "host:port to listen on (port 0 picks a free one)")
			fs.StringVar(&f.restListen, "rest-listen", "", "host:port to serve the REST face on as well, e.g. 127.0.0.1:8086 (port 0 picks a free one; default: no REST face)")
			fs.Float64Var(&f.failRate, "fail-rate", 0, "probability (0..1) that a call fails, before it runs, with one of --codes")
			fs.StringVar(&f.codes, "codes", "UNAVAILABLE", "comma-separated gRPC codes that --fail-rate draws from, e.g. UNAVAILABLE,INTERNAL,DEADLINE_EXCEEDED")
			fs.Float64Var(&f.lostRate, "lost-answer-rate", 0, "probability (0..1) that a write commits and then answers UNAVAILABLE (a lost answer)")
			fs.DurationVar(&f.latency, "latency", 0, "delay added to every call")
			fs.DurationVar(&f.propagation, "propagation", 0, "how long a new service account answers NOT_FOUND (eventual consistency)")
			fs.IntVar(&f.propReads, "propagation-reads", 0, "how many reads of a new service account (and grants to it) answer NOT_FOUND: eventual consistency in calls, not time")
			fs.Int64Var(&f.seed, "seed", 1, "seed of the random faults; equal seeds and calls give equal faults")
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
		return checkListen("rest-listen", f.restListen, "127.0.0.1:8086")
	}
	return nil
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
	srv, err := iamtest.New(iamtest.WithSeed(f.seed))
	if err != nil {
		_ = lis.Close()
		if restLis != nil {
			_ = restLis.Close()
		}
		return nil, err
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
	fmt.Fprintf(w, "  faults: %s\n\n", f.describeFaults())
	fmt.Fprintf(w, "Point this CLI at it:\n")
	fmt.Fprintf(w, "  iamretry policy add-binding --endpoint %s --insecure --resource projects/my-project --role roles/viewer --member user:alice@example.com\n", addr)
	fmt.Fprintf(w, "  iamretry policy get --endpoint %s --insecure --resource projects/my-project\n", addr)
	if run.restAddr != "" {
		fmt.Fprintf(w, "  iamretry policy get --transport rest --endpoint http://%s/ --insecure --resource projects/my-project\n", run.restAddr)
	}
	fmt.Fprintf(w, "\nPoint a Go client at it (admin.NewIamClient, iam/apiv1, resourcemanager/apiv3 ...):\n")
	fmt.Fprintf(w, "  option.WithEndpoint(%q),\n", addr)
	fmt.Fprintf(w, "  option.WithoutAuthentication(),\n")
	fmt.Fprintf(w, "  option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),\n")
	fmt.Fprintf(w, "  option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(interceptor.UnaryClientInterceptor())),\n\n")
	if run.restAddr != "" {
		fmt.Fprintf(w, "Point a REST client at it (iam/v1, cloudresourcemanager/v3, NewIamPolicyRESTClient ...):\n")
		fmt.Fprintf(w, "  option.WithEndpoint(%q),\n", "http://"+run.restAddr+"/")
		fmt.Fprintf(w, "  option.WithHTTPClient(&http.Client{Transport: retrier.RoundTripper(nil)}),\n\n")
	}
	fmt.Fprintf(w, "Stop with Ctrl-C.\n")

	select {
	case <-ctx.Done():
		srv.Close()
		var errs []error
		for range run.serving {
			errs = append(errs, <-run.done)
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
	if f.propagation > 0 {
		parts = append(parts, fmt.Sprintf("new service accounts answer NOT_FOUND for %s", fmtDur(f.propagation)))
	}
	if f.propReads > 0 {
		parts = append(parts, fmt.Sprintf("new service accounts answer NOT_FOUND to their first %d reads", f.propReads))
	}
	if len(parts) == 0 {
		return "none (see --fail-rate, --lost-answer-rate, --latency, --propagation, --propagation-reads)"
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
