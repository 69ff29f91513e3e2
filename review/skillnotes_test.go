package review

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// agentRepo has an agent's skill that is not a reviewer (a PDF helper), a
// declared review skill, a broken one, a broken override of a built-in
// and a skill with a key warden does not read.
func agentRepo() fstest.MapFS {
	return fstest.MapFS{
		".claude/skills/pdf-processing/SKILL.md":  {Data: []byte("---\nname: pdf-processing\ndescription: Fills PDF forms.\nallowed-tools: Bash(python:*)\n---\nRun scripts/fill.py on the form.\n")},
		".claude/skills/sql-review/SKILL.md":      {Data: []byte("---\nname: sql-review\ndescription: SQL.\nmetadata:\n  warden: review\n---\nReport string-built SQL.\n")},
		".claude/skills/broken/SKILL.md":          {Data: []byte("---\nname: Broken\ndescription: d\nmetadata: {warden: review}\n---\nBody\n")},
		".warden/skills/security-review/SKILL.md": {Data: []byte("---\nname: security-review\n---\nOur own security rules.\n")},
		".warden/skills/odd/SKILL.md":             {Data: []byte("---\nname: odd\ndescription: d\nseverity: high\n---\nBody\n")},
	}
}

func TestChooseSkillsSkipsWhatIsNotAReviewer(t *testing.T) {
	t.Parallel()
	chosen, found, err := chooseSkills(agentRepo(), nil, nil)
	if err != nil {
		t.Fatalf("chooseSkills(every skill) error = %v, want the review to run", err)
	}
	var names []string
	for _, s := range chosen {
		names = append(names, s.Name+" "+s.Source)
	}
	want := []string{"code-review builtin", "odd .warden/skills/odd/SKILL.md", "security-review builtin", "sql-review .claude/skills/sql-review/SKILL.md"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("chosen skills mismatch (-want +got):\n%s", diff)
	}
	skipped, warnings := skillNotes(found)
	wantSkipped := []SkippedSkill{
		{Skill: "security-review", File: ".warden/skills/security-review/SKILL.md", Line: 1, Reason: "broken",
			Message: "frontmatter has no description: add description: followed by one line saying what the skill reviews; the built-in security-review runs instead"},
		{Skill: "broken", File: ".claude/skills/broken/SKILL.md", Line: 2, Reason: "broken",
			Message: `name "Broken" must be lower-case letters, digits and single hyphens between them (like code-review)`},
		{Skill: "pdf-processing", File: ".claude/skills/pdf-processing/SKILL.md", Reason: "not_review",
			Message: "not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)"},
	}
	if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
		t.Errorf("skipped mismatch (-want +got):\n%s", diff)
	}
	if len(warnings) != 1 || warnings[0].File != ".warden/skills/odd/SKILL.md" || warnings[0].Line != 4 || !strings.HasPrefix(warnings[0].Message, `unknown key "severity", ignored`) {
		t.Errorf("warnings = %+v, want the unknown key of odd", warnings)
	}
}

// TestChooseSkillsByName: a skill asked for by name that discovery skipped
// is an error naming its file and why; others asked for run, whatever is
// broken elsewhere.
func TestChooseSkillsByName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		names      []string
		configured []SkillSetting
		wantErr    string
		want       []string
	}{
		{names: []string{"broken"}, wantErr: `skill "broken" cannot run: .claude/skills/broken/SKILL.md:2: name "Broken" must be lower-case letters, digits and single hyphens between them (like code-review)`},
		{names: []string{"pdf-processing"}, wantErr: `skill "pdf-processing": .claude/skills/pdf-processing/SKILL.md is not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it)`},
		{names: []string{"security-review"}, wantErr: `skill "security-review" cannot run: .warden/skills/security-review/SKILL.md:1: frontmatter has no description`},
		{configured: []SkillSetting{{Name: "broken"}}, wantErr: `skill "broken" cannot run`},
		{names: []string{"sql-review", "code-review"}, want: []string{"sql-review", "code-review"}},
		{names: []string{"nope"}, wantErr: `unknown skill "nope"`},
	}
	for _, tt := range tests {
		chosen, _, err := chooseSkills(agentRepo(), tt.configured, tt.names)
		if tt.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("chooseSkills(%q, %v) error = %v, want %s…", tt.names, tt.configured, err, tt.wantErr)
			}
			continue
		}
		var got []string
		for _, s := range chosen {
			got = append(got, s.Name)
		}
		if err != nil || !cmp.Equal(tt.want, got) {
			t.Errorf("chooseSkills(%q) = %q, %v, want %q", tt.names, got, err, tt.want)
		}
	}
}

// TestChooseSkillsCompat: ChooseSkills (eval's entry) returns the skipped
// files and warnings as one problem each.
func TestChooseSkillsCompat(t *testing.T) {
	t.Parallel()
	_, unused, err := ChooseSkills(agentRepo(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, p := range unused {
		lines = append(lines, p.Error())
	}
	if len(lines) != 4 || !strings.HasPrefix(lines[1], ".claude/skills/broken/SKILL.md:2: skill skipped: name") ||
		!strings.HasPrefix(lines[3], `.warden/skills/odd/SKILL.md:4: unknown key "severity"`) {
		t.Errorf("ChooseSkills unused = %q", lines)
	}
}
