// Package report renders a finished *review.Report for people and machines:
// a terminal summary (text), the JSON contract of DESIGN.md §5 (json), a
// GitHub job summary or pull-request comment (markdown), and SARIF 2.1.0 for
// GitHub code scanning (sarif).
//
// Every format states the outcome first and never lets a work item that was
// not reviewed look clean: failed and skipped items are listed with their
// reason and route, and an incomplete review is marked as such in SARIF too.
// Text that came from a model or from the diff (titles, descriptions,
// suggestions, paths) is treated as untrusted: control characters are
// removed from terminal output and Markdown is escaped so that it cannot
// open HTML, links or code fences.
//
// The package only reads the report; it never mutates it. It depends on
// review's vocabulary and the standard library. It must not import
// cmd/warden, execution, hunks, skills, go-openai or go-github; posting to
// GitHub (check runs, reviews, annotations) belongs to report/github.
package report
