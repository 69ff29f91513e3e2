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

// sources returns "NAME SOURCE" for each skill, in order.
func sources(ss []*Skill) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+" "+s.Source)
	}
	return out
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills/go-ctx/SKILL.md":          skillFile("go-ctx", "Contexts."),
		".warden/skills/go-ctx/reference.md":      {Data: []byte("not a skill: only SKILL.md in a folder is read")},
		".warden/skills/sql.md":                   skillFile("sql", "SQL."),
		".warden/skills/README.md":                {Data: []byte("# Our skills\n")},
		".warden/skills/.DS_Store":                {Data: []byte{0, 1, 2}},
		".warden/skills/notes.txt":                {Data: []byte("ignored")},
		".agents/skills/api/SKILL.md":             skillFile("api", "API."),
		".agents/skills/sql/SKILL.md":             skillFile("sql", "Shadowed SQL."),
		".agents/skills/broken.md":                {Data: []byte("no frontmatter\n")},
		".agents/skills/empty/keep":               {Data: []byte("")},
		".agents/skills/lower/skill.md":           skillFile("lower", "Lower case file name."),
		".claude/skills/code-review/SKILL.md":     skillFile("code-review", "Overrides the built-in."),
		".claude/skills/go-ctx.md":                skillFile("go-ctx", "Shadowed again."),
		".claude/skills/mismatch/SKILL.md":        skillFile("other", "Copy-pasted."),
		"skills/elsewhere/SKILL.md":               skillFile("elsewhere", "Not under a discovery directory."),
		".github/skills/also-elsewhere/SKILL.md":  skillFile("also-elsewhere", "Not under a discovery directory."),
		".warden/skills/go-ctx/nested/x/SKILL.md": skillFile("x", "Nested too deep."),
	}
	got, problems := Discover(fsys)
	wantSkills := []string{
		"api .agents/skills/api/SKILL.md",
		"code-review .claude/skills/code-review/SKILL.md",
		"go-ctx .warden/skills/go-ctx/SKILL.md",
		"sql .warden/skills/sql.md",
	}
	if diff := cmp.Diff(wantSkills, sources(got)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	wantProblems := Problems{
		{".agents/skills/broken.md", 1, msgNoFrontmatter},
		{".agents/skills/lower/skill.md", 0, "the file must be named SKILL.md, in capitals, to be read as a skill"},
		{".agents/skills/sql/SKILL.md", 2, `duplicate skill "sql": .warden/skills/sql.md defines it too, and the first one found wins`},
		{".claude/skills/go-ctx.md", 2, `duplicate skill "go-ctx": .warden/skills/go-ctx/SKILL.md defines it too, and the first one found wins`},
		{".claude/skills/mismatch/SKILL.md", 2, `name "other" does not match its folder "mismatch": rename one so they agree`},
	}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("Discover() problems mismatch (-want +got):\n%s", diff)
	}
	want := &Skill{Name: "go-ctx", Description: "Contexts.", Instructions: "Review go-ctx.", Source: ".warden/skills/go-ctx/SKILL.md"}
	if diff := cmp.Diff(want, got[2]); diff != "" {
		t.Errorf("Discover() go-ctx mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverFolderBeforeFile(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills/a.md":       skillFile("a", "File."),
		".warden/skills/a/SKILL.md": skillFile("a", "Folder."),
	}
	got, problems := Discover(fsys)
	if diff := cmp.Diff([]string{"a .warden/skills/a/SKILL.md"}, sources(got)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	wantProblems := Problems{{".warden/skills/a.md", 2, `duplicate skill "a": .warden/skills/a/SKILL.md defines it too, and the first one found wins`}}
	if diff := cmp.Diff(wantProblems, problems); diff != "" {
		t.Errorf("Discover() problems mismatch (-want +got):\n%s", diff)
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
			got, problems := Discover(tt.fsys)
			if len(got) != 0 || len(problems) != 0 {
				t.Errorf("Discover(%s) = %v, %v, want nothing", tt.name, got, problems)
			}
		})
	}
}

func TestDiscoverNotADirectory(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills":             {Data: []byte("a file")},
		".claude/skills/ok/SKILL.md": skillFile("ok", "OK."),
	}
	got, problems := Discover(fsys)
	if diff := cmp.Diff([]string{"ok .claude/skills/ok/SKILL.md"}, sources(got)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	want := Problems{{".warden/skills", 0, "is not a directory: skills live in NAME/SKILL.md or NAME.md under it"}}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("Discover() problems mismatch (-want +got):\n%s", diff)
	}
}

