// Package act is the real-Actions-runner tier of warden's tests: it runs
// the repository's own action.yml, unmodified, under nektos/act (v0.2.89,
// built by .ci/run into a cache outside the repository) in host mode
// (-P ubuntu-latest=-self-hosted: no Docker), against a loopback fake
// GitHub (internal/fakegithub) and a loopback OpenAI-compatible model, and
// checks what a real pull_request workflow run leaves behind: the check run
// on the head SHA, the review and its comments, the step's outcome and its
// outputs as later steps of the job see them, and that no secret reaches
// the log.
//
// The tests find act through WARDEN_ACT_BIN (default
// $HOME/.cache/warden-peers/bin/act). Without it they skip, unless CI=true
// or WARDEN_REAL_PEERS=1, where they fail: CI must not pass silently
// without its peer. The action's install step builds warden from the
// copied source with the go on the test's PATH, the machine's GOCACHE and
// GOMODCACHE, GOPROXY=off and GOTOOLCHAIN=local, so the run needs no
// network.
//
// The package has no non-test code but this comment; its tests import the
// standard library, yaml.v3 (the workflows' permissions) and the test
// support packages (internal/fakegithub, fakeopenai, testgit). It must not
// import warden's own packages: it tests the action from the outside.
package act
