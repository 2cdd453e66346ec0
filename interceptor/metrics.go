package interceptor

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	rpccode "google.golang.org/genproto/googleapis/rpc/code"
	grpccodes "google.golang.org/grpc/codes"

	"github.com/iamretry/iamretry/codes"
	"github.com/iamretry/iamretry/internal/iammethods"
)

// MeterName is the OpenTelemetry meter of WithMeterProvider's instruments.
const MeterName = "github.com/iamretry/iamretry"

// The instruments' names (WithMeterProvider documents each).
const (
	metricCalls      = "iamretry.client.calls"
	metricRetries    = "iamretry.client.call.retries"
	metricRetryDelay = "iamretry.client.call.retry_delay"
	metricGaveUp     = "iamretry.client.call.gave_up"
	metricStacked    = "iamretry.client.call.stacked"
)

// otherMethod is grpc.method for a method that is not one of the generated
// IAM methods (gRFC A66), so that the attribute's cardinality stays bounded.
const otherMethod = "other"

// MaxMixinMethods bounds the grpc.method values a MeterProvider gives the IAM
// mixin methods of other services (".../Projects/GetIamPolicy"); later ones,
// and unknown names, are "other".
const MaxMixinMethods = 100

// maxMethodName is the longest method name given a grpc.method value of its
// own; a generated method's full name is far shorter.
const maxMethodName = 256

// retryBuckets are A96's buckets of iamretry.client.call.retries;
// delayBuckets A66's latency buckets (seconds) for retry_delay.
var (
	retryBuckets = []float64{1, 2, 3, 4, 5}
	delayBuckets = []float64{0, 0.00001, 0.00005, 0.0001, 0.0003, 0.0006, 0.0008, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.013, 0.016, 0.02, 0.025, 0.03, 0.04, 0.05, 0.065, 0.08, 0.1, 0.13, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5, 0.65, 0.8, 1, 2, 5, 10, 20, 50, 100}
)

// WithMeterProvider records, through mp on meter MeterName (after gRFC A96),
// iamretry.client.calls, .call.gave_up (by iamretry.reason), .call.stacked,
// .call.retries and .call.retry_delay (s, of calls that retried), and
// iamretry.policy.update.writes and .conflicts (the README describes each),
// with grpc.method (bounded: MaxMixinMethods) and grpc.status on errors.
// Retriers given one mp share them. A call that succeeds at once costs one
// atomic add and no allocation. mp must not be nil.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) {
		if mp == nil {
			c.fail("WithMeterProvider(nil): give a metric.MeterProvider (otel.GetMeterProvider()), or leave the option out")
			return
		}
		c.meterProvider = mp
	}
}

// metrics are a Retrier's instruments and per-method call counts.
type metrics struct {
	retries metric.Int64Histogram
	delay   metric.Float64Histogram
	gaveUp  metric.Int64Counter
	rmw     rmwMetrics          // transact.go
	stacked metric.Int64Counter // stacked.go
	calls   metric.Int64ObservableCounter

	// cache maps a method string to its stats without hashing its bytes:
	// the slot comes from the string's address (generated clients pass one
	// constant per method), and the entry keeps the string it was made for,
	// so a comparison (pointer-equal in the common case) confirms the hit.
	cache [cacheSlots]atomic.Pointer[cacheEntry]

	mu     sync.Mutex
	byName map[string]*methodStats // by grpc.method value
	all    []*methodStats          // append-only, guarded by mu
	mixins int                     // byName's values of mixin methods outside the table (<= MaxMixinMethods)
}

const cacheSlots = 64

type cacheEntry struct {
	method string
	s      *methodStats
}

// numCodes is the number of gRPC codes: OK (0) to UNAUTHENTICATED (16).
const numCodes = 17

// methodStats are the call counts and pre-built attribute options of one
// grpc.method value.
type methodStats struct {
	name string
	ok   atomic.Int64
	fail [numCodes]atomic.Int64

	plain []metric.AddOption // {grpc.method}
	// byStatus[code]: {grpc.method, grpc.status}; built at first use.
	byStatus [numCodes]atomic.Pointer[statusOpts]
	// gaveUp[code][reason]: {grpc.method, grpc.status, iamretry.reason}.
	gaveUp [numCodes][len(reasonTokens)]atomic.Pointer[[]metric.AddOption]
}

type statusOpts struct {
	add     []metric.AddOption
	record  []metric.RecordOption
	observe []metric.ObserveOption
}

