// Command testsummary reads `go test -json` on standard input and writes
// what `go test` writes (an ok line per package, the whole output of a
// package that failed), then what plain `go test` never says: how many
// tests passed, failed and were skipped, why each group was skipped, and
// for the real-peer tiers (internal/peers/...) how to run them. It is the
// README's test command:
//
//	go test -race -timeout 20m -json ./... | go run ./internal/testsummary
//
// It exits 1 when a test or a build failed, or when standard input held no
// test result at all (go test did not run); else 0. A skipped test is not
// a failure: plain `go test ./...` still passes without the peers.
//
// It is a tool of this repository's development; it imports nothing of
// warden.
package main

import (
	"fmt"
	"os"
)

func main() {
	ok, err := summarize(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testsummary: %v\n", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}
