package interceptor

import (
	"context"
	"hash/fnv"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
)

// Stacked layers: a layer above the interceptor (gax retries left on, a
// retry loop of the caller's own) that retries a call the Retrier already
// retried and gave up on multiplies the attempts: each of its tries runs
// the Retrier's whole schedule. The detector notices it on the failure path
// only (a call that succeeds at once pays nothing):
//
//   - When a gRPC call or REST request gives up after retrying (its retry
//     deadline, attempt cap, budget, the server's pushback, or a context
//     deadline too near for the next wait), the Retrier records its method,
//     its context, the address of its request (an address only: the table
//     keeps no request alive) and a fingerprint of the request's content
//     (a gRPC request's deterministic encoding; a REST request's method,
//     URL and body), in a small table of stackSlots entries (the oldest is
//     overwritten).
//   - When a later call of the same method fails its first attempt, it is
//     a stacked retry when its request has the same content and either is
//     the same request value within stackReqWindow of the give-up (a loop
//     of the caller's own that passes it again) or comes under the same
//     context within stackCtxWindow (gax retries pass the same context; a
//     GAPIC REST client builds a new request per try). Content decides: a
//     loop over other resources is never a retry, whether it reuses one
//     request struct or one context. A request whose content cannot be
//     read (a REST body streamed once) is never matched.
//     context.Background and context.TODO carry no identity and never match
//     (so over REST, a call under one of them is not seen); nor does a
//     context that is not a pointer (a caller's own struct type).
//
// A stacked retry adds the span event iamretry.stacked to the call's span
// and counts iamretry.client.call.stacked{grpc.method}; the first of each
// method on a Retrier is logged at Warn through WithLogger.
//
// What it cannot see: a layer above that retries only after a success, or
// with a fresh context and a fresh request value (a new request of the same
// content under a new context looks like a new call), or later than the
// windows; nor a layer that retries a call the Retrier did not give up on
// (a permanent error, an unsafe method).
const (
	stackSlots     = 16
	stackReqWindow = 5 * time.Second
	stackCtxWindow = 2 * time.Minute
	// stackMaxMethods bounds the set of methods already logged.
	stackMaxMethods = 256
)

// stackedEvent is the span event of a stacked retry.
const stackedEvent = "iamretry.stacked"

type stackEntry struct {
	method string
	ctx    context.Context // nil: not comparable, or without identity
	addr   uintptr         // the request's address; 0: none
	sum    uint64          // the request's content fingerprint (never 0)
	at     time.Time
}

type stackTable struct {
	mu       sync.Mutex
	entries  [stackSlots]stackEntry
	next     int
	reported map[string]bool
}

// stackable reports whether j's face is watched (gRPC calls and REST
// requests: the faces that ask the safe-to-retry question; Do, WaitVisible
// and the Updater own what they run).
func stackable(j *job) bool { return j.face != nil }

// identity returns ctx when it can stand for one call: a pointer (every
// context the context package derives is one), so that == compares
// identities and never panics, and not one of the shared roots. A context
// of a struct type is not used: its type may be comparable while a value
// it holds is not, and == on two of them panics.
func identity(ctx context.Context) context.Context {
	if ctx == nil || reflect.TypeOf(ctx).Kind() != reflect.Pointer {
		return nil // context.Background and TODO are structs too
	}
	return ctx
}

// reqAddr returns the address req points to, or 0 when it is not a
// non-nil pointer. It is compared only, never followed.
func reqAddr(req any) uintptr {
	v := reflect.ValueOf(req)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return 0
	}
	return v.Pointer()
}

// contentSummer is a face whose request's content only it can read (the
// REST face: a buffered body, or GetBody).
type contentSummer interface{ contentSum() uint64 }

