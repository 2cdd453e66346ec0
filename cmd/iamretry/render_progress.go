package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
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

// shortMethod drops the package of a full gRPC method name:
// "/google.iam.v1.IAMPolicy/GetIamPolicy" -> "IAMPolicy.GetIamPolicy", and
// policy.UpdateMethod -> "policy.Update".
func shortMethod(m string) string {
	if m == policy.UpdateMethod {
		return "policy.Update"
	}
	if !strings.HasPrefix(m, "/") {
		return m
	}
	svc, name, ok := strings.Cut(m[1:], "/")
	if !ok {
		return m
	}
	if i := strings.LastIndexByte(svc, '.'); i >= 0 {
		svc = svc[i+1:]
	}
	return svc + "." + name
}
