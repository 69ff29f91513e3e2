package skills

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string
		data string
		want *Skill
	}{
		{
			name: "minimal",
			file: ".warden/skills/go-ctx/SKILL.md",
			data: "---\nname: go-ctx\ndescription: Context misuse.\n---\nLook for contexts.\n",
			want: &Skill{Name: "go-ctx", Description: "Context misuse.", Instructions: "Look for contexts.", Source: ".warden/skills/go-ctx/SKILL.md"},
		},
		{
			name: "file layout",
			file: "go-ctx.md",
			data: "---\nname: go-ctx\ndescription: d\n---\nBody\n",
			want: &Skill{Name: "go-ctx", Description: "d", Instructions: "Body", Source: "go-ctx.md"},
		},
		{
			name: "globs and tolerated keys",
			file: "a/SKILL.md",
			data: "---\nname: a\ndescription: d\npaths:\n  - \"**/*.go\"\n  - cmd/**\nignore: [\"**/*_test.go\"]\n" +
				"license: MIT\nallowed-tools: Read Grep\nversion: 2\ncompatibility: any\nmetadata:\n  x: [1, 2]\n---\n\n# Title\n\nText.\n\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "# Title\n\nText.", Paths: []string{"**/*.go", "cmd/**"}, Ignore: []string{"**/*_test.go"}, Source: "a/SKILL.md"},
		},
		{
			name: "comma-separated globs and negation",
			file: "a.md",
			data: "---\nname: a\ndescription: d\npaths: \"src/**/*.{ts,tsx}, lib/**\"\nignore: [\"gen/**\", \"!gen/keep/**\"]\n---\nBody\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "Body", Paths: []string{"src/**/*.{ts,tsx}", "lib/**"}, Ignore: []string{"gen/**", "!gen/keep/**"}, Source: "a.md"},
		},
		{
			name: "claude code keys are ignored",
			file: ".claude/skills/a/SKILL.md",
			data: "---\nname: a\ndescription: d\nargument-hint: \"[file]\"\ndisable-model-invocation: true\nuser-invocable: false\n" +
				"model: sonnet\neffort: high\ncontext: fork\nagent: Explore\nhooks:\n  PreToolUse: []\nshell: bash\nallowed-tools:\n  - Read\n---\nBody\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "Body", Source: ".claude/skills/a/SKILL.md"},
		},
		{
			name: "null globs are empty",
			file: "a.md",
			data: "---\nname: a\ndescription: d\npaths:\nignore: []\n---\nBody\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "Body", Source: "a.md"},
		},
		{
			name: "folded description is one line",
			file: "a.md",
			data: "---\nname: a\ndescription: |\n  First line\n    and  second.\n---\nBody\n",
			want: &Skill{Name: "a", Description: "First line and second.", Instructions: "Body", Source: "a.md"},
		},
		{
			name: "crlf and bom",
			file: "a.md",
			data: "\uFEFF---\r\nname: a\r\ndescription: d\r\n---\r\nLine one.\r\nLine two.\r\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "Line one.\nLine two.", Source: "a.md"},
		},
		{
			name: "fence with trailing spaces",
			file: "a.md",
			data: "--- \nname: a\ndescription: d\n---\t\nBody",
			want: &Skill{Name: "a", Description: "d", Instructions: "Body", Source: "a.md"},
		},
		{
			name: "body keeps a later fence",
			file: "a.md",
			data: "---\nname: a\ndescription: d\n---\nAbove\n---\nBelow\n",
			want: &Skill{Name: "a", Description: "d", Instructions: "Above\n---\nBelow", Source: "a.md"},
		},
		{
			name: "aliases",
			file: "a.md",
			data: "---\nname: &n a\ndescription: *n\npaths: &p [\"x/**\"]\nignore: *p\n---\nBody\n",
			want: &Skill{Name: "a", Description: "a", Instructions: "Body", Paths: []string{"x/**"}, Ignore: []string{"x/**"}, Source: "a.md"},
		},
		{
			name: "digits in name",
			file: "owasp-top-10.md",
			data: "---\nname: owasp-top-10\ndescription: d\n---\nBody\n",
			want: &Skill{Name: "owasp-top-10", Description: "d", Instructions: "Body", Source: "owasp-top-10.md"},
		},
		{
			name: "name not checked for a bare SKILL.md",
			file: "SKILL.md",
			data: "---\nname: anything\ndescription: d\n---\nBody\n",
			want: &Skill{Name: "anything", Description: "d", Instructions: "Body", Source: "SKILL.md"},
		},
		{
			name: "name not checked for other file names",
			file: "notes.txt",
			data: "---\nname: anything\ndescription: d\n---\nBody\n",
			want: &Skill{Name: "anything", Description: "d", Instructions: "Body", Source: "notes.txt"},
		},
		{
			name: "no file",
			file: "",
			data: "---\nname: anything\ndescription: d\n---\nBody\n",
			want: &Skill{Name: "anything", Description: "d", Instructions: "Body"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.file, []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse(%q, %q) error:\n%v", tt.file, tt.data, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Parse(%q, %q) mismatch (-want +got):\n%s", tt.file, tt.data, diff)
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	t.Parallel()
	const (
		f       = "x/SKILL.md"
		noName  = "frontmatter has no name: add name: followed by the skill's name"
		noDesc  = "frontmatter has no description: add description: followed by one line saying what the skill reviews"
		noBody  = "no instructions: the Markdown body after the frontmatter is empty"
		unknown = `, ignored: warden reads name, description, paths, ignore and metadata's key warden (the other keys of Agent Skills and Claude Code are ignored without a warning)`
	)
	tests := []struct {
		name string
		file string // f when ""
		data string
		want Problems
	}{
		{"empty file", "", "", Problems{{f, 1, msgNoFrontmatter}}},
		{"no frontmatter", "", "# Title\n\nname: x\n", Problems{{f, 1, msgNoFrontmatter}}},
		{"blank line before frontmatter", "", "\n---\nname: x\ndescription: d\n---\nBody\n", Problems{{f, 1, msgNoFrontmatter}}},
		{"four dashes", "", "----\nname: x\ndescription: d\n----\nBody\n", Problems{{f, 1, msgNoFrontmatter}}},
		{"unclosed", "", "---\nname: x\ndescription: d\nBody\n", Problems{{f, 1, msgUnclosed}}},
		{"only an opening fence", "", "---", Problems{{f, 1, msgUnclosed}}},
		{"yaml syntax", "", "---\nname: x\ndescription: a: b\n---\nBody\n",
			Problems{{f, 3, "invalid YAML in frontmatter: mapping values are not allowed in this context"}}},
		{"yaml syntax and empty body", "", "---\nname: x\ndescription: a: b\n---\n",
			Problems{{f, 3, "invalid YAML in frontmatter: mapping values are not allowed in this context"}, {f, 4, noBody}}},
		{"unquoted glob", "", "---\nname: x\ndescription: d\npaths:\n  - *.go\n---\nBody\n",
			Problems{{f, 5, `invalid YAML in frontmatter: did not find expected alphabetic or numeric character (a value that starts with * or & must be quoted, like "**/*.go")`}}},
		{"tab indentation", "", "---\nname: x\ndescription: d\nmetadata:\n\ta: 1\n---\nBody\n",
			Problems{{f, 5, "invalid YAML in frontmatter: found character that cannot start any token"}}},
		{"unterminated quote is kept inside the frontmatter", "", "---\nname: \"x\n---\nBody\n",
			Problems{{f, 3, "invalid YAML in frontmatter: found unexpected end of stream"}}},
		{"control character", "", "---\nname: x\u0001\ndescription: d\n---\nBody\n",
			Problems{{f, 1, "invalid YAML in frontmatter: control characters are not allowed"}}},
		{"empty frontmatter", "", "---\n---\nBody\n", Problems{{f, 1, noName}, {f, 1, noDesc}}},
		{"comment-only frontmatter", "", "---\n# nothing\n---\nBody\n", Problems{{f, 1, noName}, {f, 1, noDesc}}},
		{"frontmatter is a list", "", "---\n- name: x\n---\nBody\n",
			Problems{{f, 2, "frontmatter must be a YAML mapping of keys to values, not a list"}}},
		{"frontmatter is a string", "", "---\njust text\n---\nBody\n",
			Problems{{f, 2, `frontmatter must be a YAML mapping of keys to values, not the string "just text"`}}},
		{"missing name", "", "---\ndescription: d\n---\nBody\n", Problems{{f, 1, noName}}},
		{"missing description", "", "---\nname: x\n---\nBody\n", Problems{{f, 1, noDesc}}},
		{"null name", "", "---\nname:\ndescription: d\n---\nBody\n", Problems{{f, 2, "name is empty"}}},
		{"empty name", "", "---\nname: \"\"\ndescription: d\n---\nBody\n", Problems{{f, 2, "name is empty"}}},
		{"blank description", "", "---\nname: x\ndescription: \"  \"\n---\nBody\n", Problems{{f, 3, "description is empty"}}},
		{"name with capitals", "Code_Review/SKILL.md", "---\nname: Code_Review\ndescription: d\n---\nBody\n",
			Problems{{"Code_Review/SKILL.md", 2, `name "Code_Review" must be lower-case letters, digits and single hyphens between them (like code-review)`}}},
		{"name with space", "", "---\nname: code review\ndescription: d\n---\nBody\n",
			Problems{{f, 2, `name "code review" must be lower-case letters, digits and single hyphens between them (like code-review)`}}},
		{"name with leading hyphen", "", "---\nname: -x\ndescription: d\n---\nBody\n",
			Problems{{f, 2, `name "-x" must be lower-case letters, digits and single hyphens between them (like code-review)`}}},
		{"name with double hyphen", "", "---\nname: a--b\ndescription: d\n---\nBody\n",
			Problems{{f, 2, `name "a--b" must be lower-case letters, digits and single hyphens between them (like code-review)`}}},
		{"name too long", "", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: d\n---\nBody\n",
			Problems{{f, 2, "name is 65 characters long, more than 64"}}},
		{"name is a list", "", "---\nname: [x]\ndescription: d\n---\nBody\n",
			Problems{{f, 2, "name must be a string, not a list"}}},
		{"description is a mapping", "", "---\nname: x\ndescription:\n  a: b\n---\nBody\n",
			Problems{{f, 4, "description must be a string, not a mapping"}}},
		{"name differs from folder", "other/SKILL.md", "---\nname: x\ndescription: d\n---\nBody\n",
			Problems{{"other/SKILL.md", 2, `name "x" does not match its folder "other": rename one so they agree`}}},
		{"name differs from file name", ".claude/skills/other.md", "---\nname: x\ndescription: d\n---\nBody\n",
			Problems{{".claude/skills/other.md", 2, `name "x" does not match its file name "other": rename one so they agree`}}},
		{"paths is a number", "", "---\nname: x\ndescription: d\npaths: 3\n---\nBody\n",
			Problems{{f, 4, `paths must be a list of globs (like paths: ["**/*.go"]), not the number 3`}}},
		{"ignore is a number", "", "---\nname: x\ndescription: d\nignore: 1.5\n---\nBody\n",
			Problems{{f, 4, `ignore must be a list of globs (like ignore: ["**/*.go"]), not the number 1.5`}}},
		{"ignore is a boolean", "", "---\nname: x\ndescription: d\nignore: true\n---\nBody\n",
			Problems{{f, 4, `ignore must be a list of globs (like ignore: ["**/*.go"]), not the boolean true`}}},
		{"globs in a string", "", "---\nname: x\ndescription: d\npaths: \"a/**, [b, , !\"\n---\nBody\n",
			Problems{
				{f, 4, `paths[1]: invalid glob "[b"`},
				{f, 4, "paths[2] is empty"},
				{f, 4, "paths[3] is empty"},
			}},
		{"ignore is a mapping", "", "---\nname: x\ndescription: d\nignore:\n  a: b\n---\nBody\n",
			Problems{{f, 5, `ignore must be a list of globs (like ignore: ["**/*.go"]), not a mapping`}}},
		{"glob items", "", "---\nname: x\ndescription: d\npaths:\n  - \"[a-\"\n  - 7\n  - \"\"\n  - /abs/**\n  - ./rel\n  - [a]\n  - ok/**\n  - \"!\"\n  - \"!/x\"\n  - \"!{a\"\n---\nBody\n",
			Problems{
				{f, 5, `paths[0]: invalid glob "[a-"`},
				{f, 6, "paths[1] must be a glob string, not the number 7"},
				{f, 7, "paths[2] is empty"},
				{f, 8, `paths[3]: glob "/abs/**" must be relative to the repository root, without a leading / or ./`},
				{f, 9, `paths[4]: glob "./rel" must be relative to the repository root, without a leading / or ./`},
				{f, 10, "paths[5] must be a glob string, not a list"},
				{f, 12, "paths[7] is empty"},
				{f, 13, `paths[8]: glob "!/x" must be relative to the repository root, without a leading / or ./`},
				{f, 14, `paths[9]: invalid glob "!{a"`},
			}},
		{"key in capitals alone", "", "---\nName: x\ndescription: d\n---\nBody\n",
			Problems{{f, 1, noName}, {f, 2, `unknown key "Name"` + unknown}}},
		{"duplicate key", "", "---\nname: x\ndescription: d\nname: y\n---\nBody\n",
			Problems{{f, 4, `duplicate key "name" (first on line 2)`}}},
		{"complex key", "", "---\nname: x\ndescription: d\n? [a]\n: b\n---\nBody\n",
			Problems{{f, 4, "frontmatter key must be a string, not a list"}}},
		{"empty body", "", "---\nname: x\ndescription: d\n---\n", Problems{{f, 4, noBody}}},
		{"blank body", "", "---\nname: x\ndescription: d\n---\n \n\t\n\n", Problems{{f, 4, noBody}}},
		{"no newline after closing fence", "", "---\nname: x\ndescription: d\n---", Problems{{f, 4, noBody}}},
		{"not utf-8", "", "---\nname: x\ndescription: caf\xe9\n---\nBody\n",
			Problems{{f, 3, "not valid UTF-8: a skill file must be UTF-8 text"}}},
		{"utf-16", "", "\xff\xfe-\x00-\x00-\x00\n\x00",
			Problems{{f, 1, "not valid UTF-8: a skill file must be UTF-8 text"}}},
		{"too large", "", "---\nname: x\ndescription: d\n---\n" + strings.Repeat("a", maxFileSize),
			Problems{{f, 0, "file is larger than 262144 bytes, too large for a skill"}}},
		{"crlf keeps line numbers", "", "---\r\nname: x\r\ndescription: d\r\nfoo: 1\r\n---\r\n",
			Problems{{f, 4, `unknown key "foo"` + unknown}, {f, 5, noBody}}},
		{"lone cr keeps line numbers", "", "---\rname: x\rdescription: d\rfoo: 1\r---\r",
			Problems{{f, 4, `unknown key "foo"` + unknown}, {f, 5, noBody}}},
		{"at most 50 problems", "", "---\nname: x\ndescription: d\n" + strings.Repeat("k: v\n", 100) + "---\nBody\n",
			append(func() Problems {
				var ps Problems
				for i := range 49 {
					msg := `unknown key "k"` + unknown
					if i > 0 {
						msg = `duplicate key "k" (first on line 4)`
					}
					ps = append(ps, Problem{f, 4 + i, msg})
				}
				return ps
			}(), Problem{f, 0, "51 more problems not shown"})},
		{"every problem in line order", "Many_Problems/SKILL.md", "---\nbar: 1\nname: Many_Problems\npaths: 3\nignore: [\"[\"]\nfoo: 2\n---\n",
			Problems{
				{"Many_Problems/SKILL.md", 1, noDesc},
				{"Many_Problems/SKILL.md", 2, `unknown key "bar"` + unknown},
				{"Many_Problems/SKILL.md", 3, `name "Many_Problems" must be lower-case letters, digits and single hyphens between them (like code-review)`},
				{"Many_Problems/SKILL.md", 4, `paths must be a list of globs (like paths: ["**/*.go"]), not the number 3`},
				{"Many_Problems/SKILL.md", 5, `ignore[0]: invalid glob "["`},
				{"Many_Problems/SKILL.md", 6, `unknown key "foo"` + unknown},
				{"Many_Problems/SKILL.md", 7, noBody},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := tt.file
			if file == "" {
				file = f
			}
			got, err := Parse(file, []byte(tt.data))
			if got != nil {
				t.Errorf("Parse(%q, %q) = %+v, want nil", file, tt.data, got)
			}
			var ps Problems
			if !errors.As(err, &ps) {
				t.Fatalf("Parse(%q, %q) error = %v (%T), want Problems", file, tt.data, err, err)
			}
			if diff := cmp.Diff(tt.want, ps); diff != "" {
				t.Errorf("Parse(%q, %q) problems mismatch (-want +got):\n%s", file, tt.data, diff)
			}
		})
	}
}

