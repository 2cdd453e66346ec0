// Package enginehook carries the retry engine's private entry points from
// package interceptor to package interceptor/policy, so the policy Updater
// runs on the same engine as the interceptor without a public API whose only
// user is this module. It is grpc-go's pattern (google.golang.org/grpc/internal):
// interceptor sets the variables in its init, policy (which imports
// interceptor, so the init has run) type-asserts and calls them. The
// variables are typed any because this package cannot name interceptor's
// types without an import cycle.
package enginehook

var (
	// NewUpdaterRetrier is a
	//	func(opts ...interceptor.Option) (*interceptor.Retrier, error)
	// that builds the Retrier of a policy Updater: interceptor.New, refusing
	// (with an error naming each) the options that do not apply to an
	// Updater.
	NewUpdaterRetrier any

	// RunUpdate is a
	//	func(r *interceptor.Retrier, ctx context.Context, method, resource string,
	//		judge func(error) (codes.Class, bool), f func(context.Context) error) error
	// that runs one read-modify-write f on the engine: it marks ctx as owned
	// (an interceptor beneath passes f's calls through), reruns f after a
	// Transient failure, a Conflict, or (WithRetryNotFound) a Propagation
	// one, and reports Attempts with Method method and Resource resource.
	// judge, when not nil, classifies an error before the Retrier's
	// classifier (ok false leaves it to the classifier): the Updater's
	// grant to a member not visible yet is Propagation without its code
	// being rewritten, so observers and metrics see the server's code.
	RunUpdate any

	// CountWrite is a
	//	func(r *interceptor.Retrier, ctx context.Context)
	// that counts one SetIamPolicy call of an Updater built on r
	// (iamretry.policy.update.writes, when r has a MeterProvider).
	CountWrite any

	// WithCallers is a
	//	func(ctx context.Context, callers func() []context.Context) context.Context
	// that marks the context of a coalesced batch: the engine adds its span
	// events to the span of each context callers returns (the callers
	// still waiting on the batch) instead of ctx's.
	WithCallers any

	// RetriesNotFound is a
	//	func(r *interceptor.Retrier) bool
	// that reports whether r retries NOT_FOUND (WithRetryNotFound): an
	// Updater's batch split then tries a grant to a member IAM cannot see
	// yet after the other changes, so that only its caller waits.
	RetriesNotFound any
)
