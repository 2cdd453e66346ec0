package iamtest

import (
	"time"

	"google.golang.org/grpc/codes"
)

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
	s.fake.FailNext(string(m), n, code)
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
	s.fake.SetFailureRate(string(m), rate, failCodes...)
}

// SetSeed reseeds the random source behind SetFailureRate and
// SetLostAnswerRate, as WithSeed does at the start.
func (s *Server) SetSeed(seed int64) { s.fake.SetSeed(seed) }

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
	s.fake.LoseNextAnswers(string(m), n)
}

// SetLostAnswerRate makes each successful call of m take effect and then
// answer UNAVAILABLE with probability rate (see LoseNextAnswers), drawn from
// the seeded random source. For AnyMethod it applies to methods that write
// only; a named method's rate wins. Rate 0 removes the setting. It panics on
// an unknown method or a rate outside [0, 1].
func (s *Server) SetLostAnswerRate(m Method, rate float64) {
	mustMethod("SetLostAnswerRate", m)
	mustRate("SetLostAnswerRate", rate)
	s.fake.SetLostAnswerRate(string(m), rate)
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
	s.fake.SetLatency(string(m), d)
}

// SetRetryInfo makes every injected error (FailNext, SetFailureRate,
// SetOutage, lost answers) carry a google.rpc.RetryInfo detail whose
// RetryDelay is d, as Google APIs do to tell the client how long to wait
// before it retries. d == 0 removes the detail. It panics on a negative d.
func (s *Server) SetRetryInfo(d time.Duration) {
	mustDuration("SetRetryInfo", d)
	s.fake.SetRetryInfo(d)
}

// ConcurrentWriteNext makes another writer change the policy just before each
// of the next n SetIamPolicy calls of m (a SetIamPolicy method, or AnyMethod
// for all of them; also MethodUpdatePolicy and MethodDeletePolicy, for deny
// policies): the policy is rewritten unchanged, so its etag moves, and
// a write that carries the etag it read is refused as IAM refuses it, with
// ABORTED (409) and IAM's concurrent-change message (see SetStaleEtagCode).
// This is the race IAM's read-modify-write guidance is about: a rerun of the
// whole read-modify-write reads the new etag and succeeds, a replay of the
// write alone fails again. n == 0 does nothing. It panics on a method that is
// not one of those or a negative n.
func (s *Server) ConcurrentWriteNext(m Method, n int) {
	mustSetIamPolicy("ConcurrentWriteNext", m)
	mustCount("ConcurrentWriteNext", n)
	s.fake.ConcurrentWriteNext(string(m), n)
}

// SetStaleEtagCode sets the code a SetIamPolicy with a stale etag is answered
// with: ABORTED by default, as IAM answers; FAILED_PRECONDITION imitates the
// services that answer a stale etag that way. It panics on code OK.
func (s *Server) SetStaleEtagCode(code codes.Code) {
	mustFailCode("SetStaleEtagCode", code)
	s.fake.SetStaleEtagCode(code)
}

// ResetFaults removes every fault setting: scripts, failure and lost-answer
// rates and scripts, latency, outages, RetryInfo, pending concurrent writes
// and the stale-etag code. The random source, the propagation settings, the
// call log and the stored data are kept.
func (s *Server) ResetFaults() {
	s.fake.ResetFaults()
	s.fake.SetStaleEtagCode(codes.Aborted)
}
