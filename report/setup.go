package report

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/org/warden/review"
)

// What the review was set up with besides the change: the repository's
// instructions its requests carried, and the skill files it did not run.
// Every format says both (the JSON report has them as fields).

// maxSkillLines bounds the skipped skills and warnings listed one a line in
// the text and Markdown reports; the JSON report lists every one.
const maxSkillLines = 20

// instrRefs are the 1-based numbers, in r.Instructions.Sources, of the
// instructions item it carries ("1,3"; "2(cut)" for one sent in part); "-"
// for none.
func instrRefs(r *review.Report, it review.Item) string {
	var nums []int
	cut := map[int]bool{}
	for _, s := range it.Instructions {
		name, isCut := strings.CutSuffix(s, " (cut)")
		if i := slices.IndexFunc(r.Instructions.Sources, func(src review.InstructionSource) bool { return src.Source == name }); i >= 0 {
			nums = append(nums, i+1)
			cut[i+1] = isCut
		}
	}
	slices.Sort(nums)
	refs := make([]string, len(nums))
	for i, n := range nums {
		refs[i] = strconv.Itoa(n)
		if cut[n] {
			refs[i] += "(cut)"
		}
	}
	return dash(strings.Join(refs, ","))
}

// hasInstructions reports whether the report's items may carry
// instructions, so that the plan shows a column for them.
func hasInstructions(r *review.Report) bool {
	return r.Instructions != nil && len(r.Instructions.Sources) > 0
}

// itemsOf is "2 of 4" items.
func itemsOf(n, of int) string { return strconv.Itoa(n) + " of " + strconv.Itoa(of) }

// instructionsNote says what became of a source: cut in some items, left
// out of others.
func instructionsNote(s review.InstructionSource) string {
	var parts []string
	if s.Cut > 0 {
		parts = append(parts, "cut to fit in "+review.Counted(s.Cut, "item", "items"))
	}
	if s.LeftOut > 0 {
		parts = append(parts, "no room in "+review.Counted(s.LeftOut, "item", "items"))
	}
	return strings.Join(parts, "; ")
}

