package main

import "syscall"

// sysProcAttr puts a process the tests start in its own process group (a
// terminal's ^C goes to the test binary, whose cleanups stop it) and has
// the kernel SIGKILL it if the test binary dies without its cleanups.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
