package ollama

import "syscall"

// procAttr puts the server in its own process group and has the kernel
// send it SIGTERM when the test process dies, however it dies (a test
// binary's timeout panic, a kill): on SIGTERM the server stops its runners
// and exits, so no server or runner outlives the tests.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