// contentOf is the fingerprint of j's request content: the face's own, or
// a proto request's deterministic encoding; 0 when it cannot be read.
func contentOf(j *job) uint64 {
	if f, ok := j.face.(contentSummer); ok {
		return f.contentSum()
	}
	m, ok := j.face.message().(proto.Message)
	if !ok {
		return 0
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64() | 1 // never 0
}

// stackCheck runs at a call's first failure: it reports the call when it
// retries one the Retrier gave up on.
func (r *Retrier) stackCheck(ctx context.Context, j *job, now time.Time) {
	if !stackable(j) {
		return
	}
	id := identity(ctx)
	addr := reqAddr(j.face.message())
	if id == nil && addr == 0 {
		return
	}
	var sum uint64 // read only once an entry of the method is near enough
	t := &r.stack
	t.mu.Lock()
	hit := -1
	for i := range t.entries {
		e := &t.entries[i]
		if e.method != j.method || e.at.IsZero() {
			continue
		}
		age := now.Sub(e.at)
		if age < 0 || age > stackCtxWindow {
			continue
		}
		sameReq := addr != 0 && e.addr == addr && age <= stackReqWindow
		if !sameReq && (id == nil || e.ctx != id) {
			continue
		}
		if sum == 0 {
			if sum = contentOf(j); sum == 0 {
				break // content unknown: never a match
			}
		}
		if sum == e.sum {
			hit = i
			break
		}
	}
	first := false
	if hit >= 0 {
		t.entries[hit] = stackEntry{} // matched once; its give-up records it again
		key := stackKey(j.method)
		if !t.reported[key] && len(t.reported) < stackMaxMethods {
			if t.reported == nil {
				t.reported = map[string]bool{}
			}
			t.reported[key] = true
			first = true
		}
	}
	t.mu.Unlock()
	if hit < 0 {
		return
	}
	r.reportStacked(ctx, j.method, first)
}

// stackKey is the key of method in the set of methods already logged: a
// gRPC method's own name (a service's methods are a small set; the set is
// bounded by stackMaxMethods), and for a REST request outside the table,
// whose name carries its path, the metrics' bounded value ("other").
func stackKey(method string) string {
	key := methodAttr(method)
	if key == otherMethod && strings.HasPrefix(method, "/") && len(method) <= maxMethodName {
		return method
	}
	return key
}

// stackGaveUp runs when a call ends: one that gave up after retrying is
// recorded for stackCheck.
func (r *Retrier) stackGaveUp(ctx context.Context, j *job, a *Attempt, now time.Time) {
	if !stackable(j) || a.N < 2 {
		return
	}
	switch a.Reason {
	case DeadlineReached, MaxAttempts, BudgetExhausted, ServerPushback, ContextDeadline:
	default:
		return
	}
	e := stackEntry{method: j.method, ctx: identity(ctx), addr: reqAddr(j.face.message()), at: now}
	if e.ctx == nil && e.addr == 0 {
		return
	}
	if e.sum = contentOf(j); e.sum == 0 {
		return // content unknown: nothing could match it
	}
	t := &r.stack
	t.mu.Lock()
	t.entries[t.next] = e
	t.next = (t.next + 1) % stackSlots
	t.mu.Unlock()
}

// reportStacked counts a stacked retry, adds its span event, and logs the
// first one of the method.
func (r *Retrier) reportStacked(ctx context.Context, method string, first bool) {
	if r.m != nil {
		r.m.stackedCall(ctx, method)
	}
	value := r.methodValue(method)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(stackedEvent, trace.WithAttributes(attribute.String(keyMethod, value)))
	}
	if first && r.cfg.logger != nil {
		fields := []any{keyMethod, value}
		if value == otherMethod {
			fields = append(fields, keyName, method)
		}
		r.cfg.logger.Log(ctx, logging.LevelWarn,
			"iamretry: a layer above retried a call this Retrier had already retried and given up on, so attempts multiply; turn its retries off: build the client with interceptor.NewClient (or NewRESTClient), or call interceptor.DisableGAXRetries(client.CallOptions) on a client built by hand, and do not wrap calls in a retry loop of your own (reported once per method)",
			fields...)
	}
}

// stackedCall counts one stacked retry of method.
func (m *metrics) stackedCall(ctx context.Context, method string) {
	m.stacked.Add(ctx, 1, m.statsFor(method).plain...)
}
