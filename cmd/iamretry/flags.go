package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"cloud.google.com/go/iam/apiv1/iampb"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor/policy"
)

// usageError is a mistake in the command line: it is reported on stderr with
// exit code 2 and a line that says what to do.
type usageError struct {
	msg  string
	hint string // "" for "Run 'iamretry CMD -h' for usage."
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// codeName returns the google.rpc.Code name of c ("UNAVAILABLE"), the
// spelling of the JSON error bodies and of the instruments' grpc.status.
func codeName(c codes.Code) string {
	if n, ok := rpccode.Code_name[int32(c)]; ok {
		return n
	}
	return c.String()
}

// codeByName parses one gRPC code name, case-insensitively ("unavailable",
// "UNAVAILABLE"). Numbers are refused: names say what is meant.
func codeByName(name string) (codes.Code, error) {
	n := strings.ToUpper(strings.TrimSpace(name))
	if c, ok := rpccode.Code_value[n]; ok {
		return codes.Code(c), nil
	}
	var failures []string // the names, in code order, but OK
	for c := int32(1); c < int32(len(rpccode.Code_name)); c++ {
		failures = append(failures, rpccode.Code_name[c])
	}
	return 0, fmt.Errorf("unknown gRPC code %q; use one of %s", name, strings.Join(failures, ", "))
}

// parseFailureCodes parses a comma-separated list of gRPC code names for
// injected failures. OK is refused: it is not a failure.
func parseFailureCodes(flagName, list string) ([]codes.Code, error) {
	var out []codes.Code
	for _, f := range strings.Split(list, ",") {
		if strings.TrimSpace(f) == "" {
			return nil, usagef("--%s %q: empty code name; give a comma-separated list such as UNAVAILABLE,INTERNAL", flagName, list)
		}
		c, err := codeByName(f)
		if err != nil {
			return nil, usagef("--%s: %v", flagName, err)
		}
		if c == codes.OK {
			return nil, usagef("--%s: OK is not a failure; use a failing code such as UNAVAILABLE", flagName)
		}
		out = append(out, c)
	}
	return out, nil
}

// checkRate validates a probability flag.
func checkRate(flagName string, v float64) error {
	if math.IsNaN(v) || v < 0 || v > 1 {
		return usagef("--%s %v: a rate is a probability between 0 and 1 (0.2 fails one call in five)", flagName, v)
	}
	return nil
}

// checkNonNegative validates a duration flag that may be 0.
func checkNonNegative(flagName string, d time.Duration) error {
	if d < 0 {
		return usagef("--%s %v: must not be negative", flagName, d)
	}
	return nil
}

// checkResource validates a relative IAM resource name such as
// "projects/my-project" or "projects/p/serviceAccounts/sa@p.iam.gserviceaccount.com":
// collection/id pairs separated by slashes.
func checkResource(r string) error {
	const want = "a resource is a name like projects/PROJECT_ID, folders/FOLDER_ID, organizations/ORG_ID or projects/PROJECT_ID/serviceAccounts/EMAIL"
	if r == "" {
		return usagef("--resource is required; %s", want)
	}
	if strings.HasPrefix(r, "//") {
		_, rel, _ := strings.Cut(strings.TrimPrefix(r, "//"), "/")
		return usagef("--resource %q: give the relative name without the service, e.g. %q", r, rel)
	}
	if strings.ContainsAny(r, " \t\r\n") {
		return usagef("--resource %q: must not contain white space; %s", r, want)
	}
	parts := strings.Split(r, "/")
	for _, p := range parts {
		if p == "" {
			return usagef("--resource %q: empty path segment; %s", r, want)
		}
	}
	if len(parts)%2 != 0 {
		return usagef("--resource %q: expected collection/ID pairs; %s", r, want)
	}
	for i := 0; i < len(parts); i += 2 {
		c := parts[i]
		if c[0] < 'a' || c[0] > 'z' {
			return usagef("--resource %q: collection %q must start with a lower-case letter; %s", r, c, want)
		}
		for _, ch := range c {
			if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9') {
				return usagef("--resource %q: collection %q must be letters and digits; %s", r, c, want)
			}
		}
	}
	return nil
}

// checkRole validates a role name as IAM spells it.
func checkRole(r string) error {
	const want = "a role is roles/NAME, projects/PROJECT_ID/roles/NAME or organizations/ORG_ID/roles/NAME"
	if r == "" {
		return usagef("--role is required; %s", want)
	}
	parts := strings.Split(r, "/")
	for _, p := range parts {
		if p == "" || strings.ContainsAny(p, " \t\r\n") {
			return usagef("--role %q: %s", r, want)
		}
	}
	switch {
	case len(parts) == 2 && parts[0] == "roles":
		return nil
	case len(parts) == 4 && (parts[0] == "projects" || parts[0] == "organizations") && parts[2] == "roles":
		return nil
	}
	return usagef("--role %q: %s", r, want)
}

