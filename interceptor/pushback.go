package interceptor

import (
	"errors"
	"strconv"
	"time"

	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/api/googleapi"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/iamretry/iamretry/codes"
	grpccodes "google.golang.org/grpc/codes"
)

// PushbackTrailer is the trailer of gRPC's retry design (gRFC A6) in which
// a server tells a client how long to wait before retrying, in milliseconds;
// a negative or malformed value means "do not retry".
const PushbackTrailer = "grpc-retry-pushback-ms"

// WithPushback makes the interceptor honour the server's
// grpc-retry-pushback-ms trailer (gRFC A6): a value >= 0 replaces the
// backoff's wait before the next attempt, though never below a RetryInfo
// delay the same answer carries (the wait is the larger of the two), and
// never past a deadline (a wait that does not fit ends the call at once); a
// negative or malformed one ends the call (Reason ServerPushback), whatever
// RetryInfo says. The trailer is read by the interceptor only: Do,
// WaitVisible, Transact and the policy Updater honour RetryInfo (below),
// not the trailer. Reading trailers costs, on every call including
// the ones that succeed, a copy of the call options with one more option and
// the trailer map: a few allocations per call. It is therefore opt-in.
//
// google.rpc.RetryInfo in an error's details is always honoured, at no cost
// on the success path: the wait is at least its retry_delay.
func WithPushback() Option {
	return func(c *config) { c.pushback = true }
}

// retryInfoDelay returns the retry_delay of a google.rpc.RetryInfo detail
// of err, if it carries one: in a gRPC status's details, or in a REST
// error's (a *googleapi.Error's JSON details, a REST *apierror.APIError's
// parsed ones), so Retrier.Do over a REST client honours it too.
func retryInfoDelay(err error) (time.Duration, bool) {
	if ae, ok := err.(*apierror.APIError); ok {
		return positive(ae.Details().RetryInfo.GetRetryDelay().AsDuration())
	}
	if st := statusOf(err); st != nil {
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				return positive(ri.GetRetryDelay().AsDuration())
			}
		}
		if _, plain := err.(grpcStatuser); plain {
			return 0, false // a gRPC status error as gRPC returns it: no REST error inside
		}
	}
	return restRetryInfoDelay(err)
}

// restRetryInfoDelay finds RetryInfo in the first REST error of err's chain.
func restRetryInfoDelay(err error) (time.Duration, bool) {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return jsonRetryInfo(ge.Details)
	}
	var ae *apierror.APIError
	if errors.As(err, &ae) {
		return positive(ae.Details().RetryInfo.GetRetryDelay().AsDuration())
	}
	return 0, false
}

func positive(d time.Duration) (time.Duration, bool) { return d, d > 0 }

type grpcStatuser interface{ GRPCStatus() *status.Status }

// statusOf returns err's gRPC status, or nil. A status error as gRPC returns
// it costs no allocation; a wrapped one is found with errors.As.
func statusOf(err error) *status.Status {
	if se, ok := err.(grpcStatuser); ok {
		return se.GRPCStatus()
	}
	return statusAs(err)
}

func statusAs(err error) *status.Status {
	var se grpcStatuser
	if errors.As(err, &se) {
		return se.GRPCStatus()
	}
	return nil
}

type pushbackState uint8

const (
	pushbackNone  pushbackState = iota // no trailer: the backoff decides
	pushbackWait                       // wait exactly the duration given
	pushbackStop                       // do not retry
	pushbackFloor                      // wait at least the duration given (REST's Retry-After)
)

// trailerPushback reads the A6 pushback trailer.
func trailerPushback(md metadata.MD) (time.Duration, pushbackState) {
	v := md.Get(PushbackTrailer)
	if len(v) == 0 {
		return 0, pushbackNone
	}
	ms, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil || ms < 0 || len(v) > 1 {
		return 0, pushbackStop
	}
	if ms > int64(maxDuration/time.Millisecond) {
		return maxDuration, pushbackWait
	}
	return time.Duration(ms) * time.Millisecond, pushbackWait
}

// quotaRejection reports whether err is a definite rejection for quota
// (RESOURCE_EXHAUSTED, HTTP 429) that carries the server's delay: a
// RetryInfo, or over REST a Retry-After (j.serverWait). The server did not act,
// so, as an opted-in NOT_FOUND, it may be retried even when the request is
// unsafe to send again.
func quotaRejection(j *job, err error) bool {
	if codes.CodeOf(err) != grpccodes.ResourceExhausted {
		return false
	}
	if _, ok := retryInfoDelay(err); ok {
		return true
	}
	if hasJSONRetryInfo(restDetails(err)) {
		return true // a RetryInfo of delay 0
	}
	if _, ok := errRetryAfter(err, time.Time{}); ok {
		return true
	}
	if j.serverWait != nil {
		_, state := j.serverWait()
		return state == pushbackFloor
	}
	return false
}

// errRetryAfter reads the Retry-After header of the response the first
// *googleapi.Error in err's chain was built from (it keeps the headers), so
// that Retrier.Do and an Updater over a REST client wait at least that
// long, as the RoundTripper does. A date is counted from now.
func errRetryAfter(err error, now time.Time) (time.Duration, bool) {
	var ge *googleapi.Error
	if !errors.As(err, &ge) || ge.Header == nil {
		return 0, false
	}
	return retryAfter(ge.Header.Get("Retry-After"), now)
}

// restDetails returns the JSON details of the first *googleapi.Error in
// err's chain.
func restDetails(err error) []any {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Details
	}
	return nil
}
