package agileredis_test

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server if the test binary dies
// first (a panic, a timeout), so no redis-server outlives a run.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
