package demo

import "syscall"

// childProcAttr puts the manager in its own process group, so that a
// Ctrl-C in the terminal reaches only `kuota demo`, which then stops the
// manager in order; and asks Linux to send it SIGTERM if `kuota demo` dies
// without cleaning up.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
