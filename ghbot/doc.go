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
//   - The review state (state.go, moved here from report/github, which
//     renders reports: this is read back by the next run, not by people):
//     what head the last review covered and whether it was complete,
//     hidden in its check run's summary.
//   - Commands on a fork's pull request (commands.go): the unprivileged
//     run's record of a review-thread command, and what the privileged
//     follow-up reads back: the comment id, everything else from GitHub.
//   - The findings comment (ledger.go): the findings that could not be
//     inline comments, in one conversation comment every run edits, with
//     ids that /warden dismiss names; never posted again elsewhere.
//   - The Resume review button (button.go): on an incomplete review's
//     check run when a press can start a workflow, and the press's event.
//
// Everything it says to GitHub goes through report/github's Client (its
// transport, retries, write budget and redaction). It imports review,
// report and report/github; it must not import action, cmd/warden,
// execution or go-openai, and never reads the environment.
package ghbot
