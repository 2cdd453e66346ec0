//go:build !race

package interceptor_test

// raceEnabled reports whether this test binary has the race detector (see
// race_test.go).
const raceEnabled = false
