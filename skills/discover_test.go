package skills

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// skillFile returns a valid SKILL.md for name.
func skillFile(name, description string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + description + "\n---\nReview " + name + ".\n")}
}

// reviewSkillFile returns a valid SKILL.md for name that declares itself a
// review skill, as an agent directory's skill must to run.
func reviewSkillFile(name, description string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: " + description +
		"\nmetadata:\n  author: someone\n  warden: review\n---\nReview " + name + ".\n")}
}

// sources returns "NAME SOURCE" for each skill, in order.
func sources(ss []*Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+" "+s.Source)
	}
	return out
}

// skip is a Skipped with one problem.
func skip(name, file string, reason SkipReason, line int, msg string) Skipped {
	return Skipped{Name: name, File: file, Reason: reason, Problems: Problems{{file, line, msg}}}
}

const (
	msgNotReview       = "not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)"
	msgNoFrontNoReview = "not a review skill: no frontmatter, so nothing declares it one (metadata.warden: review)"
)

func TestDiscover(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills/go-ctx/SKILL.md":          skillFile("go-ctx", "Contexts."),
		".warden/skills/go-ctx/reference.md":      {Data: []byte("not a skill: only SKILL.md in a folder is read")},
		".warden/skills/sql.md":                   skillFile("sql", "SQL."),
		".warden/skills/README.md":                {Data: []byte("# Our skills\n")},
		".warden/skills/.DS_Store":                {Data: []byte{0, 1, 2}},
		".warden/skills/notes.txt":                {Data: []byte("ignored")},
		".warden/skills/odd.md":                   {Data: []byte("---\nname: odd\ndescription: d\nseverity: high\n---\nBody\n")},
		".agents/skills/api/SKILL.md":             reviewSkillFile("api", "API."),
		".agents/skills/sql/SKILL.md":             reviewSkillFile("sql", "Shadowed SQL."),
		".agents/skills/broken.md":                {Data: []byte("no frontmatter\n")},
		".agents/skills/empty/keep":               {Data: []byte("")},
		".agents/skills/lower/skill.md":           reviewSkillFile("lower", "Lower case file name."),
		".claude/skills/code-review/SKILL.md":     reviewSkillFile("code-review", "Overrides the built-in."),
		".claude/skills/go-ctx.md":                reviewSkillFile("go-ctx", "Shadowed again."),
		".claude/skills/mismatch/SKILL.md":        reviewSkillFile("other", "Copy-pasted."),
		".claude/skills/pdf-processing/SKILL.md":  {Data: []byte("---\nname: pdf-processing\ndescription: Fills PDF forms.\nallowed-tools: Bash(python:*)\n---\nRun scripts/fill.py.\n")},
		".claude/skills/Bad_Name/SKILL.md":        {Data: []byte("---\nname: Bad_Name\ndescription: A Claude skill with a name warden would refuse.\n---\nBody\n")},
		".claude/skills/broken/SKILL.md":          {Data: []byte("---\nname: Broken\ndescription: d\nmetadata: {warden: review}\n---\nBody\n")},
		"skills/elsewhere/SKILL.md":               skillFile("elsewhere", "Not under a discovery directory."),
		".github/skills/also-elsewhere/SKILL.md":  skillFile("also-elsewhere", "Not under a discovery directory."),
		".warden/skills/go-ctx/nested/x/SKILL.md": skillFile("x", "Nested too deep."),
	}
	got := Discover(fsys)
	wantSkills := []string{
		"api .agents/skills/api/SKILL.md",
		"code-review .claude/skills/code-review/SKILL.md",
		"go-ctx .warden/skills/go-ctx/SKILL.md",
		"odd .warden/skills/odd.md",
		"sql .warden/skills/sql.md",
	}
	if diff := cmp.Diff(wantSkills, sources(got.Skills)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	wantSkipped := []Skipped{
		skip("broken", ".agents/skills/broken.md", SkipNotReview, 0, msgNoFrontNoReview),
		skip("lower", ".agents/skills/lower/skill.md", SkipBroken, 0, "the file must be named SKILL.md, in capitals, to be read as a skill"),
		skip("sql", ".agents/skills/sql/SKILL.md", SkipDuplicate, 2, `duplicate skill "sql": .warden/skills/sql.md defines it too, and the first one found wins`),
		skip("Bad_Name", ".claude/skills/Bad_Name/SKILL.md", SkipNotReview, 0, msgNotReview),
		skip("broken", ".claude/skills/broken/SKILL.md", SkipBroken, 2, `name "Broken" must be lower-case letters, digits and single hyphens between them (like code-review)`),
		skip("go-ctx", ".claude/skills/go-ctx.md", SkipDuplicate, 2, `duplicate skill "go-ctx": .warden/skills/go-ctx/SKILL.md defines it too, and the first one found wins`),
		skip("mismatch", ".claude/skills/mismatch/SKILL.md", SkipBroken, 2, `name "other" does not match its folder "mismatch": rename one so they agree`),
		skip("pdf-processing", ".claude/skills/pdf-processing/SKILL.md", SkipNotReview, 0, msgNotReview),
	}
	if diff := cmp.Diff(wantSkipped, got.Skipped); diff != "" {
		t.Errorf("Discover() skipped mismatch (-want +got):\n%s", diff)
	}
	wantWarnings := Problems{{".warden/skills/odd.md", 4, `unknown key "severity", ignored: warden reads name, description, paths, ignore and metadata's key warden (the other keys of Agent Skills and Claude Code are ignored without a warning)`}}
	if diff := cmp.Diff(wantWarnings, got.Warnings); diff != "" {
		t.Errorf("Discover() warnings mismatch (-want +got):\n%s", diff)
	}
	want := &Skill{Name: "go-ctx", Description: "Contexts.", Instructions: "Review go-ctx.", Source: ".warden/skills/go-ctx/SKILL.md"}
	if diff := cmp.Diff(want, got.Skills[2]); diff != "" {
		t.Errorf("Discover() go-ctx mismatch (-want +got):\n%s", diff)
	}
	if !got.Skills[0].Review || got.Skills[2].Review {
		t.Errorf("Discover() Review = %v (api), %v (go-ctx), want true, false", got.Skills[0].Review, got.Skills[2].Review)
	}
}

