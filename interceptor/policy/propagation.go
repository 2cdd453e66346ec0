package policy

import (
	"errors"
	"fmt"
	"strings"

	"cloud.google.com/go/iam/apiv1/iampb"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
)

// A grant to a member that IAM cannot see yet (a service account created
// moments ago) is refused by SetIamPolicy with INVALID_ARGUMENT "Service
// account EMAIL does not exist." ("User EMAIL ...", "Group EMAIL ..." for
// the other kinds): IAM is eventually consistent, and the refusal changed
// nothing. The Updater treats it as the 404 of a read: with the Retrier's
// 404 opt-in (interceptor.WithRetryNotFound, or RetryNotFoundContext on the
// Update's context) it reruns the read-modify-write within its deadline;
// without, it returns the server's error at once, naming the option.
//
// Only a refusal that names a member the write grants is taken for one:
// "Role (roles/editor) does not exist in the resource's hierarchy." names
// none, and is the server's final word. The changes that grant the member
// named are the ones that wait; the other changes of their batch go back to
// the head of the resource's queue and are written at once, and the
// waiting changes never hold the queue (coalesce.go).

// refusedMembers returns the words of SetIamPolicy's refusal when it says
// that something does not exist (INVALID_ARGUMENT "... does not exist"), in
// lower case and without the punctuation around them, or nil.
func refusedMembers(err error) map[string]bool {
	if codes.CodeOf(err) != grpccodes.InvalidArgument {
		return nil
	}
	msg := err.Error()
	if !strings.Contains(msg, "does not exist") {
		return nil
	}
	words := map[string]bool{}
	for _, w := range strings.Fields(msg) {
		w = strings.Trim(w, ".,;:()[]{}\"'`")
		if w != "" {
			words[strings.ToLower(w)] = true
		}
	}
	return words
}

// memberValue is what a refusal names a member by: its email address or
// domain (the part after "user:", "serviceAccount:", "group:", ...), or
// the whole member for the forms without a type prefix (principal://...).
func memberValue(member string) string {
	if i := strings.IndexByte(member, ':'); i > 0 && !strings.HasPrefix(member[i:], "://") {
		return member[i+1:]
	}
	return member
}

// names reports whether a refusal's words name member.
func names(words map[string]bool, member string) bool {
	v := memberValue(member)
	return v != "" && words[strings.ToLower(v)]
}

// granted returns the members of p that are not in had: the members a
// change grants anew.
func granted(p *iampb.Policy, had map[string]bool) []string {
	var out []string
	for _, b := range p.GetBindings() {
		for _, m := range b.GetMembers() {
			if !had[m] {
				out = append(out, m)
			}
		}
	}
	return out
}

// memberSet is the set of p's members, across bindings.
func memberSet(p *iampb.Policy) map[string]bool {
	s := map[string]bool{}
	for _, b := range p.GetBindings() {
		for _, m := range b.GetMembers() {
			s[m] = true
		}
	}
	return s
}

// notVisibleError is that refusal as the read-modify-write returns it to
// the engine, with the server's code (INVALID_ARGUMENT): judgeNotVisible
// makes it Propagation (retried only with the 404 opt-in).
type notVisibleError struct {
	err error // the server's refusal
}

func (e *notVisibleError) Error() string { return e.err.Error() }
func (e *notVisibleError) Unwrap() error { return e.err }

func (e *notVisibleError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.err.Error())
}

// judgeNotVisible is the Classify of the Updater's Transact: a grant to a
// member not visible yet is Propagation (retried with the 404 opt-in, with
// the server's code for observers and metrics); every other error goes to
// the classifier.
func judgeNotVisible(err error) (codes.Class, bool) {
	var nv *notVisibleError
	if errors.As(err, &nv) && err == error(nv) {
		return codes.Propagation, true
	}
	return codes.Permanent, false
}

// memberNotVisibleError is what the caller gets when the refusal ends the
// Update: the server's error and code (INVALID_ARGUMENT), with a message
// that says what the Updater did: it names the opt-in when the Update had
// none (waited false), else says the member stayed invisible while the
// Updater waited.
type memberNotVisibleError struct {
	err    error
	waited bool
}

func (e *memberNotVisibleError) Error() string {
	if e.waited {
		return fmt.Sprintf("%v (the member stayed invisible to IAM for the whole time the Updater waited for it, until the retry deadline, the attempt cap, the retry budget or the caller's deadline ran out; nothing of this update was written)", e.err)
	}
	return fmt.Sprintf("%v (a member created moments ago may not be visible to IAM yet: build the Retrier given to NewUpdater with interceptor.WithRetryNotFound(), or pass the Update a context from interceptor.RetryNotFoundContext, to wait for it within the retry deadline)", e.err)
}

func (e *memberNotVisibleError) Unwrap() error { return e.err }

func (e *memberNotVisibleError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.Error())
}

// forCaller turns the engine's last error back into the server's refusal
// when it is a notVisibleError (waited: the Update had the 404 opt-in);
// other errors pass unchanged.
func forCaller(err error, waited bool) error {
	var nv *notVisibleError
	if errors.As(err, &nv) && err == error(nv) {
		return &memberNotVisibleError{err: nv.err, waited: waited}
	}
	return err
}

// refusedForVisibility reports whether err is what forCaller made of that
// refusal.
func refusedForVisibility(err error) bool {
	var mv *memberNotVisibleError
	return errors.As(err, &mv)
}
