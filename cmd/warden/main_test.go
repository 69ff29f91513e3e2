package main

import (
	"os"
	"os/exec"
	"testing"
)

// asWarden is the variable that makes the test binary warden itself:
// TestMain then runs main() on its arguments, with the real process
// (environment, standard streams, signals, exit code), for tests that must
// see warden as a user's shell does (the SDK reading OTEL_* from the
// environment, help examples run by bash).
const asWarden = "WARDEN_TEST_AS_WARDEN"

func TestMain(m *testing.M) {
	if os.Getenv(asWarden) == "1" {
		main() // exits
	}
	os.Exit(m.Run())
}

// wardenProcess is a command that runs warden (this test binary as warden)
// with args in dir, and exactly the environment env (plus asWarden).
func wardenProcess(dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(env, asWarden+"=1")
	return cmd
}
