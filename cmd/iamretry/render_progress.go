package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/iamretry/iamretry/interceptor"
)

// progressRenderer tells a command's retries on stderr, one line an
// attempt, so a slow command says why it is slow:
//
//	iamretry: IAMPolicy.GetIamPolicy attempt 1: UNAVAILABLE (HTTP 503, Transient): retrying in 1.2s
//
// It draws attempt events only.
type progressRenderer struct{ w io.Writer }

func (r progressRenderer) render(ev event) error {
	e, ok := ev.(attemptEvent)
	if !ok {
		return nil
	}
	var err error
	if e.ok {
		_, err = fmt.Fprintf(r.w, "iamretry: %s attempt %d: succeeded\n", shortMethod(e.Method), e.Attempt)
		return err
	}
	what := "gave up: " + e.reason.String()
	switch {
	case e.reason == interceptor.Retry:
		what = "retrying in " + fmtDur(e.wait)
	case e.Decision == "to the caller: a conflict":
		what = "a concurrent change"
	}
	_, err = fmt.Fprintf(r.w, "iamretry: %s attempt %d: %s (HTTP %d, %s): %s\n",
		shortMethod(e.Method), e.Attempt, e.Code, e.HTTP, e.Class, what)
	return err
}

// shortMethod drops the package of a method name:
// "/google.iam.v1.IAMPolicy/GetIamPolicy" -> "IAMPolicy.GetIamPolicy", and
// policy.UpdateMethod -> "policy.Update". A REST attempt's "VERB /path"
// stays as it is.
func shortMethod(m string) string {
	if svc, name, ok := methodParts(m); ok {
		return svc + "." + name
	}
	return m
}

// methodParts splits a method name into its service, without the package,
// and the method: "/google.iam.v1.IAMPolicy/GetIamPolicy" (gRPC's form) and
// "google.iam.v1.IAMPolicy/GetIamPolicy" (the grpc.method attribute's) are
// "IAMPolicy" and "GetIamPolicy"; policy.UpdateMethod is "policy" and
// "Update". ok is false for a name of another shape: a REST attempt's
// "VERB /path", the attribute's "other". The CLI's shorter names of a
// method (shortMethod, callName, shortGRPCMethod) are all cut here.
func methodParts(m string) (svc, name string, ok bool) {
	svc, name, ok = strings.Cut(strings.TrimPrefix(m, "/"), "/")
	if !ok || svc == "" || name == "" || strings.ContainsAny(svc+name, "/ ") {
		return "", "", false
	}
	return svc[strings.LastIndexByte(svc, '.')+1:], name, true
}
