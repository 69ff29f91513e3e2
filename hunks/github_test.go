package hunks

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParseGitHubPatch reads files as GitHub's files API lists them: the
// status and names from the fields, the fragments from the header-less
// patch; anchors are the new-side ranges.
func TestParseGitHubPatch(t *testing.T) {
	t.Parallel()
	files := []GitHubFile{
		{Path: "a.go", Status: "modified", Patch: "@@ -1,3 +1,4 @@ func a() {\n a\n-b\n+B\n+c\n d\n@@ -20 +21,2 @@\n-x\n+y\n+z"},
		{Path: "new.go", Status: "added", Patch: "@@ -0,0 +1,2 @@\n+one\n+two\n"},
		{Path: "gone.go", Status: "removed", Patch: "@@ -1,2 +0,0 @@\n-one\n-two"},
		{Path: "to.go", PreviousPath: "from.go", Status: "renamed", Patch: "@@ -5 +5 @@\n-old\n+new"},
		{Path: "moved.bin", PreviousPath: "was.bin", Status: "renamed"},
	}
	got, err := ParseGitHub(files)
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]FileStatus{}
	for _, f := range got {
		status[f.OldPath+">"+f.NewPath] = f.Status
	}
	wantStatus := map[string]FileStatus{
		"a.go>a.go": Modified, ">new.go": Added, "gone.go>": Deleted, "from.go>to.go": Renamed, "was.bin>moved.bin": Renamed,
	}
	if diff := cmp.Diff(wantStatus, status); diff != "" {
		t.Errorf("ParseGitHub() statuses (-want +got):\n%s", diff)
	}
	if l := got[0].Fragments[0].Lines[2]; l.Op != Add || l.NewLine != 2 || l.Text != "B" || got[0].Fragments[0].Section != "func a() {" {
		t.Errorf("a.go line 3 = %+v (section %q), want the addition of B at new line 2", l, got[0].Fragments[0].Section)
	}
	want := Anchors{"a.go": {{1, 4}, {21, 22}}, "new.go": {{1, 2}}, "to.go": {{5, 5}}}
	if diff := cmp.Diff(want, AnchorsOf(got)); diff != "" {
		t.Errorf("AnchorsOf() (-want +got):\n%s", diff)
	}
}

// TestParseGitHubPatchRejects refuses what is not a GitHub patch, with the
// file named: never a silent empty file.
func TestParseGitHubPatchRejects(t *testing.T) {
	t.Parallel()
	for _, patch := range []string{"diff --git a/x b/x\n", "+just a line", "@@ -1,2 +1,2 @@\n-only one line"} {
		if f, err := ParseGitHubPatch(GitHubFile{Path: "x.go", Status: "modified", Patch: patch}); err == nil {
			t.Errorf("ParseGitHubPatch(%q) = %+v, want an error", patch, f)
		}
	}
}
