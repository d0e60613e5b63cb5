package zktest

import "syscall"

const sigterm = syscall.SIGTERM

// sysProcAttr puts the server in its own process group (a terminal's ^C
// reaches the test binary, which stops it) and has the kernel SIGKILL it
// if the test binary dies without its cleanups (a panic, a timeout).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
