package iamtest

import "time"

// SetPropagationDelay makes every service account created from now on (and
// those still propagating) invisible for d on the fake's clock: its
// GetServiceAccount, and GetIamPolicy, SetIamPolicy and TestIamPermissions
// through the admin API, answer NOT_FOUND (or, in turn, the codes
// SetPropagationCodes gives: real IAM also answers PERMISSION_DENIED while it
// hides an account), and a SetIamPolicy of another resource that grants the
// account a role answers INVALID_ARGUMENT "Service account X does not
// exist.". This imitates IAM's eventual
// consistency: Google's documentation says that after you create a service
// account you might need to wait 60 seconds or more before you use it.
// d == 0 turns it off. It panics on a negative d.
func (s *Server) SetPropagationDelay(d time.Duration) {
	mustDuration("SetPropagationDelay", d)
	s.cfgMu.Lock()
	s.cfg.propDelay = d
	s.cfgMu.Unlock()
}

// SetPropagationReads makes every service account created from now on answer
// NOT_FOUND to its first n reads (the reads SetPropagationDelay names),
// counted per account: eventual consistency measured in calls rather than
// time, for tests that use no clock. When a delay and a count are both set,
// an account is hidden while either holds. n == 0 turns it off. It panics on
// a negative n.
func (s *Server) SetPropagationReads(n int) {
	mustCount("SetPropagationReads", n)
	s.cfgMu.Lock()
	s.cfg.propReads = n
	s.cfgMu.Unlock()
}
