package deny

import (
	"context"

	"github.com/iamretry/iamretry/interceptor/internal/updaters"
)

// wrapErr names the policy in err (the one shape of the Updaters'
// errors): errors.Is and errors.As see the cause, status.Code its code
// over REST too (where gax guesses a code from the HTTP status: a 400
// FAILED_PRECONDITION would read INVALID_ARGUMENT), and, when ctx ended
// during a call, errors.Is finds ctx's error on either transport.
func wrapErr(ctx context.Context, name string, err error) error {
	return updaters.Wrap(ctx, "iamretry/deny", name, err)
}
