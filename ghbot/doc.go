// Package ghbot is warden's bot as a GitHub service: what it keeps on
// GitHub between the events of a pull request's life, and how it reads it
// back under GitHub's access rules.
//
//   - The results store (store.go): each run's finished answers travel as a
//     workflow artifact, which the REST API shows across refs and
//     workflows, unlike the Actions cache, whose scoping keeps a pull
//     request's entries from the issue_comment and pull_request_target
//     runs that resume it. Before anything of an artifact is used, the run
//     that made it is read back: a run that executed a fork's workflow
//     file never feeds a privileged run.
//   - The review state (state.go): what head the last review covered and
//     whether it was complete, hidden in its check run's summary.
//
// Everything it says to GitHub goes through report/github's Client (its
// transport, retries, write budget and redaction). It imports review and
// report/github; it must not import action, cmd/warden, execution or
// go-openai, and never reads the environment.
package ghbot
