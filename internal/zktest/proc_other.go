//go:build !linux

package zktest

import (
	"os"
	"syscall"
)

var sigterm os.Signal = syscall.SIGTERM

// sysProcAttr: only Linux has a parent-death signal, so elsewhere a test
// binary that dies without its cleanups leaves its servers running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
