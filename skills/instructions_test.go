package skills

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

// text is a MapFile holding s.
func text(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }

// link is a MapFile that is a symbolic link to target.
func link(target string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
}

func TestLoadInstructions(t *testing.T) {
	t.Parallel()
	repo := fstest.MapFS{
		"AGENTS.md":                       text("\uFEFFRoot agents guide.\r\nSecond line.\r\n"),
		"CLAUDE.md":                       link("AGENTS.md"),
		"api/AGENTS.md":                   text("API guide."),
		"api/v1/CLAUDE.md":                text("@../AGENTS.md\n@docs/style.md\n"),
		"web/AGENTS.md":                   text("Not read: no path under review is in web/."),
		"lib/CLAUDE.md":                   text("Lib guide, in CLAUDE.md only."),
		"docs/review.md":                  text("Review guide from a file."),
		"api/empty/AGENTS.md":             text("  \n\n"),
		".github/copilot-instructions.md": text("Copilot guide."),
		".github/instructions/go.instructions.md":         text("---\napplyTo: \"**/*.go, !**/*_test.go\"\ndescription: Go\n---\nGo guide.\n"),
		".github/instructions/ts.instructions.md":         text("---\napplyTo: '**/*.{ts,tsx}'\nexcludeAgent: \"code-review\"\n---\nFor the coding agent only.\n"),
		".github/instructions/none.instructions.md":       text("No frontmatter, so for no file.\n"),
		".github/instructions/nested/sql.instructions.md": text("---\napplyTo: \"db/**\"\n---\nSQL guide.\n"),
		".github/instructions/README.md":                  text("Not an instructions file."),
	}
	src := InstructionSources{
		Repo: repo, RepoName: "HEAD (abc1234)", Files: true,
		Paths: []string{"api/v1/handler.go", "api/x.go", "lib/z.go", "README.md"},
		Entries: []InstructionEntry{
			{Key: "instructions[0]", Where: "warden.toml:3: instructions[0]", Paths: []string{"api/**"}, Text: "  Check the tenant.\n"},
			{Key: "instructions[1]", Where: "warden.toml:7: instructions[1]", File: "docs/review.md"},
		},
	}
	got, notes, err := LoadInstructions(src)
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ Name, AppliesTo, Text string }
	var rows []row
	for _, in := range got {
		rows = append(rows, row{in.Name(), in.AppliesTo(), in.Text})
	}
	want := []row{
		{"warden.toml instructions[0]", "api/**", "Check the tenant."},
		{"docs/review.md (warden.toml instructions[1])", "every file", "Review guide from a file."},
		{".github/instructions/go.instructions.md", "**/*.go, !**/*_test.go", "Go guide."},
		{".github/instructions/nested/sql.instructions.md", "db/**", "SQL guide."},
		{"api/AGENTS.md", "files under api/", "API guide."},
		{"lib/CLAUDE.md", "files under lib/", "Lib guide, in CLAUDE.md only."},
		{"AGENTS.md (= CLAUDE.md)", "every file", "Root agents guide.\nSecond line."},
		{".github/copilot-instructions.md", "every file", "Copilot guide."},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("LoadInstructions() mismatch (-want +got):\n%s", diff)
	}
	wantNotes := []string{
		".github/instructions/none.instructions.md: not used: no applyTo in its frontmatter, so it is for no file",
		".github/instructions/ts.instructions.md: not used: excludeAgent: code-review",
		"api/v1/CLAUDE.md: not used: it only imports other files (@../AGENTS.md), which warden does not follow",
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("LoadInstructions() notes mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadInstructionsOnlyEntries(t *testing.T) {
	t.Parallel()
	repo := fstest.MapFS{"AGENTS.md": text("Not read: Files is off.")}
	got, notes, err := LoadInstructions(InstructionSources{Repo: repo, Paths: []string{"a.go"},
		Entries: []InstructionEntry{{Key: "instructions[0]", Text: "Only this."}}})
	if err != nil || len(notes) != 0 || len(got) != 1 || got[0].Text != "Only this." {
		t.Errorf("LoadInstructions(entries only) = %+v, %q, %v, want the entry alone", got, notes, err)
	}
	// Without a tree: an entry with text still works.
	got, _, err = LoadInstructions(InstructionSources{Files: true, Entries: []InstructionEntry{{Key: "instructions[0]", Text: "T"}}})
	if err != nil || len(got) != 1 {
		t.Errorf("LoadInstructions(no tree) = %+v, %v, want the entry", got, err)
	}
}

func TestLoadInstructionsLinksAndLimits(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("é", maxInstructionBytes/2) + "tail"
	repo := fstest.MapFS{
		"AGENTS.md":     link("../outside/AGENTS.md"),
		"CLAUDE.md":     link("/etc/passwd"),
		"a/AGENTS.md":   link("../docs/guide.md"),
		"docs/guide.md": text("Linked guide."),
		"b/AGENTS.md":   text("caf\xe9"),
		"c/AGENTS.md":   text(big),
		"d/AGENTS.md":   link("missing.md"),
		"e/AGENTS.md":   {Mode: fs.ModeDir},
		"e/AGENTS.md/x": text("a directory named AGENTS.md"),
		"f/CLAUDE.md":   link("../a/AGENTS.md"),
	}
	got, notes, err := LoadInstructions(InstructionSources{Repo: repo, Files: true,
		Paths: []string{"a/x.go", "b/x.go", "c/x.go", "d/x.go", "e/x.go", "f/x.go"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range got {
		names = append(names, in.Source)
	}
	if diff := cmp.Diff([]string{"a/AGENTS.md", "c/AGENTS.md"}, names); diff != "" {
		t.Errorf("LoadInstructions() sources mismatch (-want +got):\n%s", diff)
	}
	if got[0].Text != "Linked guide." {
		t.Errorf("a/AGENTS.md = %q, want the linked file's text", got[0].Text)
	}
	if n := len(got[1].Text); n > maxInstructionBytes || !strings.HasPrefix(got[1].Text, "éé") || strings.HasSuffix(got[1].Text, "tail") {
		t.Errorf("c/AGENTS.md is %d bytes (valid UTF-8 %v), want it cut under %d", n, strings.ToValidUTF8(got[1].Text, "?") == got[1].Text, maxInstructionBytes)
	}
	wantNotes := []string{
		"b/AGENTS.md: not read: not UTF-8 text",
		"c/AGENTS.md: only its first 256 KiB are read",
		"d/AGENTS.md: not read: a symbolic link to missing.md: file does not exist",
		"e/AGENTS.md: not read: not a regular file",
		"f/CLAUDE.md: not read: a symbolic link to ../a/AGENTS.md, itself a link: not followed",
		"AGENTS.md: not read: a symbolic link to ../outside/AGENTS.md, outside the repository: not followed",
		"CLAUDE.md: not read: a symbolic link to /etc/passwd, outside the repository: not followed",
	}
	if diff := cmp.Diff(wantNotes, notes); diff != "" {
		t.Errorf("LoadInstructions() notes mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadInstructionsEntryErrors(t *testing.T) {
	t.Parallel()
	repo := fstest.MapFS{"bin.md": text("\xff\xfe"), "dir/x": text("x")}
	tests := []struct {
		name string
		repo fs.FS
		file string
		want string
	}{
		{"missing", repo, "docs/none.md", "warden.toml:4: instructions[0]: file docs/none.md is not in HEAD (abc1234) (instructions are read from there, not from the change: commit it first)"},
		{"not utf-8", repo, "bin.md", "warden.toml:4: instructions[0]: file bin.md is not UTF-8 text"},
		{"a directory", repo, "dir", "warden.toml:4: instructions[0]: file dir of HEAD (abc1234): not a regular file"},
		{"no tree", nil, "docs/none.md", "warden.toml:4: instructions[0]: file docs/none.md: no trusted revision to read it from (HEAD (abc1234))"},
		{"leaves the tree", repo, "../x.md", `warden.toml:4: instructions[0]: file ../x.md of HEAD (abc1234): "../x.md" is not a path inside the repository`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := LoadInstructions(InstructionSources{Repo: tt.repo, RepoName: "HEAD (abc1234)",
				Entries: []InstructionEntry{{Key: "instructions[0]", Where: "warden.toml:4: instructions[0]", File: tt.file}}})
			if err == nil || err.Error() != tt.want {
				t.Errorf("LoadInstructions(file %s) error = %v, want %s", tt.file, err, tt.want)
			}
		})
	}
}
