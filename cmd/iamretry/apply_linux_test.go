//go:build linux

package main

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd's process get SIGKILL when the test process dies
// (a test binary killed by its -timeout runs no cleanups), so no fake-server
// outlives the tests.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
