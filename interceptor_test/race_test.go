//go:build race

package interceptor_test

// raceEnabled reports whether this test binary has the race detector: the
// go commands the tests run build with the same setting, so that they share
// the build cache of the test binary's own packages instead of compiling
// the whole graph a second time.
const raceEnabled = true
