package fakeiam

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// injectedPrefix starts the message of every error the fault layer injects,
// so a test can tell an injected failure from one the fake's logic answered.
const injectedPrefix = "fakeiam: injected "

// faults holds the fault-injection settings and the seeded random source.
// One mutex guards them, so concurrent calls consume scripts and random
// numbers one at a time.
type faults struct {
	mu          sync.Mutex
	rng         *rand.Rand
	scripts     map[string][]script
	rates       map[string]failureRate
	lostScripts map[string]int
	lostRates   map[string]float64
	latency     map[string]time.Duration
	outage      *outage
	downs       map[string]codes.Code // SetMethodOutage
	retryInfo   time.Duration
	interleave  map[string]int
}

type script struct {
	n    int
	code codes.Code
	err  error // the error to answer, or nil for one built from code
}

type failureRate struct {
	p     float64
	codes []codes.Code
}

type outage struct {
	from, to time.Time
	code     codes.Code
}

func newFaults(seed int64) *faults {
	f := &faults{}
	f.reset()
	f.reseed(seed)
	return f
}

// pcgStream is the fixed second word of the PCG seed.
const pcgStream = 0x9e3779b97f4a7c15

func (f *faults) reseed(seed int64) {
	f.mu.Lock()
	f.rng = rand.New(rand.NewPCG(uint64(seed), pcgStream))
	f.mu.Unlock()
}

func (f *faults) reset() {
	f.mu.Lock()
	f.scripts = map[string][]script{}
	f.rates = map[string]failureRate{}
	f.lostScripts = map[string]int{}
	f.lostRates = map[string]float64{}
	f.latency = map[string]time.Duration{}
	f.outage = nil
	f.downs = nil
	f.retryInfo = 0
	f.interleave = map[string]int{}
	f.mu.Unlock()
}

func mustFailCode(fn string, code codes.Code) {
	if code == codes.OK {
		panic("fakeiam: " + fn + " needs an error code, not OK")
	}
}

func mustRate(fn string, rate float64) {
	if !(rate >= 0 && rate <= 1) {
		panic(fmt.Sprintf("fakeiam: %s rate %v is outside [0, 1]", fn, rate))
	}
}

// FailNext makes the next n calls of method (a Method* constant, or AnyMethod
// for every call) fail with code, before the handler runs. Scripts queue: a
// second FailNext on the same method takes effect once the first is used up.
// A script for a named method is used before one for AnyMethod. n <= 0 does
// nothing. It panics if code is OK.
func (s *Server) FailNext(method string, n int, code codes.Code) {
	mustFailCode("FailNext", code)
	if n <= 0 {
		return
	}
	f := s.faults
	f.mu.Lock()
	f.scripts[method] = append(f.scripts[method], script{n: n, code: code})
	f.mu.Unlock()
}

// FailNextWith makes the next n calls of method (or of every method, for
// AnyMethod) fail with err, before the handler runs, queued with FailNext's
// scripts. err is answered as it is (its code, message and details, plus a
// RetryInfo when SetRetryInfo is set), so ready-made IAM-shaped errors such
// as QuotaExceededError and PermissionDeniedError can be injected. n <= 0
// does nothing. It panics if err is nil or has code OK.
func (s *Server) FailNextWith(method string, n int, err error) {
	if err == nil || status.Code(err) == codes.OK {
		panic("fakeiam: FailNextWith needs an error with a code other than OK")
	}
	if n <= 0 {
		return
	}
	f := s.faults
	f.mu.Lock()
	f.scripts[method] = append(f.scripts[method], script{n: n, code: status.Code(err), err: err})
	f.mu.Unlock()
}

// SetFailureRate makes each call of method (or of every method, for
// AnyMethod) fail before the handler with probability rate, with a code drawn
// uniformly from failCodes (UNAVAILABLE when none is given), using the seeded
// random source. A rate for a named method replaces the AnyMethod rate for
// that method. Rate 0 removes the setting. Scripts (FailNext) are used before
// rates. It panics if rate is outside [0, 1] or a code is OK.
func (s *Server) SetFailureRate(method string, rate float64, failCodes ...codes.Code) {
	mustRate("SetFailureRate", rate)
	for _, c := range failCodes {
		mustFailCode("SetFailureRate", c)
	}
	if len(failCodes) == 0 {
		failCodes = []codes.Code{codes.Unavailable}
	}
	f := s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if rate == 0 {
		delete(f.rates, method)
		return
	}
	f.rates[method] = failureRate{p: rate, codes: append([]codes.Code(nil), failCodes...)}
}

