package hunks

import (
	"slices"
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

// TestSecretFilesWithheldByOldName: a file the change renames (or copies)
// from a name that is a secret by name is withheld under its new name too
// (WithheldBy says which name decided), its context lines with it; a
// rename away from an ordinary name, or to a secret's name, is decided as
// before.
func TestSecretFilesWithheldByOldName(t *testing.T) {
	t.Parallel()
	diff := "diff --git a/deploy/.env b/deploy/env.txt\nsimilarity index 80%\nrename from deploy/.env\nrename to deploy/env.txt\n--- a/deploy/.env\n+++ b/deploy/env.txt\n@@ -1,3 +1,3 @@\n SMTP_USER=mail\n-SMTP_HOST=old\n+SMTP_HOST=new\n SMTP_PASS=hunter2\n" +
		"diff --git a/conf/app.txt b/conf/app.env\nsimilarity index 100%\nrename from conf/app.txt\nrename to conf/app.env\n" +
		"diff --git a/old.go b/main.go\nsimilarity index 90%\nrename from old.go\nrename to main.go\n--- a/old.go\n+++ b/main.go\n@@ -1 +1 @@\n-package old\n+package main\n"
	files, err := Parse(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, kind, name string }{
		{"deploy/env.txt", "dotenv", "deploy/.env"},
		{"conf/app.env", "dotenv", "conf/app.env"},
		{"main.go", "", ""},
	} {
		i := slices.IndexFunc(files, func(f *File) bool { return f.Path() == tt.path })
		if i < 0 {
			t.Fatalf("Parse: no file %s", tt.path)
		}
		if kind, name := WithheldBy(files[i]); kind != tt.kind || name != tt.name {
			t.Errorf("WithheldBy(%s) = %q, %q, want %q, %q", tt.path, kind, name, tt.kind, tt.name)
		}
	}
	plan, err := Prepare(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Ignored{{Path: "conf/app.env", Reason: "secret:dotenv"}, {Path: "deploy/env.txt", Reason: "secret:dotenv", Lines: 2}}
	if diff := cmp.Diff(want, plan.Ignored); diff != "" {
		t.Errorf("Ignored mismatch (-want +got):\n%s", diff)
	}
	if len(plan.Chunks) != 1 || plan.Chunks[0].Path != "main.go" {
		t.Errorf("Chunks = %+v, want main.go's only", plan.Chunks)
	}
	if len(plan.Withheld) != 2 {
		t.Errorf("Withheld = %d files, want the two secrets by name", len(plan.Withheld))
	}
}