// shared holds the metrics of each MeterProvider: every Retrier (and
// Updater) given one provider records into the same instruments and call
// counts, and the observable counter has one callback per provider (an
// asynchronous instrument keeps one observation per attribute set, so
// callbacks of several Retriers would hide each other's counts).
var shared struct {
	sync.Mutex
	byProvider map[metric.MeterProvider]*metrics
}

// newMetrics returns the metrics of mp, made at its first use.
func newMetrics(mp metric.MeterProvider) (*metrics, error) {
	if !reflect.TypeOf(mp).Comparable() {
		return makeMetrics(mp) // cannot be a map key: its own instruments
	}
	shared.Lock()
	defer shared.Unlock()
	if m := shared.byProvider[mp]; m != nil {
		return m, nil
	}
	m, err := makeMetrics(mp)
	if err != nil {
		return nil, err
	}
	if shared.byProvider == nil {
		shared.byProvider = map[metric.MeterProvider]*metrics{}
	}
	shared.byProvider[mp] = m
	return m, nil
}

func makeMetrics(mp metric.MeterProvider) (*metrics, error) {
	meter := mp.Meter(MeterName)
	m := &metrics{byName: map[string]*methodStats{}}
	var errs []error
	var err error
	m.retries, err = meter.Int64Histogram(metricRetries,
		metric.WithUnit("{retry}"),
		metric.WithDescription("Retries made by one call, recorded only for calls that retried."),
		metric.WithExplicitBucketBoundaries(retryBuckets...))
	errs = append(errs, err)
	m.delay, err = meter.Float64Histogram(metricRetryDelay,
		metric.WithUnit("s"),
		metric.WithDescription("Total time one call waited between attempts, recorded only for calls that retried."),
		metric.WithExplicitBucketBoundaries(delayBuckets...))
	errs = append(errs, err)
	m.gaveUp, err = meter.Int64Counter(metricGaveUp,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls that ended with a retryable error that was not retried, by iamretry.reason."))
	errs = append(errs, err)
	errs = append(errs, m.rmw.make(meter)...)
	m.stacked, err = meter.Int64Counter(metricStacked,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls a layer above retried after this library had retried them and given up (gax retries left on, a retry loop of the caller's own)."))
	errs = append(errs, err)
	m.calls, err = meter.Int64ObservableCounter(metricCalls,
		metric.WithUnit("{call}"),
		metric.WithDescription("Calls made: the denominator of the other instruments."),
		metric.WithInt64Callback(m.observeCalls))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, errors.Join(errors.New("iamretry: WithMeterProvider: creating the instruments failed"), err)
	}
	return m, nil
}

// succeeded counts a call that succeeded: the success path's one atomic add
// once the method's cache slot is warm. Its hit, cached, is small enough
// to be inlined: the interceptor's success path calls cached itself and
// comes here only on a miss.
func (m *metrics) succeeded(method string) {
	s := m.cached(method)
	if s == nil {
		s = m.lookup(method)
	}
	s.ok.Add(1)
}

// cached returns the stats of method from its cache slot, or nil.
func (m *metrics) cached(method string) *methodStats {
	if e := m.cache[slot(method)].Load(); e != nil && e.is(method) {
		return e.s
	}
	return nil
}

// statsFor returns the stats of method.
func (m *metrics) statsFor(method string) *methodStats {
	if e := m.cache[slot(method)].Load(); e != nil && e.is(method) {
		return e.s
	}
	return m.lookup(method)
}

// is reports whether e was made for method. The usual hit is the very
// string the entry was made with (a generated client's constant): same
// address and length, decided without calling the runtime's memequal.
func (e *cacheEntry) is(method string) bool {
	return len(e.method) == len(method) &&
		(unsafe.StringData(e.method) == unsafe.StringData(method) || e.method == method)
}

func slot(method string) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.StringData(method)))
	return (p>>4 ^ p>>10 ^ uintptr(len(method))) % cacheSlots
}

// lookup finds or makes the stats of method's grpc.method value and caches
// them under method's slot.
func (m *metrics) lookup(method string) *methodStats {
	name := methodAttr(method)
	m.mu.Lock()
	s := m.byName[name]
	if s == nil && isMixinValue(name) {
		if m.mixins >= MaxMixinMethods {
			name = otherMethod
			s = m.byName[name]
		} else {
			m.mixins++
		}
	}
	if s == nil {
		s = &methodStats{name: name}
		s.plain = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String(keyMethod, name)))}
		m.byName[name] = s
		m.all = append(m.all, s)
	}
	m.mu.Unlock()
	m.cache[slot(method)].Store(&cacheEntry{method: method, s: s})
	return s
}

