package skills

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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