func TestDiscoverNil(t *testing.T) {
	t.Parallel()
	got, problems := Discover(nil)
	if len(got) != 0 || len(problems) != 1 {
		t.Errorf("Discover(nil) = %v, %v, want one problem", got, problems)
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
	write(".agents/skills/shared/SKILL.md", "---\r\nname: shared\r\ndescription: Shared.\r\n---\r\nBody\r\n")
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

	got, problems := Discover(os.DirFS(root))
	if diff := cmp.Diff([]string{"shared .agents/skills/shared/SKILL.md"}, sources(got)); diff != "" {
		t.Errorf("Discover() skills mismatch (-want +got):\n%s", diff)
	}
	want := Problems{
		{".warden/skills/big.md", 0, "file is larger than 262144 bytes, too large for a skill"},
		{".claude/skills/dangling", 0, "cannot read: no such file or directory"},
		{".claude/skills/linked/SKILL.md", 2, `name "shared" does not match its folder "linked": rename one so they agree`},
	}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("Discover() problems mismatch (-want +got):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		skills   []string
		problems Problems
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
			problems: Problems{
				{"bad.md", 1, "frontmatter has no description: add description: followed by one line saying what the skill reviews"},
			},
		},
		{
			name: "repository root",
			fsys: fstest.MapFS{
				".claude/skills/a/SKILL.md": skillFile("a", "A."),
				".warden/skills/b.md":       skillFile("b", "B."),
				"top.md":                    {Data: []byte("not a skill, and not read: the discovery directories are")},
			},
			skills: []string{"a .claude/skills/a/SKILL.md", "b .warden/skills/b.md"},
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
			name:     "empty folder",
			fsys:     fstest.MapFS{},
			problems: Problems{{"", 0, "no skill found here: expected NAME/SKILL.md or NAME.md files, or a repository root with .warden/skills, .agents/skills, .claude/skills"}},
		},
		{
			name:     "folder of other files",
			fsys:     fstest.MapFS{"main.go": {Data: []byte("package main")}, "README.md": {Data: []byte("# x")}},
			problems: Problems{{"", 0, "no skill found here: expected NAME/SKILL.md or NAME.md files, or a repository root with .warden/skills, .agents/skills, .claude/skills"}},
		},
		{
			name:     "empty discovery directory",
			fsys:     fstest.MapFS{".agents/skills": {Mode: fs.ModeDir}, "x.md": skillFile("x", "Not read.")},
			problems: Problems{{"", 0, "no skill found in .warden/skills, .agents/skills, .claude/skills"}},
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
			problems: Problems{{"", 0, "no skill found in this repository: expected .warden/skills, .agents/skills, .claude/skills, or NAME/SKILL.md folders at its root"}},
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
			name:     "only failures",
			fsys:     fstest.MapFS{"x.md": {Data: []byte("x")}},
			problems: Problems{{"x.md", 1, msgNoFrontmatter}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, problems := Validate(tt.fsys)
			if diff := cmp.Diff(tt.skills, sources(got)); diff != "" {
				t.Errorf("Validate(%s) skills mismatch (-want +got):\n%s", tt.name, diff)
			}
			if diff := cmp.Diff(tt.problems, problems); diff != "" {
				t.Errorf("Validate(%s) problems mismatch (-want +got):\n%s", tt.name, diff)
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
	got, problems := Validate(os.DirFS(root))
	if diff := cmp.Diff([]string{"a a/SKILL.md"}, sources(got)); diff != "" || len(problems) != 0 {
		t.Errorf("Validate(%s) = %v, %v, want one skill and no problem", root, sources(got), problems)
	}
}

func TestProblemsBlocking(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		".warden/skills/good/SKILL.md":  skillFile("good", "Good."),
		".warden/skills/bad/SKILL.md":   {Data: []byte("---\nname: bad\n---\n")},
		".agents/skills/worse.md":       {Data: []byte("no frontmatter")},
		".claude/skills/lower/skill.md": skillFile("lower", "Lower."),
		".claude/skills/dangling":       {Data: []byte("x"), Mode: fs.ModeSymlink},
	}
	_, problems := Discover(fsys)
	var skillsOf []string
	for _, p := range problems {
		skillsOf = append(skillsOf, p.File+" "+p.Skill())
	}
	tests := []struct {
		names []string
		want  []string // the files of the blocking problems
	}{
		{names: nil, want: []string{".warden/skills/bad/SKILL.md", ".warden/skills/bad/SKILL.md", ".agents/skills/worse.md",
			".claude/skills/dangling", ".claude/skills/lower/skill.md"}},
		{names: []string{"good"}, want: nil},
		{names: []string{"good", "worse"}, want: []string{".agents/skills/worse.md"}},
		{names: []string{"lower"}, want: []string{".claude/skills/lower/skill.md"}},
		{names: []string{"dangling"}, want: []string{".claude/skills/dangling"}},
	}
	for _, tt := range tests {
		var got []string
		for _, p := range problems.Blocking(tt.names) {
			got = append(got, p.File)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Blocking(%q) mismatch (-want +got):\n%s\nproblems: %q", tt.names, diff, skillsOf)
		}
	}
	dir := Problems{{File: ".warden/skills", Message: "cannot read: permission denied"}}
	if got := dir.Blocking([]string{"good"}); len(got) != 1 {
		t.Errorf("Blocking(good) of a directory problem = %v, want it kept (it may hide the skill)", got)
	}
}