func TestParseNilErrorIsUntypedNil(t *testing.T) {
	t.Parallel()
	_, err := Parse("a.md", []byte("---\nname: a\ndescription: d\n---\nBody\n"))
	if err != nil {
		t.Fatalf("Parse(valid) error = %#v, want nil", err)
	}
}

// TestParseWarnings: a key warden does not know, and a metadata.warden it
// cannot read, are warnings naming the file, the line and the key; the
// skill still loads.
func TestParseWarnings(t *testing.T) {
	t.Parallel()
	const f = ".warden/skills/x/SKILL.md"
	const unknown = `, ignored: warden reads name, description, paths, ignore and metadata's key warden (the other keys of Agent Skills and Claude Code are ignored without a warning)`
	tests := []struct {
		name       string
		data       string
		want       Problems
		wantReview bool
	}{
		{"unknown key", "---\nname: x\ndescription: d\nseverity: high\n---\nBody\n", Problems{{f, 4, `unknown key "severity"` + unknown}}, false},
		{"key in capitals", "---\nName: x\nname: x\ndescription: d\n---\nBody\n", Problems{{f, 2, `unknown key "Name"` + unknown}}, false},
		{"two, in line order", "---\nzz: 1\nname: x\ndescription: d\naa: 2\n---\nBody\n",
			Problems{{f, 2, `unknown key "zz"` + unknown}, {f, 5, `unknown key "aa"` + unknown}}, false},
		{"tolerated keys are silent", "---\nname: x\ndescription: d\nlicense: MIT\nallowed-tools: Read\nmodel: sonnet\n---\nBody\n", nil, false},
		{"review declared", "---\nname: x\ndescription: d\nmetadata:\n  warden: review\n---\nBody\n", nil, true},
		{"metadata.warden not review", "---\nname: x\ndescription: d\nmetadata:\n  warden: [review]\n---\nBody\n",
			Problems{{f, 5, `metadata.warden is a list, ignored: "review" is the one value warden reads (it makes the skill a review skill)`}}, false},
		{"metadata of other tools", "---\nname: x\ndescription: d\nmetadata:\n  author: me\n  version: \"2\"\n---\nBody\n", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(f, []byte(tt.data))
			if err != nil {
				t.Fatalf("Parse(%q) error: %v", tt.data, err)
			}
			if diff := cmp.Diff(tt.want, got.Warnings); diff != "" {
				t.Errorf("Parse(%q) warnings mismatch (-want +got):\n%s", tt.data, diff)
			}
			if got.Review != tt.wantReview {
				t.Errorf("Parse(%q).Review = %v, want %v", tt.data, got.Review, tt.wantReview)
			}
		})
	}
}

