// Package report renders a finished *review.Report for people and machines:
// a terminal summary (text), the JSON contract of DESIGN.md §5 (json), the
// GitHub check-run summary that the job summary mirrors (markdown), and SARIF
// 2.1.0 for GitHub code scanning (sarif).
//
// The Markdown summary follows issue 4: the outcome in one line (Headline),
// what an incomplete outcome means, coverage per skill, the work that failed
// or was skipped grouped by reason with files and line ranges, the routes
// with every fallback named, budget and tokens, the ignored paths, then the
// findings; the diagnoses (review.Diagnose) follow the outcome. The text
// format names fallbacks and diagnoses too: a fallback is never silent. It stays under GitHub's 65,535-byte limit by cutting the ignored
// paths, then the file lists, then the least severe findings, and says what
// it cut. Choosing a check run's title and conclusion is report/github's.
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
