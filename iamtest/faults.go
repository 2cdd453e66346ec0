package iamtest

import (
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
const injectedPrefix = "iamtest: injected "

// faults holds the fault-injection settings and the seeded random source.
// One mutex guards them, so concurrent calls consume scripts and random
// numbers one at a time.
type faults struct {
	mu          sync.Mutex
	rng         *rand.Rand
	scripts     map[Method][]script
	rates       map[Method]failureRate
	lostScripts map[Method]int
	lostRates   map[Method]float64
	latency     map[Method]time.Duration
	downs       map[Method]codes.Code // SetOutage
	retryInfo   time.Duration
	interleave  map[Method]int
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
	f.scripts = map[Method][]script{}
	f.rates = map[Method]failureRate{}
	f.lostScripts = map[Method]int{}
	f.lostRates = map[Method]float64{}
	f.latency = map[Method]time.Duration{}
	f.downs = map[Method]codes.Code{}
	f.retryInfo = 0
	f.interleave = map[Method]int{}
	f.mu.Unlock()
}

// FailNext makes the next n calls of m fail with code before the fake acts,
// as IAM does when a request meets a transient failure (INTERNAL,
// UNAVAILABLE, DEADLINE_EXCEEDED: the 500, 503 and 504 of IAM's "Retry failed
// requests" guidance) or any other error at the point a test chooses. Nothing
// the failed calls asked for happens. Scripts queue: a second FailNext on the
// same method applies once the first is used up, and a script for a named
// method is used before one for AnyMethod. n == 0 does nothing. It panics on
// an unknown method, a negative n or code OK.
func (s *Server) FailNext(m Method, n int, code codes.Code) {
	mustMethod("FailNext", m)
	mustCount("FailNext", n)
	mustFailCode("FailNext", code)
	s.faults.addScript(m, n, script{code: code})
}

// addScript queues n failures of m.
func (f *faults) addScript(m Method, n int, sc script) {
	if n == 0 {
		return
	}
	sc.n = n
	f.mu.Lock()
	f.scripts[m] = append(f.scripts[m], sc)
	f.mu.Unlock()
}

// SetFailureRate makes each call of m fail before the fake acts with
// probability rate, with a code drawn uniformly from failCodes (UNAVAILABLE
// when none is given): the background rate of transient errors a busy
// Google API shows. The draws come from the seeded random source (WithSeed,
// SetSeed). Scripts (FailNext) are used first. Rate 0 removes the setting.
// It panics on an unknown method, a rate outside [0, 1] or code OK.
func (s *Server) SetFailureRate(m Method, rate float64, failCodes ...codes.Code) {
	mustMethod("SetFailureRate", m)
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
		delete(f.rates, m)
		return
	}
	f.rates[m] = failureRate{p: rate, codes: append([]codes.Code(nil), failCodes...)}
}

// LoseNextAnswers makes the next n successful calls of m take effect and then
// answer UNAVAILABLE, as when IAM committed a change but the answer was lost
// on the way back (a dropped connection, a deadline that passed after the
// write): the client sees a failure although the policy changed, and a blind
// replay would apply the change twice. For AnyMethod it counts calls of
// methods that write (everything but Get*, List*, Test*, Query*, Search*,
// Lint*) only. n == 0 does nothing. It panics on an unknown method or a
// negative n.
func (s *Server) LoseNextAnswers(m Method, n int) {
	mustMethod("LoseNextAnswers", m)
	mustCount("LoseNextAnswers", n)
	f := s.faults
	f.mu.Lock()
	f.lostScripts[m] += n
	f.mu.Unlock()
}

// SetLostAnswerRate makes each successful call of m take effect and then
// answer UNAVAILABLE with probability rate (see LoseNextAnswers), drawn from
// the seeded random source. For AnyMethod it applies to methods that write
// only; a named method's rate wins. Rate 0 removes the setting. It panics on
// an unknown method or a rate outside [0, 1].
func (s *Server) SetLostAnswerRate(m Method, rate float64) {
	mustMethod("SetLostAnswerRate", m)
	mustRate("SetLostAnswerRate", rate)
	f := s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if rate == 0 {
		delete(f.lostRates, m)
		return
	}
	f.lostRates[m] = rate
}