// methodAttr is grpc.method's value for method (see WithMeterProvider),
// before MaxMixinMethods is applied: a method of the table, one of this
// library's read-modify-writes (iammethods.Transact), an IAM mixin method
// of another service (isMixinValue), or otherMethod.
func methodAttr(method string) string {
	if iammethods.Transact[method] {
		return method
	}
	if len(method) > maxMethodName {
		return otherMethod
	}
	full := method
	if !strings.HasPrefix(full, "/") {
		full = "/" + method
	}
	if _, ok := safeMethods[full]; ok || iammethods.IsMixin(full) {
		return full[1:]
	}
	return otherMethod
}

// isMixinValue reports whether a value of methodAttr is an IAM mixin method
// of a service outside the table: the values MaxMixinMethods bounds.
func isMixinValue(name string) bool {
	if name == otherMethod || iammethods.Transact[name] {
		return false
	}
	_, inTable := safeMethods["/"+name]
	return !inTable
}

// codeIndex is code's index in the per-code arrays.
func codeIndex(err error) int {
	c := codes.CodeOf(err) // a REST error's own code, not gax's guess
	if c >= numCodes {
		return int(grpccodes.Unknown)
	}
	return int(c)
}

// codeNames are the gRPC codes as grpc.status spells them (gRFC A66), the
// names of google.rpc.Code, indexed by code for the hot path.
var codeNames = func() (names [numCodes]string) {
	for c := range names {
		names[c] = rpccode.Code_name[int32(c)]
	}
	return names
}()

// statusName is the name of err's gRPC code ("OK" for nil).
func statusName(err error) string { return codeNames[codeIndex(err)] }

// status returns the options of the call's status: {grpc.method} for OK,
// {grpc.method, grpc.status} otherwise.
func (s *methodStats) status(code int) *statusOpts {
	if o := s.byStatus[code].Load(); o != nil {
		return o
	}
	kvs := []attribute.KeyValue{attribute.String(keyMethod, s.name)}
	if code != 0 {
		kvs = append(kvs, attribute.String(keyStatus, codeNames[code]))
	}
	opt := metric.WithAttributeSet(attribute.NewSet(kvs...))
	o := &statusOpts{add: []metric.AddOption{opt}, record: []metric.RecordOption{opt}, observe: []metric.ObserveOption{opt}}
	if s.byStatus[code].CompareAndSwap(nil, o) {
		return o
	}
	return s.byStatus[code].Load()
}

func (s *methodStats) gaveUpOpts(code int, r Reason) []metric.AddOption {
	p := &s.gaveUp[code][r]
	if o := p.Load(); o != nil {
		return *o
	}
	kvs := []attribute.KeyValue{attribute.String(keyMethod, s.name), attribute.String(keyReason, r.token())}
	if code != 0 {
		kvs = append(kvs, attribute.String(keyStatus, codeNames[code]))
	}
	o := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}
	if p.CompareAndSwap(nil, &o) {
		return o
	}
	return *p.Load()
}

// ended records a call that failed at least once: its end (err, nil when
// it succeeded after retries), the retries it made, the time it waited, and
// the Reason of its end (a give-up reason adds to gave_up).
func (m *metrics) ended(ctx context.Context, method string, err error, retries int, waited time.Duration, reason Reason) {
	s := m.statsFor(method)
	code := codeIndex(err)
	if code == 0 {
		s.ok.Add(1)
	} else {
		s.fail[code].Add(1)
	}
	if retries > 0 {
		o := s.status(code)
		m.retries.Record(ctx, int64(retries), o.record...)
		m.delay.Record(ctx, waited.Seconds(), o.record...)
	}
	if reason.mayGiveUp() {
		// A ContextDone that gave up nothing came as NotRetryable (end).
		m.gaveUp.Add(ctx, 1, s.gaveUpOpts(code, reason)...)
	}
}

// observeCalls reports the call counts.
func (m *metrics) observeCalls(_ context.Context, o metric.Int64Observer) error {
	m.mu.Lock()
	all := m.all
	m.mu.Unlock()
	for _, s := range all {
		if v := s.ok.Load(); v > 0 {
			o.Observe(v, s.status(0).observe...)
		}
		for code := 1; code < numCodes; code++ {
			if v := s.fail[code].Load(); v > 0 {
				o.Observe(v, s.status(code).observe...)
			}
		}
	}
	return nil
}
