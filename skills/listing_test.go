package skills

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestWriteListAndValidation(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".claude/skills/pdf/SKILL.md":   skillFile("pdf", "Fills PDFs."),
		".claude/skills/sec/SKILL.md":   reviewSkillFile("sec", "Our security rules."),
		".warden/skills/bad.md":         {Data: []byte("---\nname: bad\n---\n")},
		".warden/skills/odd/SKILL.md":   {Data: []byte("---\nname: odd\ndescription: Odd.\ntags: [x]\n---\nBody\n")},
		".agents/skills/multi/SKILL.md": {Data: []byte("---\nname: multi\ndescription: |\n  Two\n  lines.\nmetadata: {warden: review}\n---\nBody\n")},
	}
	var out, warn strings.Builder
	if err := WriteList(&out, &warn, Discover(fsys)); err != nil {
		t.Fatal(err)
	}
	want := `NAME             SOURCE                         DESCRIPTION
code-review      builtin                        ` + line(Builtins()[0].Description) + `
multi            .agents/skills/multi/SKILL.md  Two lines.
odd              .warden/skills/odd/SKILL.md    Odd.
sec              .claude/skills/sec/SKILL.md    Our security rules.
security-review  builtin                        ` + line(Builtins()[1].Description) + `

Skipped (2), not run in reviews:
  .warden/skills/bad.md:1: broken: frontmatter has no description: add description: followed by one line saying what the skill reviews (and 1 more problem)
  .claude/skills/pdf/SKILL.md: not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)
`
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("WriteList mismatch (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(warn.String(), `warden: warning: .warden/skills/odd/SKILL.md:4: unknown key "tags", ignored`) {
		t.Errorf("WriteList warnings = %q", warn.String())
	}

	out.Reset()
	var errw strings.Builder
	if n := WriteValidation(&out, &errw, Validate(fsys, ".")); n != 1 {
		t.Errorf("WriteValidation broken = %d, want 1", n)
	}
	if got := errw.String(); !strings.Contains(got, ".warden/skills/bad.md:1: frontmatter has no description") || !strings.Contains(got, ".warden/skills/bad.md:3: no instructions") || strings.Contains(got, "pdf") {
		t.Errorf("WriteValidation problems = %q, want both of bad.md's and nothing of pdf", got)
	}
	if got := out.String(); !strings.Contains(got, ".claude/skills/pdf/SKILL.md: not a review skill") || strings.Contains(got, "valid") {
		t.Errorf("WriteValidation output = %q, want pdf skipped and no count while one is broken", got)
	}
}
