package github

import (
	"fmt"
	"io"
	"strconv"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// MaxStepAnnotations is GitHub Actions' cap per step and per kind: "10
// warning annotations and 10 error annotations per step" and "50
// annotations per job" (actions/toolkit#734, docs/problem-matchers.md). The
// same cap is assumed for notices.
const MaxStepAnnotations = 10

// WriteAnnotations writes findings at or above reportOn (all when
// SeverityNone) as workflow-command annotations (::error for critical and
// high, ::warning for medium and low, ::notice for info), most severe first,
// at most MaxStepAnnotations of each kind. It is the fallback when the token
// cannot write (fork pull requests). When findings are dropped for the cap,
// the last notice slot says so, so the cap never hides findings silently.
// Model text cannot inject commands: go-githubactions escapes newlines and
// property separators; mentions, markup and links are defanged
// (report.Defang, no link trusted: the writer has no repository address). Write errors stop the output; written counts what
// was written.
func WriteAnnotations(w io.Writer, findings []review.Finding, reportOn review.Severity) (written, dropped int) {
	var shown []review.Finding
	for _, f := range findings {
		if f.Severity.ShownAt(reportOn) {
			shown = append(shown, f)
		}
	}
	perKind := map[string]int{}
	var keep []*githubactions.Command
	for _, f := range sortedForReview(shown) {
		kind := report.LevelOf(f.Severity).Command()
		if perKind[kind] >= MaxStepAnnotations {
			dropped++
			continue
		}
		perKind[kind]++
		keep = append(keep, workflowCommand(kind, f))
	}
	if dropped > 0 && perKind["notice"] >= MaxStepAnnotations {
		// Free the last notice slot for the note.
		for i := len(keep) - 1; i >= 0; i-- {
			if keep[i].Name == "notice" {
				keep = append(keep[:i], keep[i+1:]...)
				dropped++
				break
			}
		}
	}
	if dropped > 0 {
		keep = append(keep, &githubactions.Command{
			Name:       "notice",
			Properties: githubactions.CommandProperties{"title": "warden: annotations capped"},
			Message: fmt.Sprintf("%d more %s not annotated: GitHub Actions shows at most %d errors, %d warnings and %d notices per step. Every finding is in the job summary and the JSON report.",
				dropped, review.Plural(dropped, "finding is", "findings are"), MaxStepAnnotations, MaxStepAnnotations, MaxStepAnnotations),
		})
	}
	for _, cmd := range keep {
		if _, err := io.WriteString(w, cmd.String()+"\n"); err != nil {
			break
		}
		if cmd.Properties["title"] != "warden: annotations capped" {
			written++
		}
	}
	return written, dropped
}

func workflowCommand(kind string, f review.Finding) *githubactions.Command {
	props := githubactions.CommandProperties{
		"title": clipBytes(fmt.Sprintf("[%s] %s", f.Severity, report.OneLine(report.Defang(f.Title, "")))+approximate(f), maxAnnotationTitle, "…"),
	}
	if p := normPath(f.Path); p != "" {
		props["file"] = p
		if s, e := lines(f); s > 0 {
			props["line"] = strconv.Itoa(s)
			props["endLine"] = strconv.Itoa(e)
		}
	}
	msg := report.Defang(f.Description, "")
	if msg == "" {
		msg = report.OneLine(report.Defang(f.Title, ""))
	}
	return &githubactions.Command{Name: kind, Properties: props, Message: clipBytes(msg, 4096, "…")}
}