func TestProblemError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   Problem
		want string
	}{
		{Problem{"a/SKILL.md", 3, "bad"}, "a/SKILL.md:3: bad"},
		{Problem{"a/SKILL.md", 0, "bad"}, "a/SKILL.md: bad"},
		{Problem{"", 0, "no skill found"}, "no skill found"},
		{Problem{"", 2, "bad"}, "2: bad"},
	}
	for _, tt := range tests {
		if got := tt.in.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProblemsError(t *testing.T) {
	t.Parallel()
	ps := Problems{{"a.md", 1, "one"}, {"b.md", 0, "two"}}
	if got, want := ps.Error(), "a.md:1: one\nb.md: two"; got != want {
		t.Errorf("Problems.Error() = %q, want %q", got, want)
	}
	var err error = ps
	var p Problem
	if !errors.As(err, &p) || p != ps[0] {
		t.Errorf("errors.As(Problems, *Problem) = %v, want %v", p, ps[0])
	}
}

// TestParseGolden parses each testdata/*.md (named after its base name, so
// that NAME.md must declare name: NAME) and compares the result with
// testdata/NAME.golden. Run with -update to rewrite the golden files.
func TestParseGolden(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no testdata/*.md")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			got := goldenText(Parse(filepath.Base(file), data))
			golden := strings.TrimSuffix(file, ".md") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./skills -run TestParseGolden -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Parse(%q) mismatch with %s (-want +got):\n%s", file, golden, diff)
			}
		})
	}
}

// goldenText renders the result of Parse for a golden file.
func goldenText(s *Skill, err error) string {
	if err != nil {
		return "problems:\n" + err.Error() + "\n"
	}
	b, jerr := json.MarshalIndent(s, "", "  ")
	if jerr != nil {
		return "marshal: " + jerr.Error() + "\n"
	}
	return string(b) + "\n"
}
