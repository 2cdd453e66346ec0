package interceptor

import (
	"strconv"
	"time"

	grpccodes "google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/internal/googleerr"
)

// PushbackTrailer is gRFC A6's trailer in which a server gives the wait before
// a retry in milliseconds; a negative or malformed value means "do not retry".
const PushbackTrailer = "grpc-retry-pushback-ms"

// WithPushback makes the gRPC interceptor honour PushbackTrailer: a value >= 0
// replaces the backoff's wait (never below a RetryInfo delay, never past a
// deadline), another ends the call (Reason ServerPushback). It is opt-in: it
// costs allocations on every call. A RetryInfo is always honoured, at no cost.
func WithPushback() Option {
	return func(c *config) { c.pushback = true }
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

// isQuota reports whether err is a rejection for quota (RESOURCE_EXHAUSTED,
// HTTP 429): a definite rejection, since the server did not act, so, as an
// opted-in NOT_FOUND, it may be retried even when the request is unsafe to
// send again, once its classifier calls it Transient.
func isQuota(err error) bool { return codes.CodeOf(err) == grpccodes.ResourceExhausted }

// QuotaWait is the shortest wait after a quota rejection (429) without a
// server delay (Google: retry quota errors at least 30 s apart): after the
// call's k-th (from 0) it is QuotaWait·2^k plus up to a tenth more, not
// capped by maximum_backoff; one that would end past a deadline ends the call.
const QuotaWait = 30 * time.Second

// quotaDelay is the wait after the call's quota rejection k (k from 0)
// without a server delay, for the uniform draw r.
func quotaDelay(k int, r float64) time.Duration {
	d := QuotaWait << min(max(k, 0), 10) // 8.5 h at most: any deadline ends first
	return d + saturate(unit(r)*float64(d/10))
}

// serverDelay reports whether a quota rejection err carries the server's
// word on the wait: a RetryInfo (delay 0 too), over REST a Retry-After, or
// the A6 pushback trailer (j.face). Its delay is then a floor under the
// Backoff's wait; without it, the wait is quotaDelay's.
func serverDelay(j *job, err error) bool {
	if _, ok := googleerr.RetryDelay(err); ok {
		return true
	}
	if googleerr.JSONHasRetryInfo(googleerr.RESTDetails(err)) || googleerr.StatusHasRetryInfo(googleerr.StatusOf(err)) {
		return true // a RetryInfo of delay 0, over REST or gRPC
	}
	if _, ok := googleerr.ErrRetryAfter(err, time.Time{}); ok {
		return true
	}
	if j.face != nil {
		_, state := j.face.serverWait()
		return state != pushbackNone
	}
	return false
}
