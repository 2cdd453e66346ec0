package policy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc/codes"

	iamcodes "github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/iamtest"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/interceptor/policy"
)

// TestGoexitInLoggerOrClassifier runs its checks in a child
// process (a hang or a dead batch leader there cannot take this test binary
// down): runtime.Goexit (a t.FailNow) in a logger or a classifier handed
// to NewUpdater ends the goroutine of the caller whose read-modify-write
// ran it (it runs on the caller's goroutine, as any call the caller makes
// itself), neither hangs it nor wedges the resource: a later Update of the
// resource works.
func TestGoexitInLoggerOrClassifier(t *testing.T) {
	t.Parallel()
	if os.Getenv("IAMRETRY_GOEXIT_HOOK_CHILD") == "1" {
		goexitHookChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoexitInLoggerOrClassifier$", "-test.v", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), "IAMRETRY_GOEXIT_HOOK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "goexit hook child: ok") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func goexitHookChild(t *testing.T) {
	for _, source := range []string{"logger", "classifier"} {
		e := newEnv(t)
		var armed atomic.Bool
		var opt interceptor.Option
		switch source {
		case "logger":
			opt = interceptor.WithLogger(logging.LoggerFunc(func(context.Context, logging.Level, string, ...any) {
				if armed.CompareAndSwap(true, false) {
					goexit()
				}
			}))
		case "classifier":
			opt = interceptor.WithClassifier(func(_ string, err error) iamcodes.Class {
				if armed.CompareAndSwap(true, false) {
					goexit()
				}
				return iamcodes.OfError(err)
			})
		}
		u, _ := updater(t, e.client, opt)
		armed.Store(true)
		e.srv.FailNext(iamtest.MethodGetIamPolicy, 1, codes.Unavailable)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r := <-caller(u, ctx, policy.AddBinding("roles/viewer", "user:a@example.com"))
		if r != "goexit" {
			t.Fatalf("%s: the caller got %v, want its goroutine ended by runtime.Goexit", source, r)
		}
		if _, err := u.Update(ctx, res, policy.AddBinding("roles/viewer", "user:later@example.com")); err != nil {
			t.Fatalf("%s: a later update: %v", source, err)
		}
		if m := members(e.srv.Policy(res), ""); m["user:later@example.com"] != 1 {
			t.Fatalf("%s: stored %v", source, m)
		}
		cancel()
	}
	fmt.Println("goexit hook child: ok")
}
