package interceptor

import (
	"context"
	"hash/fnv"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"
	"weak"

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
//     its context, and for gRPC its request (held weakly: a weak.Pointer, so
//     the table keeps no request alive) and a fingerprint of the request's
//     content, in a small table of stackSlots entries (the oldest is
//     overwritten).
//   - When a later call of the same method fails its first attempt, it is
//     a stacked retry when it carries the same request value within
//     stackReqWindow of the give-up (gax retries pass the same request; so
//     does a loop of the caller's own), or the same context and a request
//     of the same content within stackCtxWindow (gax retries pass the same
//     context; a loop over other resources that shares one context is not
//     a retry). A GAPIC REST client builds a new request per attempt, so
//     over REST the context is what matches, with a request of the same
//     method and URL (the resource; the body is not read).
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
	req    weak.Pointer[byte]
	hasReq bool
	sum    uint64 // the request's content fingerprint; 0: none
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

// weakReq returns a weak pointer to the value req points to, if it is a
// non-nil pointer.
func weakReq(req any) (weak.Pointer[byte], bool) {
	v := reflect.ValueOf(req)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return weak.Pointer[byte]{}, false
	}
	return weak.Make((*byte)(v.UnsafePointer())), true
}

// fingerprint hashes a proto request's deterministic encoding, or a REST
// request's method and URL (the resource it names; its body is not read);
// 0 when req is neither (or cannot be encoded).
func fingerprint(req any) uint64 {
	h := fnv.New64a()
	switch m := req.(type) {
	case *http.Request:
		if m.URL == nil {
			return 0
		}
		_, _ = h.Write([]byte(m.Method + " " + m.URL.String()))
	case proto.Message:
		b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		if err != nil {
			return 0
		}
		_, _ = h.Write(b)
	default:
		return 0
	}
	return h.Sum64() | 1 // never 0
}

// stackCheck runs at a call's first failure: it reports the call when it
// retries one the Retrier gave up on.
func (r *Retrier) stackCheck(ctx context.Context, j *job, now time.Time) {
	if !stackable(j) {
		return
	}
	id := identity(ctx)
	req := j.face.message()
	var w weak.Pointer[byte]
	hasReq := false
	if req != nil {
		w, hasReq = weakReq(req)
	}
	var sum uint64
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
		if hasReq && e.hasReq && w == e.req && age <= stackReqWindow {
			hit = i
			break
		}
		if id != nil && e.ctx == id {
			if req != nil {
				if sum == 0 {
					sum = fingerprint(req)
				}
				if sum != e.sum {
					continue
				}
			}
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
	e := stackEntry{method: j.method, ctx: identity(ctx), at: now}
	if req := j.face.message(); req != nil {
		e.req, e.hasReq = weakReq(req)
		e.sum = fingerprint(req)
	}
	if e.ctx == nil && !e.hasReq {
		return
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