// emailKinds are the prefixes of IAM principals whose value is an email.
var emailKinds = []string{"user:", "serviceAccount:", "group:"}

// checkMember validates a principal as IAM spells it: by the library's one
// table of member forms (policy.RemoveMember refuses exactly what the
// Updater's mutations refuse), with the CLI's own wording where it has one.
func checkMember(m string) error {
	if m == "" {
		return describeMember(m)
	}
	_, err := policy.RemoveMember(m)(&iampb.Policy{})
	if err == nil {
		return nil
	}
	if e := describeMember(m); e != nil {
		return e
	}
	return usagef("--member %q: %s", m, strings.TrimPrefix(status.Convert(err).Message(), "iamretry/policy: "))
}

// memberForms points to the forms of a member: the library's table
// (interceptor/policy/members.go) follows IAM's own list, and its errors,
// which the CLI shows when it has no words of its own, name every form.
const memberForms = "the forms of a member: https://cloud.google.com/iam/docs/principal-identifiers"

// describeMember explains why a member the library refuses is malformed,
// in the CLI's words; nil when it has no words for it.
func describeMember(m string) error {
	const want = memberForms
	bad := func(why string) error { return usagef("--member %q: %s; %s", m, why, want) }
	switch {
	case m == "":
		return usagef("--member is required; %s", want)
	case m == "allUsers" || m == "allAuthenticatedUsers":
		return nil
	case strings.ContainsAny(m, " \t\r\n"):
		return bad("must not contain white space")
	}
	if rest, ok := strings.CutPrefix(m, "deleted:"); ok {
		for _, k := range emailKinds {
			if v, ok := strings.CutPrefix(rest, k); ok {
				email, uid, found := strings.Cut(v, "?uid=")
				if !found || uid == "" || !validEmail(email) {
					return bad("a deleted principal is deleted:" + k + "EMAIL?uid=UNIQUE_ID")
				}
				return nil
			}
		}
		return bad("a deleted principal starts with deleted:user:, deleted:serviceAccount: or deleted:group:")
	}
	for _, k := range emailKinds {
		if v, ok := strings.CutPrefix(m, k); ok {
			if !validEmail(v) {
				return bad("the value after " + k + " must be an email address")
			}
			return nil
		}
	}
	if v, ok := strings.CutPrefix(m, "domain:"); ok {
		if v == "" || strings.Contains(v, "@") || !strings.Contains(v, ".") {
			return bad("the value after domain: must be a domain name such as example.com")
		}
		return nil
	}
	for _, k := range []string{"principal:", "principalSet:"} {
		if v, ok := strings.CutPrefix(m, k); ok {
			if !strings.HasPrefix(v, "//") || len(v) == 2 {
				return bad("the value after " + k + " must be an identifier starting with //")
			}
			return nil
		}
	}
	if i := strings.IndexByte(m, ':'); i > 0 {
		return bad(fmt.Sprintf("unknown principal kind %q", m[:i+1]))
	}
	return bad("no principal kind prefix")
}

func validEmail(v string) bool {
	i := strings.IndexByte(v, '@')
	return i > 0 && i < len(v)-1 && strings.Count(v, "@") == 1
}

// fmtDur formats a duration in seconds, with up to three decimals and no
// trailing zeros: "1s", "1.25s", "0.05s".
func fmtDur(d time.Duration) string {
	s := fmt.Sprintf("%.3f", d.Seconds())
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "s"
}

// onceOnly makes every flag of fs refuse a second value: the flag package
// keeps the last one without a word, so "add-binding --member a --member b"
// would grant b alone. A flag given twice is a usage error naming it.
func onceOnly(fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		if _, ok := f.Value.(*listFlag); ok {
			return // given once per value, by design
		}
		o := &onceValue{Value: f.Value}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = onceBool{o}
			return
		}
		f.Value = o
	})
}

type onceValue struct {
	flag.Value
	set bool
}

func (v *onceValue) Set(s string) error {
	if v.set {
		return errors.New("given more than once; give each flag once")
	}
	v.set = true
	return v.Value.Set(s)
}

// onceBool keeps a boolean flag boolean (--insecure without a value).
type onceBool struct{ *onceValue }

func (onceBool) IsBoolFlag() bool { return true }

// listFlag is a flag given once per value (--resource A --resource B).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	*l = append(*l, s)
	return nil
}
