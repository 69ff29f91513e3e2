package skills

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// FuzzParse checks that Parse never panics, that it returns either a skill
// or problems, and that a skill it accepts has what every skill must have.
// It is seeded from testdata/*.md and the built-in skills.
func FuzzParse(f *testing.F) {
	seeds, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range seeds {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(filepath.Base(file), data)
	}
	err = fs.WalkDir(builtinFS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(builtinFS, p)
		if err != nil {
			return err
		}
		f.Add(strings.TrimPrefix(p, "builtin/"), data)
		return nil
	})
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, file string, data []byte) {
		s, err := Parse(file, data)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse(%q, %q) = %+v, %v, want a nil skill with an error", file, data, s, err)
			}
			ps, ok := err.(Problems)
			if !ok || len(ps) == 0 {
				t.Fatalf("Parse(%q, %q) error = %#v, want non-empty Problems", file, data, err)
			}
			for _, p := range ps {
				// parse turns a panic into a problem; here it is a failure.
				if strings.HasPrefix(p.Message, "internal error") {
					t.Fatalf("Parse(%q, %q) panicked: %v", file, data, p.Message)
				}
				if p.Message == "" || p.Line < 0 || p.File != file {
					t.Fatalf("Parse(%q, %q) problem = %#v, want a message, a line >= 0 and File %q", file, data, p, file)
				}
			}
			return
		}
		if s == nil {
			t.Fatalf("Parse(%q, %q) = nil, nil", file, data)
		}
		if s.Name == "" || s.Description == "" || strings.TrimSpace(s.Instructions) == "" {
			t.Fatalf("Parse(%q, %q) = %+v with no error, want a name, a description and instructions", file, data, s)
		}
		if !nameRE.MatchString(s.Name) || strings.Contains(s.Description, "\n") {
			t.Fatalf("Parse(%q, %q) = %+v with no error, want a valid name and a one-line description", file, data, s)
		}
		if !utf8.ValidString(s.Instructions) || s.Source != file {
			t.Fatalf("Parse(%q, %q) = %+v with no error, want UTF-8 instructions and Source %q", file, data, s, file)
		}
		for _, g := range append(s.Paths, s.Ignore...) {
			if g == "" {
				t.Fatalf("Parse(%q, %q) = %+v with no error, want no empty glob", file, data, s)
			}
		}
	})
}

// FuzzLoadInstructions checks that LoadInstructions never panics on any
// AGENTS.md or Copilot path-specific file, that what it returns is trimmed
// UTF-8 text within the read bound, and that a Copilot file it keeps has
// valid globs.
func FuzzLoadInstructions(f *testing.F) {
	f.Add([]byte("Wrap errors.\n"), []byte("---\napplyTo: \"**/*.go\"\n---\nNo panics.\n"))
	f.Add([]byte("@AGENTS.md\n"), []byte("---\napplyTo: '**/*.{ts,tsx}, !**/*.d.ts'\nexcludeAgent: coding-agent\n---\nTS.\n"))
	f.Add([]byte("\uFEFF\r\n# Title\r\n"), []byte("---\napplyTo: [a, b]\n---\nx\n"))
	f.Add([]byte("caf\xe9"), []byte("---\napplyTo: \"[\"\n---\nx\n"))
	f.Add([]byte(""), []byte("---\n---\n"))
	f.Fuzz(func(t *testing.T, agents, copilot []byte) {
		repo := fstest.MapFS{
			"AGENTS.md":                              {Data: agents},
			"sub/CLAUDE.md":                          {Data: agents},
			".github/instructions/x.instructions.md": {Data: copilot},
		}
		ins, _, err := LoadInstructions(InstructionSources{Repo: repo, Files: true, Paths: []string{"sub/a.go", "b.ts"}})
		if err != nil {
			t.Fatalf("LoadInstructions error %v: only an entry's file may fail", err)
		}
		for _, in := range ins {
			if in.Text == "" || in.Text != strings.TrimSpace(in.Text) || !utf8.ValidString(in.Text) || len(in.Text) > maxInstructionBytes {
				t.Fatalf("%s: text %q, want trimmed non-empty UTF-8 within %d bytes", in.Source, in.Text, maxInstructionBytes)
			}
			for _, g := range in.Paths {
				if !doublestar.ValidatePattern(strings.TrimPrefix(g, "!")) {
					t.Fatalf("%s: invalid glob %q kept", in.Source, g)
				}
			}
		}
	})
}
