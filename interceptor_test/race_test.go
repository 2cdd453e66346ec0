//go:build race

package interceptor_test

// raceBuild: the race detector is on; sync.Pool then drops items at random,
// so allocation counts over a real connection are not the contract's.
const raceBuild = true
