package report

import (
	"fmt"
	"strings"

	"github.com/org/warden/review"
)

// withheldLines say what the review kept from the models: the files that
// are secrets by name (ignored "secret:<kind>"), the places where a secret
// was replaced by a placeholder, and how many secrets are findings. None
// when nothing was withheld. Each names paths and rules, never a secret.
func withheldLines(r *review.Report) []string {
	var files []string
	for _, ig := range r.Ignored {
		if kind, ok := strings.CutPrefix(ig.Reason, "secret:"); ok {
			if ig.From != "" {
				kind += ", by its name before the rename, " + ig.From
			}
			files = append(files, fmt.Sprintf("%s (%s)", OneLine(ig.Path), OneLine(kind)))
		}
	}
	var places []string
	for _, x := range r.Redacted {
		where := "the pull request's text"
		if x.Path != "" {
			where = textLoc(x.Path, x.StartLine, x.EndLine)
		}
		places = append(places, fmt.Sprintf("%s (%s, %s)", where, OneLine(x.Rule), OneLine(x.Where)))
	}
	found := 0
	for _, f := range r.Findings {
		if f.Skill == review.SecretsSkill {
			found++
		}
	}
	var out []string
	if len(files) > 0 {
		out = append(out, fmt.Sprintf("%s never sent to a model, secrets by %s: %s",
			review.Counted(len(files), "file", "files"), pick(len(files), "its name", "their names"), joinClipped(files, 10)))
	}
	if len(places) > 0 {
		out = append(out, fmt.Sprintf("%s replaced by a placeholder in the requests: %s",
			review.Counted(len(places), "secret", "secrets"), joinClipped(places, 10)))
	}
	if found > 0 {
		out = append(out, fmt.Sprintf("%s in the change %s reported as %s of skill %s, made without a model call",
			review.Counted(found, "secret", "secrets"), pick(found, "is", "are"), pick(found, "a finding", "findings"), review.SecretsSkill))
	}
	return out
}

// joinClipped joins the first n of xs, and counts the rest.
func joinClipped(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + fmt.Sprintf(" and %d more (the JSON report lists them)", len(xs)-n)
}
