package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// setupCases are reports that carry what the review was set up with
// besides the change: the repository's instructions and the skill files it
// skipped (issue 23). They join the golden cases.
func setupCases() []reportCase {
	instructions := func() *review.InstructionsReport {
		return &review.InstructionsReport{Mode: review.InstructionsAuto, From: "HEAD (3b15d29)", MaxChars: 6000,
			Sources: []review.InstructionSource{
				{Source: "warden.toml instructions[0]", AppliesTo: "api/**", Chars: 56, Items: 2},
				{Source: "AGENTS.md (= CLAUDE.md)", AppliesTo: "every file", Chars: 7210, Items: 3, Cut: 1},
				{Source: "web/AGENTS.md", AppliesTo: "files under web/", Chars: 900, Items: 0, LeftOut: 1},
			},
			Notes: []string{"api/v1/CLAUDE.md: not used: it only imports other files (@../AGENTS.md), which warden does not follow"},
		}
	}
	skipped := func() []review.SkippedSkill {
		return []review.SkippedSkill{
			{Skill: "broken", File: ".claude/skills/broken/SKILL.md", Line: 2, Reason: "broken",
				Message: `name "<b>Broken</b> @admins" must be lower-case letters, digits and single hyphens between them (like code-review)`},
			{Skill: "pdf-processing", File: ".claude/skills/pdf-processing/SKILL.md", Reason: "not_review",
				Message: "not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)"},
			{Skill: "docx", File: ".agents/skills/docx/SKILL.md", Reason: "not_review",
				Message: "not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)"},
		}
	}
	warnings := func() []review.SkillWarning {
		return []review.SkillWarning{{File: ".warden/skills/odd/SKILL.md", Line: 4, Message: `unknown key "severity", ignored`}}
	}
	planned := func(skill, path string, start, end, prio int, instr ...string) review.Item {
		return review.Item{Skill: skill, Path: path, StartLine: start, EndLine: end, Priority: prio, Status: review.StatusPlanned,
			TimeoutEffectiveMS: 240000, Instructions: instr, InstructionsChars: 6000}
	}
	complete := reviewedItem("code-review", "api/handler.go", 1, 60, 4003)
	complete.Instructions, complete.InstructionsChars = []string{"AGENTS.md (= CLAUDE.md) (cut)", "warden.toml instructions[0]"}, 6000
	return []reportCase{
		{name: "dry_run_setup", report: &review.Report{
			Schema: review.Schema, Outcome: review.OutcomeDryRun, Summary: review.Summary{Planned: 3},
			Items: []review.Item{
				planned("code-review", "api/handler.go", 1, 60, 4003, "AGENTS.md (= CLAUDE.md) (cut)", "warden.toml instructions[0]"),
				planned("code-review", "web/page.ts", 3, 9, 4002, "AGENTS.md (= CLAUDE.md)"),
				planned("code-review", "api/util.go", 5, 8, 4001, "AGENTS.md (= CLAUDE.md)", "warden.toml instructions[0]"),
			},
			Ignored: []review.Ignored{}, Policy: testPolicy(),
			Instructions: instructions(), SkippedSkills: skipped(), SkillWarnings: warnings(),
		}},
		{name: "complete_setup", opts: Options{ToolVersion: "v0.3.0"}, report: &review.Report{
			Schema: review.Schema, Outcome: review.OutcomeComplete, Summary: review.Summary{Planned: 1, Reviewed: 1},
			Items: []review.Item{complete}, Ignored: []review.Ignored{}, Policy: testPolicy(), DurationMS: 3200,
			Instructions: instructions(), SkippedSkills: skipped(), SkillWarnings: warnings(),
		}},
	}
}