// LoseNextAnswers makes the next n successful calls of method run (and so
// commit) and then answer UNAVAILABLE, as when a reply is lost on the way
// back. For AnyMethod it counts successful calls of write methods (see
// isWrite) only. A script for a named method is used before one for
// AnyMethod. n <= 0 does nothing.
func (s *Server) LoseNextAnswers(method string, n int) {
	if n <= 0 {
		return
	}
	f := s.faults
	f.mu.Lock()
	f.lostScripts[method] += n
	f.mu.Unlock()
}

// SetLostAnswerRate makes each successful call of method commit and then
// answer UNAVAILABLE with probability rate (seeded random source). For
// AnyMethod it applies to write methods (see isWrite) only; a named method's
// rate replaces it. Rate 0 removes the setting. It panics if rate is outside
// [0, 1].
func (s *Server) SetLostAnswerRate(method string, rate float64) {
	mustRate("SetLostAnswerRate", rate)
	f := s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if rate == 0 {
		delete(f.lostRates, method)
		return
	}
	f.lostRates[method] = rate
}

// SetLatency makes every call of method (or of every method, for AnyMethod;
// a named method's latency replaces it) wait d before anything else happens,
// through the sleep func (see WithSleep). A call whose context ends during
// the wait fails with the context's code (CANCELED or DEADLINE_EXCEEDED).
// d <= 0 removes the setting.
func (s *Server) SetLatency(method string, d time.Duration) {
	f := s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if d <= 0 {
		delete(f.latency, method)
		return
	}
	f.latency[method] = d
}

// SetOutage makes every call fail with code, before the handler, while
// from <= now < to on the fake's clock. It replaces any earlier window.
// It panics if code is OK.
func (s *Server) SetOutage(from, to time.Time, code codes.Code) {
	mustFailCode("SetOutage", code)
	f := s.faults
	f.mu.Lock()
	f.outage = &outage{from: from, to: to, code: code}
	f.mu.Unlock()
}

// ClearOutage removes the outage window set by SetOutage.
func (s *Server) ClearOutage() {
	f := s.faults
	f.mu.Lock()
	f.outage = nil
	f.mu.Unlock()
}

// SetMethodOutage makes every call of method (every call, for AnyMethod) fail
// with code until ClearMethodOutage, as during an outage of IAM or of one of
// its backends (typically UNAVAILABLE, 503). It answers at once, before
// latency, scripts and rates, which it leaves as they are; the error is an
// injected one (it carries SetRetryInfo's detail). A named method's outage
// wins over the AnyMethod one. It panics if code is OK.
func (s *Server) SetMethodOutage(method string, code codes.Code) {
	mustFailCode("SetMethodOutage", code)
	f := s.faults
	f.mu.Lock()
	if f.downs == nil {
		f.downs = map[string]codes.Code{}
	}
	f.downs[method] = code
	f.mu.Unlock()
}

// ClearMethodOutage ends the outage of method set by SetMethodOutage (for
// AnyMethod, the AnyMethod outage only; named methods' outages stay).
func (s *Server) ClearMethodOutage(method string) {
	f := s.faults
	f.mu.Lock()
	delete(f.downs, method)
	f.mu.Unlock()
}

// SetRetryInfo makes every injected error (scripts, rates, outages, lost
// answers) carry a google.rpc.RetryInfo detail with RetryDelay d, as some
// Google services send. d <= 0 removes the detail.
func (s *Server) SetRetryInfo(d time.Duration) {
	f := s.faults
	f.mu.Lock()
	f.retryInfo = max(d, 0)
	f.mu.Unlock()
}

