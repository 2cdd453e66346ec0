package interceptor

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	gax "github.com/googleapis/gax-go/v2"
	"google.golang.org/api/option"
)

// TestGAXTimeoutReadThroughInvoke (issue 32 item 2): a method's gax timeout
// is read through gax.Invoke (the deadline it gives its call), not gax's
// unexported fields: exact for whole seconds, milliseconds and
// microseconds, on the wall clock and in a synctest bubble; the last
// WithTimeout wins; none (or 0) is 0.
func TestGAXTimeoutReadThroughInvoke(t *testing.T) {
	cases := []struct {
		opts []gax.CallOption
		want time.Duration
	}{
		{nil, 0},
		{[]gax.CallOption{gax.WithRetry(nil)}, 0},
		{[]gax.CallOption{gax.WithTimeout(60 * time.Second)}, 60 * time.Second},
		{[]gax.CallOption{gax.WithTimeout(50 * time.Millisecond)}, 50 * time.Millisecond},
		{[]gax.CallOption{gax.WithTimeout(1500 * time.Microsecond)}, 1500 * time.Microsecond},
		{[]gax.CallOption{gax.WithTimeout(2 * time.Second), nil, gax.WithTimeout(15 * time.Second)}, 15 * time.Second},
		{[]gax.CallOption{gax.WithTimeout(2 * time.Second), gax.WithTimeout(0)}, 0},
	}
	for range 50 {
		for _, c := range cases {
			if got := gaxTimeout(c.opts); got != c.want {
				t.Fatalf("gaxTimeout(%d options) = %v, want %v", len(c.opts), got, c.want)
			}
		}
	}
	synctest.Test(t, func(t *testing.T) {
		for _, c := range cases {
			if got := gaxTimeout(c.opts); got != c.want {
				t.Fatalf("in a bubble: gaxTimeout(%d options) = %v, want %v", len(c.opts), got, c.want)
			}
		}
	})
}

// TestGivenHTTPClientThroughTransport (issue 32 item 2): the
// option.WithHTTPClient client is learnt from
// google.golang.org/api/transport/http, not its private field: the last one
// given wins; none given, or a nil one last, is none.
func TestGivenHTTPClientThroughTransport(t *testing.T) {
	ctx := t.Context()
	a, b := &http.Client{}, &http.Client{}
	cases := []struct {
		opts []option.ClientOption
		want *http.Client
	}{
		{nil, nil},
		{[]option.ClientOption{option.WithEndpoint("http://localhost:1/"), option.WithQuotaProject("q")}, nil},
		{[]option.ClientOption{option.WithHTTPClient(a)}, a},
		{[]option.ClientOption{option.WithHTTPClient(a), option.WithQuotaProject("q"), option.WithHTTPClient(b)}, b},
		{[]option.ClientOption{option.WithHTTPClient(a), option.WithHTTPClient(nil), option.WithoutAuthentication()}, nil},
	}
	for i, c := range cases {
		got, err := givenHTTPClient(ctx, c.opts)
		if err != nil || got != c.want {
			t.Errorf("case %d: got %p, %v; want %p", i, got, err, c.want)
		}
	}
}
