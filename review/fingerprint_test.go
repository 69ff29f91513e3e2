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

// TestFingerprint: a finding's identity is its skill, path and code: a
// reworded title or description, or lines moved by code above, keep it;
// other code under it, another skill, another file or the same text
// elsewhere in the file (other code around it) change it.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	const code = "func load(id string) error {\n\trow := db.QueryRow(\"SELECT * FROM t WHERE id = \" + id)\n\tif err := row.Err(); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\nfunc save() error {\n\tif err := db.Exec(q); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}"
	base := Finding{Skill: "security-review", Path: "store/query.go", Title: "SQL injection", Description: "id is concatenated.", StartLine: 11, EndLine: 11}
	fp := func(c *hunks.Chunk, f Finding) string { return fingerprintOf(c, f) }
	at10 := chunkOf(t, code, 10)
	want := fp(at10, base)
	if len(want) != 32 {
		t.Fatalf("fingerprint %q is not 32 hex digits", want)
	}
	reworded := base
	reworded.Title, reworded.Description = "Query built by string concatenation", "Use a placeholder."
	moved := base
	moved.StartLine, moved.EndLine = 51, 51 // 40 lines were added above
	same := map[string]string{
		"reworded":                    fp(at10, reworded),
		"moved":                       fp(chunkOf(t, code, 50), moved),
		"blank lines and indentation": fp(chunkOf(t, strings.ReplaceAll(code, "\t", "    "), 10), base),
	}
	for name, got := range same {
		if got != want {
			t.Errorf("%s: fingerprint %s, want the same %s", name, got, want)
		}
	}
	otherSkill, otherPath := base, base
	otherSkill.Skill, otherPath.Path = "code-review", "store/other.go"
	returnErr1, returnErr2 := base, base // "return err" at lines 13 and 20
	returnErr1.StartLine, returnErr1.EndLine = 13, 13
	returnErr2.StartLine, returnErr2.EndLine = 20, 20
	differ := map[string][2]string{
		"code under it changed": {want, fp(chunkOf(t, strings.Replace(code, `" + id)`, `?", id)`, 1), 10), base)},
		"another skill":         {want, fp(at10, otherSkill)},
		"another file":          {want, fp(at10, otherPath)},
		"same text elsewhere":   {fp(at10, returnErr1), fp(at10, returnErr2)},
	}
	for name, pair := range differ {
		if pair[0] == pair[1] {
			t.Errorf("%s: fingerprints equal (%s), want them to differ", name, pair[0])
		}
	}
}