// textInstructions lists, under the dry run's plan, the repository's
// instructions: where they were read, each source numbered as the plan's
// INSTR column names it, what it is for and how many items carry it, and
// the files found and not used.
func textInstructions(buf *bytes.Buffer, r *review.Report, p palette) {
	in := r.Instructions
	if in == nil {
		return
	}
	buf.WriteString("\n" + p.paint(sgrBold, "Repository instructions") + ": " + OneLine(in.Describe()) + "\n")
	if len(in.Sources) == 0 && in.Mode != review.InstructionsOff && in.NotRead == "" {
		buf.WriteString("  none found\n")
	}
	if len(in.Sources) > 0 {
		tw := tabwriter.NewWriter(buf, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  #\tSOURCE\tFOR\tCHARS\tITEMS")
		for i, s := range in.Sources {
			items := itemsOf(s.Items, len(r.Items))
			if note := instructionsNote(s); note != "" {
				items += " (" + note + ")"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", i+1, cell(s.Source), cell(s.AppliesTo), review.Count(s.Chars), items)
		}
		tw.Flush()
	}
	for _, n := range in.Notes {
		buf.WriteString("  " + OneLine(n) + "\n")
	}
}

// textInstructionsLine is the review's one line on the instructions its
// requests carried; "" when none were configured or sent.
func textInstructionsLine(r *review.Report) string {
	names := sentInstructions(r)
	if len(names) == 0 {
		return ""
	}
	return "Repository instructions, " + OneLine(r.Instructions.Describe()) + ": " + strings.Join(names, ", ")
}

// sentInstructions are the instructions the requests carried, each with
// the count of items: "AGENTS.md (3 items)".
func sentInstructions(r *review.Report) []string {
	if r.Instructions == nil {
		return nil
	}
	var out []string
	for _, s := range r.Instructions.Sources {
		if s.Items > 0 {
			out = append(out, fmt.Sprintf("%s (%s)", OneLine(s.Source), review.Counted(s.Items, "item", "items")))
		}
	}
	return out
}

// notReviewSkills splits the skipped skills into the agents' skills that
// are not review skills (listed by name on one line: a repository may have
// many) and the rest (one a line).
func notReviewSkills(r *review.Report) (names []string, rest []review.SkippedSkill) {
	for _, s := range r.SkippedSkills {
		if s.Reason == "not_review" {
			names = append(names, cmp.Or(s.Skill, s.File))
			continue
		}
		rest = append(rest, s)
	}
	return names, rest
}

// skippedLine is one skipped skill: "FILE:LINE: broken: message".
func skippedLine(s review.SkippedSkill) string {
	msg := s.Message
	if s.Reason == "broken" {
		msg = "broken: " + msg
	}
	return locOf(s.File, s.Line) + ": " + msg
}

// locOf is "file:line", or "file" without a line.
func locOf(file string, line int) string {
	if line > 0 {
		return file + ":" + strconv.Itoa(line)
	}
	return file
}

// notReviewPhrase introduces the n agents' skills that are not review
// skills.
func notReviewPhrase(n int) string {
	return review.Counted(n, "agent skill", "agent skills") + pick(n, " that is not a review skill", " that are not review skills") +
		" (no metadata.warden: review in the frontmatter)"
}

// textSkillNotes says which skill files the review did not run, and the
// warnings about the skills it ran.
func textSkillNotes(buf *bytes.Buffer, r *review.Report, p palette) {
	names, rest := notReviewSkills(r)
	if len(r.SkippedSkills) > 0 {
		buf.WriteString("\n" + p.paint(sgrBoldYel, "Skills not run ("+strconv.Itoa(len(r.SkippedSkills))+")") + "\n")
		for i, s := range rest {
			if i == maxSkillLines {
				fmt.Fprintf(buf, "  … and %d more (--format json lists every one)\n", len(rest)-i)
				break
			}
			buf.WriteString("  " + OneLine(skippedLine(s)) + "\n")
		}
		if len(names) > 0 {
			buf.WriteString("  " + notReviewPhrase(len(names)) + ": " + OneLine(strings.Join(names, ", ")) + "\n")
		}
	}
	if len(r.SkillWarnings) > 0 {
		buf.WriteString("\n" + p.paint(sgrBoldYel, "Skill warnings ("+strconv.Itoa(len(r.SkillWarnings))+")") + "\n")
		for i, w := range r.SkillWarnings {
			if i == maxSkillLines {
				fmt.Fprintf(buf, "  … and %d more (--format json lists every one)\n", len(r.SkillWarnings)-i)
				break
			}
			buf.WriteString("  " + OneLine(locOf(w.File, w.Line)+": "+w.Message) + "\n")
		}
	}
}

// mdInstructions is the dry run's section on the repository's
// instructions, numbered as the plan's Instr. column names them.
func mdInstructions(r *review.Report) string {
	in := r.Instructions
	if in == nil {
		return ""
	}
	var b strings.Builder
	desc := OneLine(in.Describe())
	desc = strings.ToUpper(desc[:1]) + desc[1:] + "."
	if len(in.Sources) == 0 && in.Mode != review.InstructionsOff && in.NotRead == "" {
		desc += " None found."
	}
	b.WriteString("### Repository instructions\n\n" + mdEscape(desc) + "\n\n")
	if len(in.Sources) > 0 {
		b.WriteString("| # | Source | For | Characters | Items |\n| ---: | --- | --- | ---: | --- |\n")
		for i, s := range in.Sources {
			items := itemsOf(s.Items, len(r.Items))
			if note := instructionsNote(s); note != "" {
				items += " (" + note + ")"
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n", i+1, mdCode(clip(s.Source, mdMaxCell), true), mdCell(s.AppliesTo), review.Count(s.Chars), items)
		}
		b.WriteString("\n")
	}
	for _, n := range in.Notes {
		b.WriteString("- " + mdEscape(OneLine(n)) + "\n")
	}
	if len(in.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// mdSkillNotes says which skill files the review did not run, and the
// warnings about the skills it ran.
func mdSkillNotes(r *review.Report) string {
	if len(r.SkippedSkills) == 0 && len(r.SkillWarnings) == 0 {
		return ""
	}
	var b strings.Builder
	names, rest := notReviewSkills(r)
	if len(r.SkippedSkills) > 0 {
		fmt.Fprintf(&b, "### Skills not run (%d)\n\n", len(r.SkippedSkills))
		for i, s := range rest {
			if i == maxSkillLines {
				fmt.Fprintf(&b, "- _… and %d more; `--format json` lists every one_\n", len(rest)-i)
				break
			}
			msg := strings.TrimPrefix(skippedLine(s), locOf(s.File, s.Line)+": ")
			b.WriteString("- " + mdCode(locOf(s.File, s.Line), false) + ": " + mdEscape(OneLine(msg)) + "\n")
		}
		if len(names) > 0 {
			codes := make([]string, len(names))
			for i, n := range names {
				codes[i] = mdCode(n, false)
			}
			b.WriteString("- " + mdEscape(notReviewPhrase(len(names))) + ": " + strings.Join(codes, ", ") + "\n")
		}
		b.WriteString("\n")
	}
	if len(r.SkillWarnings) > 0 {
		fmt.Fprintf(&b, "### Skill warnings (%d)\n\n", len(r.SkillWarnings))
	}
	for i, w := range r.SkillWarnings {
		if i == maxSkillLines {
			fmt.Fprintf(&b, "- _… and %d more; `--format json` lists every one_\n", len(r.SkillWarnings)-i)
			break
		}
		b.WriteString("- " + mdCode(locOf(w.File, w.Line), false) + ": " + mdEscape(OneLine(w.Message)) + "\n")
	}
	if len(r.SkillWarnings) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}

// mdInstructionsLine is the review's one line on the instructions its
// requests carried, for the folded operators' section.
func mdInstructionsLine(r *review.Report) string {
	names := sentInstructions(r)
	if len(names) == 0 {
		return ""
	}
	return "**Repository instructions** (" + mdEscape(OneLine(r.Instructions.Describe())) + "): " + mdEscape(strings.Join(names, ", ")) + "\n\n"
}

// sarifSkillNotifications are the skill files the review did not run and
// the warnings about the skills it ran, as SARIF tool configuration
// notifications (SARIF 2.1.0 §3.20.22: problems with the tool's
// configuration, as opposed to its execution).
func sarifSkillNotifications(r *review.Report) []sarifNotification {
	var out []sarifNotification
	note := func(level, file string, line int, msg string) {
		n := sarifNotification{Level: level, Message: sarifText{Text: sarifMessage(msg)}}
		if file != "" {
			n.Locations = []sarifLocation{sarifLocationOf(file, line, line)}
		}
		out = append(out, n)
	}
	for _, s := range r.SkippedSkills {
		note("warning", s.File, s.Line, "Skill not run: "+OneLine(skippedLine(s)))
	}
	for _, w := range r.SkillWarnings {
		note("note", w.File, w.Line, "Skill warning: "+OneLine(locOf(w.File, w.Line)+": "+w.Message))
	}
	return out
}

// textSetupNotes are the text report's lines on the review's setup: in a
// dry run the instructions (after the plan) and the skills not run; in a
// review the skills not run and one line on the instructions sent.
func textSetupNotes(buf *bytes.Buffer, r *review.Report, p palette) {
	if r.Outcome == review.OutcomeDryRun {
		textInstructions(buf, r, p)
		textSkillNotes(buf, r, p)
		return
	}
	textSkillNotes(buf, r, p)
	if l := textInstructionsLine(r); l != "" {
		buf.WriteString("\n" + l + "\n")
	}
}
