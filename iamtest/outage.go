package iamtest

import "google.golang.org/grpc/codes"

// SetOutage makes every call of m (or every call, for AnyMethod) fail with
// code until ClearOutage, as during an outage of IAM or of one of its
// backends: typically UNAVAILABLE (503). An outage answers at once, before
// latency, scripts and rates, which it leaves untouched; the error is an
// injected one (it carries SetRetryInfo's detail). A named method's outage
// wins over the AnyMethod one. It panics on an unknown method or code OK.
func (s *Server) SetOutage(m Method, code codes.Code) {
	mustMethod("SetOutage", m)
	mustFailCode("SetOutage", code)
	s.fake.SetMethodOutage(string(m), code)
}

// ClearOutage ends the outage of m set by SetOutage (for AnyMethod, the
// outage of every method set with AnyMethod; named methods' outages stay).
// It panics on an unknown method.
func (s *Server) ClearOutage(m Method) {
	mustMethod("ClearOutage", m)
	s.fake.ClearMethodOutage(string(m))
}
