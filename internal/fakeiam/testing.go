package fakeiam

// testingTB is the part of testing.TB that startTest uses; *testing.T and *testing.B
// satisfy it.
type testingTB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// startTest is New plus StartBufconn for tests: it fails tb if the in-memory
// listener cannot start and registers Close with tb.Cleanup.
func startTest(tb testingTB, opts ...Option) *Server {
	tb.Helper()
	s := New(opts...)
	tb.Cleanup(s.Close)
	if err := s.StartBufconn(); err != nil {
		tb.Fatalf("fakeiam: %v", err)
	}
	return s
}