// SetLatency makes every call of m wait d on the fake's clock (see WithClock)
// before anything else happens, as a slow IAM backend does: a client whose
// deadline is shorter sees DEADLINE_EXCEEDED, and a call whose context ends
// during the wait fails with the context's code. A named method's latency
// wins over the AnyMethod one. d == 0 removes the setting. It panics on an
// unknown method or a negative d.
func (s *Server) SetLatency(m Method, d time.Duration) {
	mustMethod("SetLatency", m)
	mustDuration("SetLatency", d)
	f := s.faults
	f.mu.Lock()
	defer f.mu.Unlock()
	if d == 0 {
		delete(f.latency, m)
		return
	}
	f.latency[m] = d
}

// SetOutage makes every call of m (or every call, for AnyMethod) fail with
// code until ClearOutage, as during an outage of IAM or of one of its
// backends: typically UNAVAILABLE (503). An outage answers at once, before
// latency, scripts and rates, which it leaves untouched; the error is an
// injected one (it carries SetRetryInfo's detail). A named method's outage
// wins over the AnyMethod one. It panics on an unknown method or code OK.
func (s *Server) SetOutage(m Method, code codes.Code) {
	mustMethod("SetOutage", m)
	mustFailCode("SetOutage", code)
	f := s.faults
	f.mu.Lock()
	f.downs[m] = code
	f.mu.Unlock()
}

// ClearOutage ends the outage of m set by SetOutage (for AnyMethod, the
// outage of every method set with AnyMethod; named methods' outages stay).
// It panics on an unknown method.
func (s *Server) ClearOutage(m Method) {
	mustMethod("ClearOutage", m)
	f := s.faults
	f.mu.Lock()
	delete(f.downs, m)
	f.mu.Unlock()
}

// SetRetryInfo makes every injected error (FailNext, SetFailureRate,
// SetOutage, lost answers) carry a google.rpc.RetryInfo detail whose
// RetryDelay is d, as Google APIs do to tell the client how long to wait
// before it retries. d == 0 removes the detail. It panics on a negative d.
func (s *Server) SetRetryInfo(d time.Duration) {
	mustDuration("SetRetryInfo", d)
	f := s.faults
	f.mu.Lock()
	f.retryInfo = d
	f.mu.Unlock()
}

// ConcurrentWriteNext makes another writer change the object just before
// each of the next n writes of m guarded by an etag: a SetIamPolicy method
// (AnyMethod: each of these writes), MethodUpdateRole (custom roles),
// MethodUpdatePolicy and MethodDeletePolicy (deny policies). The object is
// rewritten unchanged, so its etag moves, and a write that carries the etag
// it read is refused as IAM refuses it, with ABORTED (409) and IAM's
// concurrent-change message (see SetStaleEtagCode). This is the race IAM's
// read-modify-write guidance is about: a rerun of the whole
// read-modify-write reads the new etag and succeeds, a replay of the write
// alone fails again. n == 0 does nothing. It panics on a method that is not
// one of those or a negative n.
func (s *Server) ConcurrentWriteNext(m Method, n int) {
	mustEtagWrite("ConcurrentWriteNext", m)
	mustCount("ConcurrentWriteNext", n)
	f := s.faults
	f.mu.Lock()
	f.interleave[m] += n
	f.mu.Unlock()
}

// ResetFaults removes every fault setting: scripts, failure and lost-answer
// rates and scripts, latency, outages, RetryInfo, pending concurrent writes
// and the stale-etag code. The random source, the propagation settings, the
// call log and the stored data are kept.
func (s *Server) ResetFaults() {
	s.faults.reset()
	s.cfgMu.Lock()
	s.cfg.staleCode = codes.Aborted
	s.cfgMu.Unlock()
}

// latencyFor returns the latency configured for method.
func (f *faults) latencyFor(method Method) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.latency[method]; ok {
		return d
	}
	return f.latency[AnyMethod]
}

// down returns the code of the method outage that covers method, if any: a
// named method's outage wins over the AnyMethod one.
func (f *faults) down(method Method) (codes.Code, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if code, ok := f.downs[method]; ok {
		return code, true
	}
	code, ok := f.downs[AnyMethod]
	return code, ok
}

// decide returns the code of a fault to inject before the handler, if any,
// and the ready-made error of a FailNextWith script: a script first, then a
// rate.
func (f *faults) decide(method Method) (codes.Code, error, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []Method{method, AnyMethod} {
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
func (f *faults) loseAnswer(method Method) bool {
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
func (f *faults) interleaveWrite(method Method) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range []Method{method, AnyMethod} {
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
