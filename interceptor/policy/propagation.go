package policy

import (
	"errors"
	"fmt"
	"strings"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
)

// A grant to a member that IAM cannot see yet (a service account created
// moments ago) is refused by SetIamPolicy with INVALID_ARGUMENT "Service
// account EMAIL does not exist.": IAM is eventually consistent, and the
// refusal changed nothing. The Updater treats it as the 404 of a read: with
// the Retrier's 404 opt-in (interceptor.WithRetryNotFound, or
// RetryNotFoundContext on the Update's context) it reruns the
// read-modify-write within its deadline; without, it returns the server's
// error at once, naming the option. In a
// coalesced batch it is first split (splittable: INVALID_ARGUMENT), so only
// the caller naming the new member waits.

// missingMember reports whether err is SetIamPolicy's refusal of a member
// that does not exist (yet).
func missingMember(err error) bool {
	return codes.CodeOf(err) == grpccodes.InvalidArgument && strings.Contains(err.Error(), "does not exist")
}

// notVisibleError is that refusal as the read-modify-write returns it to
// the engine, with the server's code (INVALID_ARGUMENT): for a change tried
// alone judgeNotVisible makes it Propagation (retried only with
// WithRetryNotFound); in a batch of several it is left to the classifier
// (Permanent), so the batch is split first.
type notVisibleError struct {
	err   error // the server's refusal
	alone bool  // the read-modify-write ran one caller's change
}

func (e *notVisibleError) Error() string { return e.err.Error() }
func (e *notVisibleError) Unwrap() error { return e.err }

func (e *notVisibleError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.err.Error())
}

// judgeNotVisible is the Classify of the Updater's Transact: a grant to a
// member not visible yet, in a change tried alone, is Propagation (retried
// with the 404 opt-in, with the server's code for observers and metrics);
// every other error goes to the classifier.
func judgeNotVisible(err error) (codes.Class, bool) {
	var nv *notVisibleError
	if errors.As(err, &nv) && err == error(nv) && nv.alone {
		return codes.Propagation, true
	}
	return codes.Permanent, false
}

// notVisible reports whether err, as the engine returned it, is that
// refusal.
func notVisible(err error) bool {
	var nv *notVisibleError
	return errors.As(err, &nv) && err == error(nv)
}

// memberNotVisibleError is what the caller gets when the refusal ends the
// Update: the server's error and code (INVALID_ARGUMENT), with a message
// that names the opt-in.
type memberNotVisibleError struct{ err error }

func (e *memberNotVisibleError) Error() string {
	return fmt.Sprintf("%v (a member created moments ago may not be visible to IAM yet: build the Retrier given to NewUpdater with interceptor.WithRetryNotFound(), or pass the Update a context from interceptor.RetryNotFoundContext, to wait for it within the retry deadline)", e.err)
}

func (e *memberNotVisibleError) Unwrap() error { return e.err }

func (e *memberNotVisibleError) GRPCStatus() *status.Status {
	return status.New(grpccodes.InvalidArgument, e.Error())
}

// forCaller turns the engine's last error back into the server's refusal
// when it is a notVisibleError; other errors pass unchanged.
func forCaller(err error) error {
	var nv *notVisibleError
	if errors.As(err, &nv) && err == error(nv) {
		return &memberNotVisibleError{err: nv.err}
	}
	return err
}