// TestSetupInEveryFormat: every format names the skills not run and why,
// and the dry run names the instructions per item and in all; Markdown
// keeps the repository's text inert.
func TestSetupInEveryFormat(t *testing.T) {
	t.Parallel()
	wants := map[Format][]string{
		FormatText: {
			"INSTR", "1,2(cut)", "Repository instructions: from HEAD (3b15d29), at most 6,000 characters a request",
			"2  AGENTS.md (= CLAUDE.md)      every file        7,210  3 of 3 (cut to fit in 1 item)",
			"3  web/AGENTS.md                files under web/  900    0 of 3 (no room in 1 item)",
			"  api/v1/CLAUDE.md: not used: it only imports", "Skills not run (3)", ".claude/skills/broken/SKILL.md:2: broken: name",
			"2 agent skills that are not review skills (no metadata.warden: review in the frontmatter): pdf-processing, docx",
			"Skill warnings (1)", `.warden/skills/odd/SKILL.md:4: unknown key "severity", ignored`,
		},
		FormatMarkdown: {
			"| Priority | Skill | Location | Timeout | Instr. | Why |", "| 1,2(cut) |", "### Repository instructions",
			"From HEAD (3b15d29), at most 6,000 characters a request.", "| 2 | `AGENTS.md (= CLAUDE.md)` | every file | 7,210 | 3 of 3 (cut to fit in 1 item) |",
			"### Skills not run (3)", "&lt;b&gt;Broken&lt;/b&gt; @&#8203;admins", "`pdf-processing`, `docx`", "### Skill warnings (1)",
		},
		FormatJSON:  {`"skipped_skills"`, `"reason": "not_review"`, `"skill_warnings"`, `"instructions": {`, `"applies_to": "api/**"`, `"instructions_chars": 6000`},
		FormatSARIF: {`"toolConfigurationNotifications"`, `Skill not run: .claude/skills/broken/SKILL.md:2: broken: name`, `"level": "warning"`, `Skill warning: .warden/skills/odd/SKILL.md:4`},
	}
	for _, tc := range setupCases()[:1] {
		for f, ws := range wants {
			var buf bytes.Buffer
			if err := Write(&buf, tc.report, f, tc.opts); err != nil {
				t.Fatal(err)
			}
			for _, w := range ws {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("%s %v lacks %q:\n%s", tc.name, f, w, buf.String())
				}
			}
			if f == FormatMarkdown && strings.Contains(buf.String(), "<b>") {
				t.Errorf("%s Markdown lets the repository's text open HTML", tc.name)
			}
		}
	}
	var buf bytes.Buffer
	if err := Write(&buf, setupCases()[1].report, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	if want := "Repository instructions, from HEAD (3b15d29), at most 6,000 characters a request: warden.toml instructions[0] (2 items), AGENTS.md (= CLAUDE.md) (3 items)"; !strings.Contains(buf.String(), want) {
		t.Errorf("a review's text report lacks %q:\n%s", want, buf.String())
	}
}

// The README's dry-run example of the instructions sits between these
// markers.
const (
	exampleBegin = "<!-- TestReadmeInstructionsExample: generated by `go test ./report -run TestReadmeInstructionsExample -update`; do not edit -->\n"
	exampleEnd   = "<!-- end of TestReadmeInstructionsExample -->\n"
)

// TestReadmeInstructionsExample: the README shows the dry run's plan and
// instructions exactly as the text report renders the dry_run_setup case;
// -update rewrites it.
func TestReadmeInstructionsExample(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Write(&buf, setupCases()[0].report, FormatText, Options{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	start, end := strings.Index(out, "Plan (priority order)"), strings.Index(out, "\nSkills not run")
	if start < 0 || end < start {
		t.Fatalf("the dry run has no plan or no skills section:\n%s", out)
	}
	example := "```\n" + strings.TrimRight(out[start:end], "\n") + "\n```\n"
	path := filepath.Join("..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(data, []byte(exampleBegin)), bytes.Index(data, []byte(exampleEnd))
	if i < 0 || j < i {
		t.Fatalf("README.md has no example between %q and %q", strings.TrimSpace(exampleBegin), strings.TrimSpace(exampleEnd))
	}
	got := string(data[i+len(exampleBegin) : j])
	if got == example {
		return
	}
	if *update {
		if err := os.WriteFile(path, slices.Concat(data[:i+len(exampleBegin)], []byte(example), data[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's instructions example is not the report's output; run go test ./report -run TestReadmeInstructionsExample -update\nREADME:\n%s\noutput:\n%s", got, example)
}