// ConcurrentWriteNext makes another writer slip in before each of the next n
// SetIamPolicy calls of method (any of the SetIamPolicy Method* constants, or
// AnyMethod for all of them): the resource's policy is rewritten unchanged,
// so its etag moves, and a write carrying the etag it read is answered by the
// fake's own logic as IAM would, ABORTED (see withStaleEtagCode). Unlike
// FailNext, a rerun of the read-modify-write then reads a new etag. Calls of
// other methods leave the count alone. n <= 0 does nothing.
func (s *Server) ConcurrentWriteNext(method string, n int) {
	if n <= 0 {
		return
	}
	f := s.faults
	f.mu.Lock()
	f.interleave[method] += n
	f.mu.Unlock()
}

// ResetFaults removes every fault setting: scripts, rates, lost answers,
// latency, the outage window, RetryInfo and pending concurrent writes. The random source, the call log
// and the stored data are kept.
func (s *Server) ResetFaults() { s.faults.reset() }

// latencyFor returns the latency configured for method.
func (f *faults) latencyFor(method string) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.latency[method]; ok {
		return d
	}
	return f.latency[AnyMethod]
}

// down returns the code of the method outage that covers method, if any: a
// named method's outage wins over the AnyMethod one.
func (f *faults) down(method string) (codes.Code, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if code, ok := f.downs[method]; ok {
		return code, true
	}
	code, ok := f.downs[AnyMethod]
	return code, ok
}

// decide returns the code of a fault to inject before the handler, if any,
// and the ready-made error of a FailNextWith script: an outage first, then a
// script, then a rate.
func (f *faults) decide(method string, now time.Time) (codes.Code, error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if o := f.outage; o != nil && !now.Before(o.from) && now.Before(o.to) {
		return o.code, nil, true
	}
	for _, key := range []string{method, AnyMethod} {
		if q := f.scripts[key]; len(q) > 0 {
			code, err := q[0].code, q[0].err
			if q[0].n--; q[0].n == 0 {
				q = q[1:]
			}
			if len(q) == 0 {
				delete(f.scripts, key)
			} else {
				f.scripts[key] = q
			}
			return code, err, true
		}
	}
	r, ok := f.rates[method]
	if !ok {
		r, ok = f.rates[AnyMethod]
	}
	if ok && f.rng.Float64() < r.p {
		return r.codes[f.rng.IntN(len(r.codes))], nil, true
	}
	return codes.OK, nil, false
}

// loseAnswer reports whether the answer of a successful call of method is to
// be lost.
func (f *faults) loseAnswer(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	write := isWrite(method)
	if f.lostScripts[method] > 0 {
		f.lostScripts[method]--
		return true
	}
	if write && f.lostScripts[AnyMethod] > 0 {
		f.lostScripts[AnyMethod]--
		return true
	}
	p, ok := f.lostRates[method]
	if !ok && write {
		p, ok = f.lostRates[AnyMethod]
	}
	return ok && f.rng.Float64() < p
}

// interleaveWrite reports whether a concurrent write is to slip in before
// this SetIamPolicy call of method.
func (f *faults) interleaveWrite(method string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []string{method, AnyMethod} {
		if f.interleave[key] > 0 {
			f.interleave[key]--
			return true
		}
	}
	return false
}

// injectedError builds the status error of an injected fault: ready when a
// script gave one, else with msg (prefixed by injectedPrefix) or, when
// iamMessages is on, IAM's message for code, and the details IAM attaches
// to code. A RetryInfo is added when SetRetryInfo is set.
func (f *faults) injectedError(code codes.Code, ready error, method, resource, msg string, iamMessages bool) error {
	f.mu.Lock()
	delay := f.retryInfo
	f.mu.Unlock()
	var st *status.Status
	switch {
	case ready != nil:
		st = status.Convert(ready)
	case iamMessages:
		st = withDetails(status.New(code, iamMessage(code)), injectedDetails(code, method, resource)...)
	default:
		st = withDetails(status.New(code, injectedPrefix+msg), injectedDetails(code, method, resource)...)
	}
	if delay > 0 {
		st = withDetails(st, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	}
	return st.Err()
}
