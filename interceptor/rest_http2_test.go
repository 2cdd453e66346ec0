package interceptor_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/interceptor"
	"github.com/iamretry/iamretry/internal/vclock"
)

// TestRESTRealHTTP2StreamResetRetried (issue 32 item 2): a real HTTP/2
// stream reset (the server's handler aborted: RST_STREAM INTERNAL_ERROR)
// through net/http's own HTTP/2 transport is retried as UNAVAILABLE for a
// safe request. net/http's stream error (a type of its own) converts to
// golang.org/x/net/http2.StreamError with errors.As: that, not the type's
// name, is how the RoundTripper knows it.
func TestRESTRealHTTP2StreamResetRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 { // the raw call's, then the first attempt's
			panic(http.ErrAbortHandler) // RST_STREAM
		}
		_, _ = io.WriteString(w, `{}`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	// The error net/http's HTTP/2 transport gives, seen without the Retrier.
	_, raw := srv.Client().Get(srv.URL + "/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
	var xse http2.StreamError
	if !errors.As(raw, &xse) {
		t.Fatalf("the reset gave %v (%T), not an error that converts to x/net's http2.StreamError", raw, errors.Unwrap(raw))
	}

	o := newObserved(t)
	o.clock = vclock.New()
	hc := &http.Client{Transport: o.r.RoundTripper(srv.Client().Transport)}
	resp, err := hc.Get(srv.URL + "/v1/projects/p/serviceAccounts/a@p.iam.gserviceaccount.com")
	if err != nil {
		t.Fatalf("after a stream reset: %v", err)
	}
	resp.Body.Close()
	if n := calls.Load(); n != 3 {
		t.Fatalf("%d server calls, want 3 (the raw one, the reset attempt, its retry)", n)
	}
	if a := o.first(); a.Reason != interceptor.Retry || a.Class != codes.Transient {
		t.Fatalf("the reset attempt: reason %v class %v, want Retry Transient", a.Reason, a.Class)
	}
}
