package github

import (
	"github.com/org/warden/report"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

func TestFenceLength(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 3},
		{"x := 1", 3},
		{"a `b` c", 3},
		{"```go\nx\n```", 4},
		{"````", 5},
		{"`` and ```` and ```", 5},
	}
	for _, tt := range tests {
		if got := report.FenceLength(tt.in); got != tt.want {
			t.Errorf("report.FenceLength(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestNeutralize(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/org/warden"
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Check the error.", "Check the error."},
		{"mention", "ping @octocat and @org/team", "ping @\u200boctocat and @\u200borg/team"},
		{"mention at start", "@admin look", "@\u200badmin look"},
		{"email stays", "mail a@example.com", "mail a@example.com"},
		{"html", `<img src=x onerror=alert(1)> <details>`, `&lt;img src=x onerror=alert(1)> &lt;details>`},
		{"forged marker", "<!-- warden:fp:00000000000000000000000000000000 -->", "&lt;!-- warden:fp:00000000000000000000000000000000 -->"},
		{"image", "![x](https://evil.example/t.png)", "!\\[x]\\(`https://evil.example/t.png`)"},
		{"link elsewhere", "see [docs](http://evil.example/a?b=c) now", "see [docs]\\(`http://evil.example/a?b=c`) now"},
		{"bare link elsewhere", "go to https://evil.example/x.", "go to `https://evil.example/x.`"},
		{"repository link stays", "see https://github.com/org/warden/blob/main/a.go#L3", "see https://github.com/org/warden/blob/main/a.go#L3"},
		{"other repository is elsewhere", "see https://github.com/org/wardenx", "see `https://github.com/org/wardenx`"},
		{"controls and bidi", "a\x1b[2Jb\u202ec", "a[2Jbc"},
		{"newlines kept", "a\r\nb", "a\nb"},
		{"www autolink", "see www.evil.example/x", "see `www.evil.example/x`"},
		{"ftp autolink", "ftp://evil.example/f", "`ftp://evil.example/f`"},
		{"reference definition", "[docs][1]\n\n[1]: //evil.example/a", "[docs][1]\n\n\\[1]: //evil.example/a"},
		{"repository look-alike", "https://github.com/org/warden@evil.example/x", "`https://github.com/org/warden@evil.example/x`"},
		{"repository query stays", "https://github.com/org/warden?tab=readme", "https://github.com/org/warden?tab=readme"},
		{"mention after punctuation", "a.@team x+@bob é@carol", "a.@\u200bteam x+@\u200bbob é@\u200bcarol"},
		{"smuggled suggestion", "```suggestion\nrm -rf /\n```", "```text\nrm -rf /\n```"},
		{"smuggled suggestion in a quote", "> ~~~ Suggestion\nx\n> ~~~", "> ~~~ text\nx\n> ~~~"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := report.Neutralize(tt.in, repo); got != tt.want {
				t.Errorf("report.Neutralize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCloseFences(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"text", "text"},
		{"```go\nx\n```", "```go\nx\n```"},
		{"```go\nx", "```go\nx\n```"},
		{"````\n```\nx", "````\n```\nx\n````"},
		{"~~~\nx", "~~~\nx\n~~~"},
	}
	for _, tt := range tests {
		if got := closeFences(tt.in); got != tt.want {
			t.Errorf("closeFences(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestAnchor(t *testing.T) {
	t.Parallel()
	ranges := []LineRange{{Start: 10, End: 20}, {Start: 40, End: 45}}
	type result struct {
		Start, End int
		Exact, OK  bool
	}
	tests := []struct {
		name       string
		start, end int
		want       result
	}{
		{"single line inside", 12, 12, result{12, 12, true, true}},
		{"no end line", 12, 0, result{12, 12, true, true}},
		{"range inside", 10, 20, result{10, 20, true, true}},
		{"second hunk", 41, 44, result{41, 44, true, true}},
		{"across two hunks", 18, 42, result{18, 20, false, true}},
		{"starts before a hunk", 5, 11, result{10, 11, false, true}},
		{"outside", 25, 30, result{0, 0, false, false}},
		{"no line", 0, 0, result{0, 0, false, false}},
		{"after every hunk", 46, 46, result{0, 0, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, e, exact, ok := anchor(ranges, review.Finding{StartLine: tt.start, EndLine: tt.end})
			if diff := cmp.Diff(tt.want, result{s, e, exact, ok}); diff != "" {
				t.Errorf("anchor(%d-%d) (-want +got):\n%s", tt.start, tt.end, diff)
			}
		})
	}
}

// TestAnchorsFromFiles reads the anchors of GitHub's patches through
// hunks: a malformed patch anchors nothing.
func TestAnchorsFromFiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, patch string
		want        []LineRange
	}{
		{"none", "", nil},
		{"one", "@@ -1,3 +1,4 @@\n a\n+b\n c\n d", []LineRange{{Start: 1, End: 4}}},
		{"two, one line without count", "@@ -1 +1 @@\n-a\n+b\n@@ -10,2 +20,3 @@ func f() {\n x\n+y\n z", []LineRange{{Start: 1, End: 1}, {Start: 20, End: 22}}},
		{"deletion only", "@@ -1,3 +1,0 @@\n-a\n-b\n-c", nil},
		{"malformed: fewer lines than the header says", "@@ -10,2 +20,5 @@\n x", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := AnchorsFromFiles([]File{{Path: "x.go", Status: "modified", Patch: tt.patch}})["x.go"]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("AnchorsFromFiles(%q) (-want +got):\n%s", tt.patch, diff)
			}
		})
	}
}

func TestCommentBody(t *testing.T) {
	t.Parallel()
	const repo = "https://github.com/org/warden"
	f := review.Finding{
		Skill: "security-review", Severity: review.SeverityHigh, Title: "SQL built from @input",
		Description: "Use a parameter. <script>", Path: "db.go", StartLine: 3, EndLine: 4,
		Suggestion: "q := \"```\"\ndb.Query(q, id)\n",
	}
	got := commentBody(f, true, repo)
	want := "**[high] SQL built from @\u200binput** · `security-review`\n\n" +
		"Use a parameter. &lt;script>\n\n" +
		"````suggestion\nq := \"```\"\ndb.Query(q, id)\n````\n\n" + marker(f)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("commentBody(exact) (-want +got):\n%s", diff)
	}
	partial := commentBody(f, false, repo)
	if strings.Contains(partial, "suggestion\n") {
		t.Errorf("commentBody(not exact) = %q, want no suggestion block", partial)
	}
	if !strings.Contains(partial, "Finding on lines 3–4") || !strings.HasSuffix(partial, marker(f)) {
		t.Errorf("commentBody(not exact) = %q, want the finding's lines and the marker last", partial)
	}

	huge := f
	huge.Description = strings.Repeat("x", 2*MaxCommentBody)
	if got := commentBody(huge, true, repo); len(got) > MaxCommentBody || !strings.HasSuffix(got, marker(f)) || !strings.Contains(got, "suggestion") {
		t.Errorf("commentBody(huge description) = %d bytes, want at most %d, with suggestion and marker", len(got), MaxCommentBody)
	}
}

// TestCommentBodySuggestionCap: a suggestion up to MaxSuggestionLines and
// MaxSuggestionBytes is in the comment, applicable or not; a longer one
// (a whole file rewritten) is left out with one line saying why, and the
// finding's title, description and marker stay.
func TestCommentBodySuggestionCap(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 99) + "\n"
	for _, tt := range []struct {
		name, suggestion string
		exact, shown     bool
		why              string
	}{
		{"100 lines", strings.Repeat("y = 1\n", MaxSuggestionLines), true, true, ""},
		{"101 lines", strings.Repeat("y = 1\n", MaxSuggestionLines+1), true, false, "_Suggested change of 101 lines left out: an inline suggestion holds at most 100 lines (8000 bytes)"},
		{"101 lines, not applicable", strings.Repeat("y = 1\n", MaxSuggestionLines+1), false, false, "_Suggested change of 101 lines left out"},
		{"81 long lines", strings.Repeat(long, 81), true, false, "_Suggested change of 81 lines left out"},
		{"80 long lines", strings.Repeat(long, 80), true, true, ""},
	} {
		f := review.Finding{Severity: review.SeverityMedium, Title: "Rewrite", Description: "Simpler.", Path: "gen.go", StartLine: 1, EndLine: 200, Suggestion: tt.suggestion}
		got := commentBody(f, tt.exact, "")
		if shown := strings.Contains(got, strings.TrimSuffix(tt.suggestion, "\n")); shown != tt.shown {
			t.Errorf("commentBody(%s) shows the suggestion: %v, want %v", tt.name, shown, tt.shown)
		}
		if !strings.Contains(got, tt.why) || !strings.Contains(got, "Rewrite") || !strings.Contains(got, "Simpler.") || !strings.HasSuffix(got, marker(f)) {
			t.Errorf("commentBody(%s) = %.300q, want the finding, its marker and %q", tt.name, got, tt.why)
		}
	}
}
