package review

import (
	"strings"
	"testing"

	"github.com/org/warden/hunks"
)

// chunkOf is the one chunk of a file added whole with text, starting at
// line first (the lines above it are context).
func chunkOf(t *testing.T, text string, first int) *hunks.Chunk {
	t.Helper()
	c := &hunks.Chunk{Path: "store/query.go"}
	for i, line := range strings.Split(text, "\n") {
		n := first + i
		c.Lines = append(c.Lines, hunks.Line{Op: hunks.Add, Text: line, NewLine: n})
	}
	c.StartLine, c.EndLine = first, first+len(c.Lines)-1
	return c
}

// identified is f with the identity identify gives it in c.
func identified(c *hunks.Chunk, f Finding) Finding {
	identify(c, &f)
	return f
}

const fingerprintCode = "func load(id string) error {\n\trow := db.QueryRow(\"SELECT * FROM t WHERE id = \" + id)\n\tif err := row.Err(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc save() error {\n\tif err := db.Exec(q); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}"

// TestFingerprint: a finding's fingerprint is its skill, path and the code
// of its own lines: a reworded title or description, lines moved by code
// above, or an edit beside it keep it; other code under it, another skill
// or another file change it.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	code := fingerprintCode
	base := Finding{Skill: "security-review", Path: "store/query.go", Title: "SQL injection", Description: "id is concatenated.", StartLine: 11, EndLine: 11}
	at10 := chunkOf(t, code, 10)
	want := identified(at10, base)
	if len(want.Fingerprint) != 32 || len(want.Twin) != 16 {
		t.Fatalf("identify = fingerprint %q, twin %q, want 32 and 16 hex digits", want.Fingerprint, want.Twin)
	}
	reworded := base
	reworded.Title, reworded.Description = "Query built by string concatenation", "Use a placeholder."
	moved := base
	moved.StartLine, moved.EndLine = 51, 51 // 40 lines were added above
	below := base
	below.StartLine, below.EndLine = 12, 12 // one line inserted right above it
	neighbour := strings.Replace(code, "func load(id string) error {\n", "// load reads one row.\nfunc load(id string) error {\n", 1)
	for _, tt := range []struct {
		name string
		got  Finding
	}{
		{"reworded", identified(at10, reworded)},
		{"moved", identified(chunkOf(t, code, 50), moved)},
		{"blank lines and indentation", identified(chunkOf(t, strings.ReplaceAll(code, "\t", "    "), 10), base)},
		{"a line inserted above it", identified(chunkOf(t, neighbour, 10), below)},
		{"the line below it edited", identified(chunkOf(t, strings.Replace(code, "row.Err()", "row.Scan(&v)", 1), 10), base)},
	} {
		if tt.got.Fingerprint != want.Fingerprint {
			t.Errorf("%s: identify().Fingerprint = %s, want the same %s", tt.name, tt.got.Fingerprint, want.Fingerprint)
		}
	}
	otherSkill, otherPath := base, base
	otherSkill.Skill, otherPath.Path = "code-review", "store/other.go"
	for _, tt := range []struct {
		name string
		got  Finding
	}{
		{"its own line edited", identified(chunkOf(t, strings.Replace(code, `" + id)`, `?", id)`, 1), 10), base)},
		{"another skill", identified(at10, otherSkill)},
		{"another file", identified(at10, otherPath)},
	} {
		if tt.got.Fingerprint == want.Fingerprint {
			t.Errorf("%s: identify().Fingerprint = %s, want another", tt.name, tt.got.Fingerprint)
		}
	}
}

// TestFingerprintTwins: two findings of one skill on identical code in one
// file ("return err" at lines 13 and 20) share a fingerprint and are told
// apart by their twins, which stay the same from run to run and change
// with the code beside them.
func TestFingerprintTwins(t *testing.T) {
	t.Parallel()
	base := Finding{Skill: "code-review", Path: "store/query.go", Title: "error not wrapped"}
	first, second := base, base
	first.StartLine, first.EndLine = 13, 13
	second.StartLine, second.EndLine = 20, 20
	at10 := chunkOf(t, fingerprintCode, 10)
	a, b := identified(at10, first), identified(at10, second)
	if a.Fingerprint != b.Fingerprint {
		t.Errorf("identify() of the twins = fingerprints %s and %s, want one", a.Fingerprint, b.Fingerprint)
	}
	if a.Twin == b.Twin {
		t.Errorf("identify() of the twins = twin %s for both, want two", a.Twin)
	}
	if again := identified(chunkOf(t, fingerprintCode, 10), first); again != a {
		t.Errorf("identify() again = %+v, want %+v", again, a)
	}
	edited := identified(chunkOf(t, strings.Replace(fingerprintCode, "if err := row.Err(); err != nil {", "if err := row.Err(); err != nil { // checked", 1), 10), first)
	if edited.Fingerprint != a.Fingerprint || edited.Twin == a.Twin {
		t.Errorf("identify() after the line above it changed = (%s, %s), want the fingerprint %s and another twin than %s", edited.Fingerprint, edited.Twin, a.Fingerprint, a.Twin)
	}
}

// TestPriorFingerprint: PriorFingerprint is the fingerprint the version
// before gave (version 2: the finding's lines and up to two non-blank
// lines on each side in one hash), so that the markers it left on pull
// requests are still recognised. The value was computed by that version.
func TestPriorFingerprint(t *testing.T) {
	t.Parallel()
	code := strings.Join(strings.Split(fingerprintCode, "\n")[:7], "\n") // load alone
	f := identified(chunkOf(t, code, 10), Finding{Skill: "security-review", Path: "store/query.go", StartLine: 11, EndLine: 11})
	if want := "a1fd328b3e2484a89eacb98d2c6eb2cf"; f.PriorFingerprint != want {
		t.Errorf("identify().PriorFingerprint = %s, want %s (version 2's)", f.PriorFingerprint, want)
	}
}
