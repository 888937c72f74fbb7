//go:build !linux

package demo

import "syscall"

// childProcAttr: outside Linux the manager stays in the demo's process
// group and gets the terminal's signals itself.
func childProcAttr() *syscall.SysProcAttr { return nil }
