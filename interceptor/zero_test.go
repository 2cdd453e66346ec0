package interceptor_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/api/option"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/interceptor"
)

// A Retrier not built by New (a zero value, a nil pointer) panics at
// once, at the method the user called, with a message that says to use
// interceptor.New; before, a zero Retrier's interceptor and RoundTripper
// worked until the first failure and then panicked deep inside (a nil
// classifier), and Do panicked on its first failure the same way.
func TestZeroRetrierPanicsAtOnce(t *testing.T) {
	t.Parallel()
	unavailable := func(context.Context) error { return status.Error(grpccodes.Unavailable, "down") }
	var zero interceptor.Retrier
	var nilR *interceptor.Retrier
	for rname, r := range map[string]*interceptor.Retrier{"&Retrier{}": {}, "var Retrier": &zero, "nil *Retrier": nilR} {
		uses := map[string]func(){
			"UnaryClientInterceptor": func() { r.UnaryClientInterceptor() },
			"RoundTripper":           func() { r.RoundTripper(nil) },
			"Do":                     func() { _ = r.Do(context.Background(), "op", unavailable) },
			"Do success":             func() { _ = r.Do(context.Background(), "op", func(context.Context) error { return nil }) },
			"Backoff":                func() { r.Backoff() },
		}
		for uname, use := range uses {
			p := mustPanic(t, use)
			msg := fmt.Sprint(p)
			if !strings.Contains(msg, "interceptor.New") || !strings.Contains(msg, strings.Fields(uname)[0]) {
				t.Errorf("%s.%s: panicked with %q, want a message naming the method and interceptor.New", rname, uname, msg)
			}
		}
	}
	// WaitVisible refuses a zero Retrier with an error, as it refuses a nil one.
	reads := 0
	_, err := interceptor.WaitVisible(context.Background(), &zero, "read", func(context.Context) (int, error) { reads++; return 0, nil })
	if err == nil || !strings.Contains(err.Error(), "interceptor.New") || reads != 0 {
		t.Errorf("WaitVisible on a zero Retrier: err %v after %d reads, want an error naming interceptor.New before any read", err, reads)
	}
	// A Retrier from New works: the check refuses only the zero value.
	r, err := interceptor.New()
	if err != nil {
		t.Fatal(err)
	}
	_ = r.UnaryClientInterceptor()
	_ = r.RoundTripper(http.DefaultTransport)
	if err := r.Do(context.Background(), "op", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
}

// TestNotBuiltSaysOneThing: every face that meets a Retrier not built by
// New says so in the same words: a method's panic, WaitVisible's and
// NewClient's errors.
func TestNotBuiltSaysOneThing(t *testing.T) {
	t.Parallel()
	const want = "the Retrier was not built by interceptor.New (a zero or nil Retrier has no schedule, clock, classifier or budget): build it with interceptor.New"
	zero := &interceptor.Retrier{}
	said := map[string]string{"Do's panic": fmt.Sprint(mustPanic(t, func() { _ = zero.Do(context.Background(), "op", nil) }))}
	_, err := interceptor.WaitVisible(context.Background(), zero, "read", func(context.Context) (int, error) { return 0, nil })
	said["WaitVisible"] = fmt.Sprint(err)
	_, err = interceptor.NewClient(context.Background(), zero, func(context.Context, ...option.ClientOption) (*struct{}, error) { return &struct{}{}, nil })
	said["NewClient"] = fmt.Sprint(err)
	for face, msg := range said {
		if !strings.Contains(msg, want) {
			t.Errorf("%s said %q; want it to say %q", face, msg, want)
		}
	}
}
