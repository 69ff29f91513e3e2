//go:build !linux

package ollama

import "syscall"

// procAttr puts the server in its own process group. Only Linux has a
// parent-death signal: elsewhere the tests' own cleanup (TestMain's stop
// before the -timeout deadline) is all there is.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
