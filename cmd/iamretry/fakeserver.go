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
all on one policy store with IAM's etags. There is no authentication: it
listens on loopback unless told otherwise.

Fault flags make it misbehave the way IAM can: random failures with the codes
you choose, writes that commit but whose answer is lost, latency, and new
service accounts that stay invisible (NOT_FOUND) for a while. Random choices
are seeded (--seed), so a run can be repeated.

It stops cleanly on SIGINT (Ctrl-C) or SIGTERM.`

type fakeServerFlags struct {
	listen      string
	failRate    float64
	codes       string
	lostRate    float64
	latency     time.Duration
	propagation time.Duration
	seed        int64

	failCodes []codes.Code
}

func fakeServerCommand() *command {
	return &command{
		name:    "fake-server",
		summary: "serve a fake IAM API on a local port, with fault injection",
		usage:   "iamretry fake-server [--listen 127.0.0.1:8085] [--fail-rate P --codes UNAVAILABLE,INTERNAL] [--lost-answer-rate P] [--latency D] [--propagation D]",
		long:    fakeServerLong,
		flags: func(fs *flag.FlagSet) func(context.Context, *cmdIO, []string) error {
			f := &fakeServerFlags{}
			fs.StringVar(&f.listen, "listen", "127.0.0.1:8085", "host:port to listen on (port 0 picks a free one)")
			fs.Float64Var(&f.failRate, "fail-rate", 0, "probability (0..1) that a call fails, before it runs, with one of --codes")
			fs.StringVar(&f.codes, "codes", "UNAVAILABLE", "comma-separated gRPC codes that --fail-rate draws from, e.g. UNAVAILABLE,INTERNAL,DEADLINE_EXCEEDED")
			fs.Float64Var(&f.lostRate, "lost-answer-rate", 0, "probability (0..1) that a write commits and then answers UNAVAILABLE (a lost answer)")
			fs.DurationVar(&f.latency, "latency", 0, "delay added to every call")
			fs.DurationVar(&f.propagation, "propagation", 0, "how long a new service account answers NOT_FOUND (eventual consistency)")
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
	_, port, err := net.SplitHostPort(f.listen)
	if err != nil {
		return usagef("--listen %q: want host:port, such as 127.0.0.1:8085 (%v)", f.listen, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return usagef("--listen %q: the port must be a number from 0 to 65535", f.listen)
	}
	return nil
}

// startFakeServer builds the fake with the flags' faults and starts serving
// it on a TCP listener. The fake-server command and the tests start it the
// same way. done receives Serve's result once the server stops.
func startFakeServer(f *fakeServerFlags) (srv *iamtest.Server, addr string, done <-chan error, err error) {
	lis, err := net.Listen("tcp", f.listen)
	if err != nil {
		return nil, "", nil, err
	}
	srv, err = iamtest.New(iamtest.WithSeed(f.seed))
	if err != nil {
		_ = lis.Close()
		return nil, "", nil, err
	}
	if f.propagation > 0 {
		srv.SetPropagationDelay(f.propagation)
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
	ch := make(chan error, 1)
	go func() { ch <- srv.Serve(lis) }()
	return srv, lis.Addr().String(), ch, nil
}

func runFakeServer(ctx context.Context, cio *cmdIO, f *fakeServerFlags) error {
	srv, addr, done, err := startFakeServer(f)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", f.listen, err)
	}
	defer srv.Close()
	if !isLoopback(addr) {
		fmt.Fprintf(cio.stderr, "iamretry fake-server: warning: %s is not a loopback address; the fake has no authentication and anyone who can reach it can use it\n", addr)
	}
	w := cio.stdout
	fmt.Fprintf(w, "fake IAM server listening on %s\n", addr)
	fmt.Fprintf(w, "  serves google.iam.v1.IAMPolicy, google.iam.admin.v1.IAM and Resource Manager v3 Projects, Folders, Organizations (IAM methods)\n")
	fmt.Fprintf(w, "  faults: %s\n\n", f.describeFaults())
	fmt.Fprintf(w, "Point this CLI at it:\n")
	fmt.Fprintf(w, "  iamretry policy add-binding --endpoint %s --insecure --resource projects/my-project --role roles/viewer --member user:alice@example.com\n", addr)
	fmt.Fprintf(w, "  iamretry policy get --endpoint %s --insecure --resource projects/my-project\n\n", addr)
	fmt.Fprintf(w, "Point a Go client at it (admin.NewIamClient, iam/apiv1, resourcemanager/apiv3 ...):\n")
	fmt.Fprintf(w, "  option.WithEndpoint(%q),\n", addr)
	fmt.Fprintf(w, "  option.WithoutAuthentication(),\n")
	fmt.Fprintf(w, "  option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),\n")
	fmt.Fprintf(w, "  option.WithGRPCDialOption(grpc.WithChainUnaryInterceptor(interceptor.UnaryClientInterceptor())),\n\n")
	fmt.Fprintf(w, "Stop with Ctrl-C.\n")

	select {
	case <-ctx.Done():
		srv.Close()
		if err := <-done; err != nil {
			return err
		}
		fmt.Fprintf(w, "fake IAM server stopped (%d calls served)\n", srv.CountCalls(iamtest.AnyMethod))
		return nil
	case err := <-done:
		if err == nil {
			err = errors.New("the server stopped")
		}
		return fmt.Errorf("serving on %s: %w", addr, err)
	}
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
	if len(parts) == 0 {
		return "none (see --fail-rate, --lost-answer-rate, --latency, --propagation)"
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
