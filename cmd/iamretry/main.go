// Command iamretry shows, simulates and applies Google's IAM guidance for
// retrying failed requests ("Retry failed requests"): truncated exponential
// backoff with jitter for 500/502/503/504, opt-in retries of 404 while a new
// resource propagates, and a rerun of the whole read-modify-write on 409.
//
//	iamretry demo          the whole story against an in-process fake (make demo)
//	iamretry simulate      the thundering herd, with and without jitter
//	iamretry fake-server   the fake IAM server on a TCP port, with faults
//	iamretry policy        get, add-binding, remove-binding with retries
//	iamretry apply         converge many resources' bindings from a file (CI/CD)
//	iamretry export        write such a file from the live policies (to adopt apply)
//
// Run "iamretry help" for the commands and "iamretry CMD -h" for the flags of
// one. Exit codes: 0 success, 1 failure, 2 usage error (and 3, changes
// pending, from apply --dry-run --detailed-exitcode).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	// exitChangesPending: apply --dry-run --detailed-exitcode found changes
	// (3, not Terraform's 2: 2 is bad input here).
	exitChangesPending = 3
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand of iamretry.
type command struct {
	name    string
	summary string // one line for "iamretry help"
	usage   string // the synopsis, e.g. "iamretry demo [flags]"
	long    string // what it does, for "iamretry CMD -h"
	// flags defines the command's flags on fs and returns the function that
	// runs it once they are parsed; args are the remaining arguments.
	flags func(fs *flag.FlagSet) func(ctx context.Context, io *cmdIO, args []string) error
}

// cmdIO is where a command writes.
type cmdIO struct {
	stdout, stderr io.Writer
}

// commands in the order "iamretry help" lists them.
func commands() []*command {
	return []*command{demoCommand(), simulateCommand(), fakeServerCommand(), policyCommand(), applyCommand(), exportCommand()}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

// run is the whole program, minus the process: it parses args (without the
// program name), runs the command and returns the exit code. Tests call it
// in-process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cio := &cmdIO{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		writeHelp(stderr)
		fmt.Fprintln(stderr, "\niamretry: no command given; try 'iamretry demo'.")
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, versionLine())
		return exitOK
	case "help", "-h", "-help", "--help":
		if name == "help" && len(rest) > 0 {
			c := findCommand(rest[0])
			if c == nil {
				return usageFail(stderr, "help", fmt.Errorf("unknown command %q", rest[0]), "Run 'iamretry help' for the list of commands.")
			}
			if c.name == "policy" && len(rest) > 1 {
				return runCommand(ctx, c, append(rest[1:2:2], "-h"), cio)
			}
			return runCommand(ctx, c, []string{"-h"}, cio)
		}
		writeHelp(stdout)
		return exitOK
	}
	c := findCommand(name)
	if c == nil {
		return usageFail(stderr, "", fmt.Errorf("unknown command %q", name), "Run 'iamretry help' for the list of commands.")
	}
	return runCommand(ctx, c, rest, cio)
}

// runCommand parses a command's flags and runs it.
func runCommand(ctx context.Context, c *command, args []string, cio *cmdIO) int {
	fs := flag.NewFlagSet("iamretry "+c.name, flag.ContinueOnError)
	runFn := c.flags(fs)
	return parseAndRun(ctx, fs, c.name, c.usage, c.long, args, cio, runFn)
}

// parseAndRun parses args into fs and runs fn; it maps -h, usage errors and
// failures to their exit codes. name is the command as the user typed it
// ("demo", "policy get").
func parseAndRun(ctx context.Context, fs *flag.FlagSet, name, usage, long string, args []string, cio *cmdIO, fn func(context.Context, *cmdIO, []string) error) int {
	fs.SetOutput(io.Discard) // errors are reported below, in one style
	fs.Usage = func() {}
	onceOnly(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeCommandHelp(cio.stdout, fs, usage, long)
			return exitOK
		}
		return usageFail(cio.stderr, name, err, "Run 'iamretry "+name+" -h' for usage.")
	}
	err := fn(ctx, cio, fs.Args())
	var ue *usageError
	var ec exitCodeError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ec):
		return int(ec)
	case errors.As(err, &ue):
		hint := ue.hint
		if hint == "" {
			hint = "Run 'iamretry " + name + " -h' for usage."
		}
		return usageFail(cio.stderr, name, errors.New(ue.msg), hint)
	case errors.Is(err, errSilentFailure):
		return exitFailure
	default:
		fmt.Fprintf(cio.stderr, "iamretry %s: %v\n", name, err)
		return exitFailure
	}
}

// exitCodeError carries the exit code of a subcommand that has already
// reported what went wrong.
type exitCodeError int

func (e exitCodeError) Error() string { return "exit " + strconv.Itoa(int(e)) }

// errSilentFailure makes a command exit 1 without a message: it has said
// what went wrong already.
var errSilentFailure = errors.New("failed")

func usageFail(w io.Writer, name string, err error, hint string) int {
	prefix := "iamretry"
	if name != "" {
		prefix += " " + name
	}
	fmt.Fprintf(w, "%s: %v\n%s\n", prefix, err, hint)
	return exitUsage
}

func writeHelp(w io.Writer) {
	var b strings.Builder
	b.WriteString(`iamretry retries Google Cloud IAM calls the way Google's IAM guidance
("Retry failed requests") says, and shows why.

Usage:
  iamretry COMMAND [flags]

Commands:
`)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	fmt.Fprintf(tw, "  help\tthis text; \"iamretry help COMMAND\" for one command\n")
	fmt.Fprintf(tw, "  --version\tthe version of this binary\n")
	tw.Flush() // into a strings.Builder: cannot fail
	b.WriteString(`
Run "iamretry COMMAND -h" for a command's flags.
Exit codes: 0 success, 1 failure, 2 usage error; 3 changes pending (apply
--dry-run --detailed-exitcode).
`)
	io.WriteString(w, b.String())
}

func writeCommandHelp(w io.Writer, fs *flag.FlagSet, usage, long string) {
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n", usage, strings.TrimSpace(long))
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if !strings.HasPrefix(f.Usage, hiddenUsage) {
			n++
		}
	})
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		writeFlags(w, fs)
	}
}

// writeFlags lists fs's flags the way the usage lines write them, with two
// dashes ("--seed N"), each followed by what it does and its default.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, hiddenUsage) {
			return // a flag for tests (see hiddenUsage)
		}
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + strings.ToUpper(arg)
		}
		fmt.Fprintf(w, "%s\n      %s", line, usage)
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			fmt.Fprintf(w, " (default %s)", def)
		}
		fmt.Fprintln(w)
	})
}

// versionLine is what --version prints: the module version the binary was
// built from ("(devel)" for a build from a clone) and the Go release.
func versionLine() string {
	v, goVersion := "(devel)", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v = bi.Main.Version
		}
		goVersion = bi.GoVersion
	}
	return "iamretry " + v + " (" + goVersion + ")"
}