func TestSkippedSummary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Skipped
		want Problem
	}{
		{skip("a", "a.md", SkipBroken, 3, "bad"), Problem{"a.md", 3, "bad"}},
		{skip("a", "a.md", SkipNotReview, 0, "not a review skill"), Problem{"a.md", 0, "not a review skill"}},
		{Skipped{File: "a.md", Reason: SkipBroken, Problems: Problems{{"a.md", 1, "one"}, {"a.md", 2, "two"}}}, Problem{"a.md", 1, "one (and 1 more problem)"}},
		{Skipped{File: "a.md", Reason: SkipBroken, Problems: Problems{{"a.md", 1, "one"}, {"a.md", 2, "two"}, {"a.md", 3, "three"}}}, Problem{"a.md", 1, "one (and 2 more problems)"}},
		{Skipped{File: "a.md", Reason: SkipUnreadable}, Problem{"a.md", 0, "unreadable"}},
		{Skipped{Reason: SkipBroken, Problems: Problems{{"", 0, "no skill found here"}}}, Problem{"", 0, "no skill found here"}},
	}
	for _, tt := range tests {
		if got := tt.in.Summary(); got != tt.want {
			t.Errorf("%+v.Summary() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	if got, want := skip("a", "a.md", SkipBroken, 3, "bad").String(), "a.md:3: broken: bad"; got != want {
		t.Errorf("Skipped.String() = %q, want %q", got, want)
	}
	if got, want := skip("a", "a.md", SkipNotReview, 0, "not a review skill").String(), "a.md: not a review skill"; got != want {
		t.Errorf("Skipped.String() = %q, want %q", got, want)
	}
}

// TestDiscoverReviewDeclaration: in an agent directory only metadata.warden:
// review makes a skill a review skill; any other value is a warning in
// warden's own directory and no declaration in an agent's.
func TestDiscoverReviewDeclaration(t *testing.T) {
	t.Parallel()
	file := func(name, meta string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("---\nname: " + name + "\ndescription: d\n" + meta + "---\nBody\n")}
	}
	fsys := fstest.MapFS{
		".claude/skills/flow/SKILL.md":   file("flow", "metadata: {warden: review}\n"),
		".claude/skills/block/SKILL.md":  file("block", "metadata:\n  warden: \"review\"\n"),
		".claude/skills/yes/SKILL.md":    file("yes", "metadata:\n  warden: yes\n"),
		".claude/skills/list/SKILL.md":   file("list", "metadata: [warden, review]\n"),
		".claude/skills/top/SKILL.md":    file("top", "warden: review\n"),
		".warden/skills/other/SKILL.md":  file("other", "metadata:\n  warden: 1\n"),
		".agents/skills/broken/SKILL.md": {Data: []byte("---\nname: broken\ndescription: a: b\nmetadata: {warden: review}\n---\nBody\n")},
	}
	got := Discover(fsys)
	if diff := cmp.Diff([]string{"block .claude/skills/block/SKILL.md", "flow .claude/skills/flow/SKILL.md", "other .warden/skills/other/SKILL.md"}, sources(got.Skills)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	var skipped []string
	for _, s := range got.Skipped {
		skipped = append(skipped, string(s.Reason)+" "+s.File)
	}
	want := []string{
		"broken .agents/skills/broken/SKILL.md", // the YAML does not say whether it is one
		"not_review .claude/skills/list/SKILL.md",
		"not_review .claude/skills/top/SKILL.md",
		"not_review .claude/skills/yes/SKILL.md",
	}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("Discover() skipped mismatch (-want +got):\n%s", diff)
	}
	wantWarnings := Problems{{".warden/skills/other/SKILL.md", 5, `metadata.warden is the number 1, ignored: "review" is the one value warden reads (it makes the skill a review skill)`}}
	if diff := cmp.Diff(wantWarnings, got.Warnings); diff != "" {
		t.Errorf("Discover() warnings mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverFolderBeforeFile(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills/a.md":       skillFile("a", "File."),
		".warden/skills/a/SKILL.md": skillFile("a", "Folder."),
	}
	got := Discover(fsys)
	if diff := cmp.Diff([]string{"a .warden/skills/a/SKILL.md"}, sources(got.Skills)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	want := []Skipped{skip("a", ".warden/skills/a.md", SkipDuplicate, 2, `duplicate skill "a": .warden/skills/a/SKILL.md defines it too, and the first one found wins`)}
	if diff := cmp.Diff(want, got.Skipped); diff != "" {
		t.Errorf("Discover() skipped mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		fsys fs.FS
	}{
		{"empty", fstest.MapFS{}},
		{"other files", fstest.MapFS{"main.go": {Data: []byte("package main")}}},
		{"empty discovery directory", fstest.MapFS{".warden/skills": {Mode: fs.ModeDir}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Discover(tt.fsys)
			if len(got.Skills) != 0 || len(got.Skipped) != 0 || len(got.Warnings) != 0 {
				t.Errorf("Discover(%s) = %+v, want nothing", tt.name, got)
			}
		})
	}
}

func TestDiscoverNotADirectory(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills":             {Data: []byte("a file")},
		".claude/skills/ok/SKILL.md": reviewSkillFile("ok", "OK."),
	}
	got := Discover(fsys)
	if diff := cmp.Diff([]string{"ok .claude/skills/ok/SKILL.md"}, sources(got.Skills)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	want := []Skipped{{File: ".warden/skills", Reason: SkipUnreadable, Problems: Problems{{".warden/skills", 0, "is not a directory: skills live in NAME/SKILL.md or NAME.md under it"}}}}
	if diff := cmp.Diff(want, got.Skipped); diff != "" {
		t.Errorf("Discover() skipped mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverNil(t *testing.T) {
	t.Parallel()
	got := Discover(nil)
	if len(got.Skills) != 0 || len(got.Skipped) != 1 {
		t.Errorf("Discover(nil) = %+v, want one skipped entry", got)
	}
}

// TestDiscoverDirFS runs Discover on a real directory, with a skill folder
// that is a symbolic link to one shared with another tool, a dangling link,
// and a file too large to be a skill.
func TestDiscoverDirFS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".agents/skills/shared/SKILL.md", "---\r\nname: shared\r\ndescription: Shared.\r\nmetadata:\r\n  warden: review\r\n---\r\nBody\r\n")
	write(".warden/skills/big.md", "---\nname: big\ndescription: d\n---\n"+string(make([]byte, maxFileSize)))
	if err := os.MkdirAll(filepath.Join(root, ".claude", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join("..", "..", ".agents", "skills", "shared"), filepath.Join(root, ".claude", "skills", "linked")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	if err := os.Symlink("nowhere", filepath.Join(root, ".claude", "skills", "dangling")); err != nil {
		t.Fatal(err)
	}

	got := Discover(os.DirFS(root))
	if diff := cmp.Diff([]string{"shared .agents/skills/shared/SKILL.md"}, sources(got.Skills)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	want := []Skipped{
		skip("big", ".warden/skills/big.md", SkipBroken, 0, "file is larger than 262144 bytes, too large for a skill"),
		skip("dangling", ".claude/skills/dangling", SkipUnreadable, 0, "cannot read: no such file or directory"),
		skip("linked", ".claude/skills/linked/SKILL.md", SkipBroken, 2, `name "shared" does not match its folder "linked": rename one so they agree`),
	}
	if diff := cmp.Diff(want, got.Skipped); diff != "" {
		t.Errorf("Discover() skipped mismatch (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	noSkill := func(where string) []Skipped {
		return []Skipped{{Reason: SkipBroken, Problems: Problems{{"", 0, "no skill found " + where}}}}
	}
	tests := []struct {
		name    string
		fsys    fstest.MapFS
		rel     string
		skills  []string
		skipped []Skipped
	}{
		{
			name: "plain folder",
			fsys: fstest.MapFS{
				"go-ctx/SKILL.md": skillFile("go-ctx", "Contexts."),
				"sql.md":          skillFile("sql", "SQL."),
				"README.md":       {Data: []byte("# About\n")},
				"bad.md":          {Data: []byte("---\nname: bad\n---\nBody\n")},
			},
			skills: []string{"go-ctx go-ctx/SKILL.md", "sql sql.md"},
			skipped: []Skipped{
				skip("bad", "bad.md", SkipBroken, 1, "frontmatter has no description: add description: followed by one line saying what the skill reviews"),
			},
		},
		{
			name: "repository root",
			fsys: fstest.MapFS{
				".claude/skills/a/SKILL.md":   reviewSkillFile("a", "A."),
				".claude/skills/pdf/SKILL.md": skillFile("pdf", "Not a review skill."),
				".warden/skills/b.md":         skillFile("b", "B."),
				"top.md":                      {Data: []byte("not a skill, and not read: the discovery directories are")},
			},
			rel:     ".",
			skills:  []string{"a .claude/skills/a/SKILL.md", "b .warden/skills/b.md"},
			skipped: []Skipped{skip("pdf", ".claude/skills/pdf/SKILL.md", SkipNotReview, 0, msgNotReview)},
		},
		{
			name: "one skill's folder",
			fsys: fstest.MapFS{
				"SKILL.md":     skillFile("any-name", "The folder's own name is not known."),
				"reference.md": {Data: []byte("supporting material, not a skill")},
			},
			skills: []string{"any-name SKILL.md"},
		},
		{
			name:    "one agent skill's folder",
			fsys:    fstest.MapFS{"SKILL.md": skillFile("pdf", "Not a review skill.")},
			rel:     ".claude/skills/pdf",
			skipped: []Skipped{skip("", "SKILL.md", SkipNotReview, 0, msgNotReview)},
		},
		{
			name: "an agent directory",
			fsys: fstest.MapFS{
				"pdf/SKILL.md": skillFile("pdf", "Not a review skill."),
				"sec/SKILL.md": reviewSkillFile("sec", "A review skill."),
			},
			rel:     ".agents/skills",
			skills:  []string{"sec sec/SKILL.md"},
			skipped: []Skipped{skip("pdf", "pdf/SKILL.md", SkipNotReview, 0, msgNotReview)},
		},
		{
			name:    "empty folder",
			fsys:    fstest.MapFS{},
			skipped: noSkill("here: expected NAME/SKILL.md or NAME.md files, or a repository root with .warden/skills, .agents/skills, .claude/skills"),
		},
		{
			name:    "folder of other files",
			fsys:    fstest.MapFS{"main.go": {Data: []byte("package main")}, "README.md": {Data: []byte("# x")}},
			skipped: noSkill("here: expected NAME/SKILL.md or NAME.md files, or a repository root with .warden/skills, .agents/skills, .claude/skills"),
		},
		{
			name:    "empty discovery directory",
			fsys:    fstest.MapFS{".agents/skills": {Mode: fs.ModeDir}, "x.md": skillFile("x", "Not read.")},
			skipped: noSkill("in .warden/skills, .agents/skills, .claude/skills"),
		},
		{
			// A repository root without a discovery directory: its own
			// Markdown files are not broken skills.
			name: "git repository root without skill directories",
			fsys: fstest.MapFS{
				".git/HEAD":       {Data: []byte("ref: refs/heads/main\n")},
				"CONDUCT.md":      {Data: []byte("# Code of conduct\n")},
				"SECURITY.md":     {Data: []byte("# Security policy\n")},
				"CONTRIBUTING.md": {Data: []byte("# Contributing\n")},
				"main.go":         {Data: []byte("package main")},
			},
			skipped: noSkill("in this repository: expected .warden/skills, .agents/skills, .claude/skills, or NAME/SKILL.md folders at its root"),
		},
		{
			name: "repository of skill folders",
			fsys: fstest.MapFS{
				".git":            {Mode: fs.ModeDir},
				"review/SKILL.md": skillFile("review", "Review."),
				"SECURITY.md":     {Data: []byte("# Security policy\n")},
			},
			skills: []string{"review review/SKILL.md"},
		},
		{
			name:    "only failures",
			fsys:    fstest.MapFS{"x.md": {Data: []byte("x")}},
			skipped: []Skipped{skip("x", "x.md", SkipBroken, 1, msgNoFrontmatter)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Validate(tt.fsys, tt.rel)
			if diff := cmp.Diff(tt.skills, sources(got.Skills)); diff != "" {
				t.Errorf("Validate(%s) skills mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.skipped, got.Skipped); diff != "" {
				t.Errorf("Validate(%s) skipped mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestValidateDirFS(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "a", "SKILL.md"), []byte("---\nname: a\ndescription: A.\n---\nBody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := Validate(os.DirFS(root), "")
	if diff := cmp.Diff([]string{"a a/SKILL.md"}, sources(got.Skills)); diff != "" || len(got.Skipped) != 0 {
		t.Errorf("Validate(%s) = %v, %+v, want one skill and nothing skipped", root, sources(got.Skills), got.Skipped)
	}
}
