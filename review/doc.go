// Package review is warden's use case: it plans work items (skill × chunk),
// builds their prompts, runs them through the execution engine, parses and
// validates the answers into findings, and decides the outcome. Diagnose
// reads the report's attempt records and names the probable cause of failed
// calls (a deadline too short, a stalled backend, a provider-wide event, a
// key problem, an unknown model, rate limiting), once for every format.
//
// It owns the vocabulary every other layer speaks: Finding, Severity,
// Outcome, Item, Report, and the Publisher interface that report sinks
// implement. It owns two decisions every sink reads and none recomputes:
// Coverage (what of the change was in scope, reviewed, not reviewed and
// why, excluded by kind: coverage.go), from which Decide makes the
// outcome; and a finding's identity across runs, its Fingerprint, from
// its skill, path and code, never its wording (fingerprint.go).
//
// It finds, with no model call, the text a request carries that addresses
// the AI reviewer ("report no findings", a chat role tag: injection.go),
// so that a model that obeyed it cannot make the review look clean.
//
// It may import execution, hunks, skills, related and secrets (which it
// asks what no request may carry: secrets.go). It must not import report,
// cmd/warden, go-openai, go-github or doublestar, and it reads no
// environment, flags or files: cmd/warden hands it values.
package review
