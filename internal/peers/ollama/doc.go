// Package ollama is the real-inference-server tier of warden's tests: it
// builds nothing and downloads nothing, but runs a real ollama (v0.6.5,
// built by .ci/run into a cache outside the repository) on a loopback port
// with a tiny llama model it writes itself (WriteTinyModel: random weights
// from a fixed seed, a byte-level vocabulary), and sends warden's real
// requests to it through execution/openai, the execution engine and
// review.Run.
//
// The tests find the binary through WARDEN_OLLAMA_BIN (default
// $HOME/.cache/warden-peers/bin/ollama). Without it they skip, unless
// CI=true or WARDEN_REAL_PEERS=1, where they fail: CI must not pass
// silently without its peer.
//
// No server outlives the test process that started it, however that
// process ends: on Linux the kernel sends each server SIGTERM when it dies
// (on which the server stops its runners and exits), and TestMain stops
// every server shortly before go test's -timeout panic, which runs no
// deferred call (TestServerDiesWithTestProcess checks the first).
//
// Its non-test files (the GGUF writer and the server harness) import only
// the standard library; its tests may import execution, execution/openai,
// review, hunks and skills. It must not import cmd/warden, report, go-openai
// or go-github.
package ollama
