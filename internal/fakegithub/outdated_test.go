package fakegithub

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// versionOf joins numbered lines "l1".."ln" with replacements and insertions
// (key: 1-based line of the base file, or "+n" for a line after n).
func versionOf(n int, edits map[string]string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if v, ok := edits[fmt.Sprint(i)]; ok {
			if v != "" {
				b.WriteString(v + "\n")
			}
		} else {
			b.WriteString(fmt.Sprintf("l%d\n", i))
		}
		if v, ok := edits[fmt.Sprintf("+%d", i)]; ok {
			b.WriteString(v + "\n")
		}
	}
	return b.String()
}

// TestOutdatedFollowsLines: review comments follow their lines across
// pushes as GitHub's do. Editing the commented line outdates its thread
// (the most common fix); lines added above move a comment down and keep
// it current; a line that left the diff (its change reverted) outdates
// it; so does removing the commented line. REST and GraphQL agree.
func TestOutdatedFollowsLines(t *testing.T) {
	t.Parallel()
	s, url := newServer(t)
	pull := func(head string, content, patch string) {
		s.AddPullRequest(PullRequest{Number: 5, HeadSHA: head, BaseSHA: "base", HeadRef: "f", BaseRef: "main",
			Files: []File{{Filename: "f.go", Status: "modified", Patch: patch, Content: content}}})
	}
	// Head A: line 5 changed, a line added after 7 (new line 8).
	a := versionOf(10, map[string]string{"5": "l5 changed", "+7": "new"})
	pull("aaaa", a, "@@ -2,7 +2,8 @@\n l2\n l3\n l4\n-l5\n+l5 changed\n l6\n l7\n+new\n l8")
	onEdited := s.AddReviewComment(5, ReviewComment{Path: "f.go", Line: 5, Body: "finding on the changed line", User: "github-actions[bot]"})
	onNew := s.AddReviewComment(5, ReviewComment{Path: "f.go", Line: 8, Body: "finding on the new line", User: "github-actions[bot]"})
	onContext := s.AddReviewComment(5, ReviewComment{Path: "f.go", Line: 3, Body: "finding on a context line", User: "github-actions[bot]"})

	type where struct {
		Outdated bool
		Line     int // 0: none
	}
	check := func(step string, want map[int64]where) {
		t.Helper()
		for id, w := range want {
			_, _, raw := do(t, "GET", fmt.Sprintf("%s/repos/o/r/pulls/comments/%d", url, id), DefaultToken, nil)
			var rest struct {
				Line         *int
				OriginalLine int    `json:"original_line"`
				CommitID     string `json:"commit_id"`
			}
			if err := jsonUnmarshal(raw, &rest); err != nil {
				t.Fatalf("%s: %s", step, raw)
			}
			got := where{Outdated: rest.Line == nil}
			if rest.Line != nil {
				got.Line = *rest.Line
			}
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("%s: REST comment %d (-want +got):\n%s", step, id, diff)
			}
			data, errs := gql(t, url, DefaultToken, `query($id: ID!) { node(id: $id) { ... on PullRequestReviewThread { isOutdated line originalLine } } }`, map[string]any{"id": ThreadID(id)})
			if errs != nil {
				t.Fatalf("%s: %v", step, errs)
			}
			n := data["node"].(map[string]any)
			g := where{Outdated: n["isOutdated"] == true}
			if l, ok := n["line"].(float64); ok {
				g.Line = int(l)
			}
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("%s: GraphQL thread %d (-want +got):\n%s", step, id, diff)
			}
			if n["originalLine"].(float64) != float64(rest.OriginalLine) {
				t.Errorf("%s: originalLine %v, REST original_line %d", step, n["originalLine"], rest.OriginalLine)
			}
		}
	}
	check("at the commented head", map[int64]where{onEdited: {Line: 5}, onNew: {Line: 8}, onContext: {Line: 3}})

	// Push: two lines added at the top. Nothing commented changed: every
	// comment moves down two lines and stays current.
	b := "a\nb\n" + a
	pull("bbbb", b, "@@ -1,8 +1,10 @@\n+a\n+b\n l1\n l2\n l3\n l4\n-l5\n+l5 changed\n l6\n l7\n+new\n l8")
	check("lines added above", map[int64]where{onEdited: {Line: 7}, onNew: {Line: 10}, onContext: {Line: 5}})

	// Push: the flagged line is edited (the fix). Its thread is outdated;
	// the others stay where they were.
	c := strings.Replace(b, "l5 changed\n", "l5 fixed\n", 1)
	pull("cccc", c, "@@ -1,8 +1,10 @@\n+a\n+b\n l1\n l2\n l3\n l4\n-l5\n+l5 fixed\n l6\n l7\n+new\n l8")
	check("the flagged line edited", map[int64]where{onEdited: {Outdated: true}, onNew: {Line: 10}, onContext: {Line: 5}})

	// Push: back to only the added line: line 5's change is reverted, the
	// context line is no longer in any hunk (outdated), and the new line
	// stays.
	d := versionOf(10, map[string]string{"+7": "new"})
	pull("dddd", d, "@@ -5,6 +5,7 @@\n l5\n l6\n l7\n+new\n l8\n l9\n l10")
	check("a context line left the diff", map[int64]where{onEdited: {Outdated: true}, onNew: {Line: 8}, onContext: {Outdated: true}})

	// Push: the new line removed.
	pull("eeee", versionOf(10, nil), "")
	check("the commented line removed", map[int64]where{onEdited: {Outdated: true}, onNew: {Outdated: true}, onContext: {Outdated: true}})
}

// TestLineMap: the line diff behind following comments.
func TestLineMap(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want []int
	}{
		{"x\ny\nz\n", "x\ny\nz\n", []int{0, 1, 2}},
		{"x\ny\nz\n", "w\nx\ny\nz\n", []int{1, 2, 3}},
		{"x\ny\nz\n", "x\nY\nz\n", []int{0, -1, 2}},
		{"x\ny\nz\n", "x\nz\n", []int{0, -1, 1}},
		{"x\ny\nx\ny\n", "y\nx\ny\n", []int{-1, 0, 1, 2}},
		{"x\n", "", []int{-1}},
	} {
		if got := lineMap(splitLines(tt.a), splitLines(tt.b)); !cmp.Equal(tt.want, got) {
			t.Errorf("lineMap(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	if _, _, moved := follow("x\ny\nz\n", "x\ny\nq\nz\n", 2, 3); moved {
		t.Errorf("follow over a range with a line inserted inside it: moved, want outdated")
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
