package interceptor_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/iamretry/iamretry/interceptor"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

func withRetryInfo(c grpccodes.Code, d time.Duration) error {
	st, err := status.New(c, "slow down").WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func TestRetryInfoIsAFloor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &script{errs: []error{withRetryInfo(grpccodes.Unavailable, 5*time.Second), withRetryInfo(grpccodes.Unavailable, 100*time.Millisecond)}}
	if err := h.call(context.Background(), s, getPolicy, nil); err != nil {
		t.Fatal(err)
	}
	// 5 s replaces the 1.5 s backoff; 0.1 s is below the 2.5 s backoff.
	if got, want := h.clock.Sleeps(), secs(5, 2.5); !reflect.DeepEqual(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}

func TestRetryInfoPastDeadlineGivesUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t, interceptor.WithDeadline(30*time.Second))
	s := &script{errs: []error{withRetryInfo(grpccodes.Unavailable, time.Minute)}}
	err := h.call(context.Background(), s, getPolicy, nil)
	if s.calls != 1 || err != s.errs[0] || len(h.clock.Sleeps()) != 0 || h.attempts[0].Reason != interceptor.DeadlineReached {
		t.Fatalf("calls %d err %v sleeps %v attempts %+v", s.calls, err, h.clock.Sleeps(), h.attempts)
	}
}

// trailerScript fails each attempt with its error and trailer value.
type trailerScript struct {
	vals  []string // "" for no trailer
	calls int
}

func (s *trailerScript) invoke(_ context.Context, _ string, _, _ any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	i := s.calls
	s.calls++
	if i >= len(s.vals) {
		return nil
	}
	for _, o := range opts {
		if tr, ok := o.(grpc.TrailerCallOption); ok && s.vals[i] != "" {
			*tr.TrailerAddr = metadata.Pairs(interceptor.PushbackTrailer, s.vals[i])
		}
	}
	return status.Error(grpccodes.Unavailable, "pushback")
}

func TestTrailerPushback(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		vals   []string
		calls  int
		sleeps []time.Duration
		reason interceptor.Reason
	}{
		{"exact waits", []string{"250", "0", ""}, 4, []time.Duration{250 * time.Millisecond, 0, 4500 * time.Millisecond}, interceptor.Retry},
		{"negative stops", []string{"-1"}, 1, nil, interceptor.ServerPushback},
		{"malformed stops", []string{"soon"}, 1, nil, interceptor.ServerPushback},
		{"past the deadline gives up", []string{"120000"}, 1, nil, interceptor.DeadlineReached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, interceptor.WithPushback())
			s := &trailerScript{vals: tc.vals}
			_ = h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, s.invoke)
			if s.calls != tc.calls {
				t.Fatalf("calls %d, want %d", s.calls, tc.calls)
			}
			var sleeps []time.Duration
			for _, a := range h.attempts {
				if a.Retrying {
					sleeps = append(sleeps, a.Wait)
				}
			}
			if !reflect.DeepEqual(sleeps, tc.sleeps) {
				t.Fatalf("waits %v, want %v", sleeps, tc.sleeps)
			}
			if got := h.attempts[0].Reason; got != tc.reason {
				t.Fatalf("first reason %v, want %v", got, tc.reason)
			}
		})
	}
}

func TestTrailerIgnoredWithoutPushback(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	s := &trailerScript{vals: []string{"-1"}}
	_ = h.r.UnaryClientInterceptor()(context.Background(), getPolicy, nil, nil, nil, s.invoke)
	if s.calls != 2 {
		t.Fatalf("calls %d: the trailer must only count with WithPushback", s.calls)
	}
}
