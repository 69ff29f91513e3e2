package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/org/warden/review"
)

// AddressedNote says where the text the review's requests carried
// addresses the AI reviewer (review.Report.Injections): "text addressed
// to the AI reviewer in the pull request's description and 1 changed
// line", or "" when nowhere. The headline of every format and the check
// run's title carry it, so that a review whose model obeyed an injection
// never reads as a clean one.
func AddressedNote(r *review.Report) string {
	if r == nil || len(r.Injections) == 0 {
		return ""
	}
	var title, body bool
	lines := 0
	for _, in := range r.Injections {
		switch {
		case in.Path != "":
			lines += max(in.EndLine, in.StartLine) - in.StartLine + 1
		case in.Where == "title":
			title = true
		default:
			body = true
		}
	}
	var parts []string
	switch {
	case title && body:
		parts = append(parts, "the pull request's title and description")
	case title:
		parts = append(parts, "the pull request's title")
	case body:
		parts = append(parts, "the pull request's description")
	}
	if lines > 0 {
		parts = append(parts, review.Counted(lines, "changed line", "changed lines"))
	}
	return "text addressed to the AI reviewer in " + strings.Join(parts, " and ")
}

// maxAddressed is how many places addressedLines lists.
const maxAddressed = 10

// addressedLines say where the text the review's requests carried
// addresses the AI reviewer, one place a line (the first maxAddressed,
// then how many more): where, what it does, the words; then what that
// means. None when nowhere.
func addressedLines(r *review.Report) []string {
	if len(r.Injections) == 0 {
		return nil
	}
	var places []string
	lines := 0
	for _, in := range r.Injections {
		where := "the pull request's " + OneLine(in.Where)
		if in.Path != "" {
			where = textLoc(in.Path, in.StartLine, in.EndLine)
			lines++
		}
		says := make([]string, len(in.Rules))
		for i, id := range in.Rules {
			says[i] = OneLine(review.RuleSays(id))
		}
		places = append(places, fmt.Sprintf("%s %s (“%s”)", where, strings.Join(says, ", "), OneLine(in.Text)))
	}
	out := slices.Clone(places[:min(len(places), maxAddressed)])
	if n := len(places) - maxAddressed; n > 0 {
		out = append(out, fmt.Sprintf("… and %s (the JSON report lists every one)", review.Counted(n, "more place", "more places")))
	}
	what := "The models may have obeyed it: whatever they found, this review is not a clean result."
	if lines > 0 {
		what += fmt.Sprintf(" Each changed line with such text is also a finding of skill %s (low), made without a model call.", review.InjectionSkill)
	}
	return append(out, what)
}
