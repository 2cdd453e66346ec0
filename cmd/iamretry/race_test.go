//go:build race

package main

// raceBuild: the tests run with the race detector, so the binary they
// build for the apply tests is built with it too.
const raceBuild = true
