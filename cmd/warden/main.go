// Command warden reviews code changes with AI review skills, bounded in time
// and honest about what it did not review.
//
// It is the only package that touches the process: the environment,
// configuration files, signals, the logger and exit codes live here, and it
// wires the library packages together; the command line's grammar (commands,
// flags, help) is package cli's. Every other package takes values.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
