package hunks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSecretFilesWithheld: files that are secrets by name never become
// chunks, whatever the patterns say (a "!" re-include included), and are
// listed with reason secret:<kind>; the rest of the change is planned.
func TestSecretFilesWithheld(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/.env b/.env\nnew file mode 100644\n--- /dev/null\n+++ b/.env\n@@ -0,0 +1 @@\n+API_KEY=x\n" +
		"diff --git a/id_ed25519 b/id_ed25519\nnew file mode 100600\n--- /dev/null\n+++ b/id_ed25519\n@@ -0,0 +1 @@\n+key\n" +
		"diff --git a/main.go b/main.go\nnew file mode 100644\n--- /dev/null\n+++ b/main.go\n@@ -0,0 +1 @@\n+package main\n"
	files, err := Parse(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := Prepare(files, Options{Ignore: []string{"!.env", "!**/id_*"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Ignored{{Path: ".env", Reason: "secret:dotenv", Lines: 1}, {Path: "id_ed25519", Reason: "secret:private-key", Lines: 1}}
	if diff := cmp.Diff(want, plan.Ignored); diff != "" {
		t.Errorf("Ignored mismatch (-want +got):\n%s", diff)
	}
	if len(plan.Chunks) != 1 || plan.Chunks[0].Path != "main.go" {
		t.Errorf("Chunks = %+v, want main.go's only", plan.Chunks)
	}
}
