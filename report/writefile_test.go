package report_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/org/warden/report"
)

// TestWriteFile: the report replaces the file whole, is readable like any
// written file (0644, not CreateTemp's 0600), and leaves no temporary file.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := os.WriteFile(path, []byte("old and longer content"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFile(path, []byte("{}")); err != nil {
		t.Fatalf("WriteFile = %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "{}" {
		t.Errorf("file = %q, %v; want {}", got, err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, %v; want 0644", fi.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the report", len(entries))
	}
	if err := report.WriteFile(filepath.Join(dir, "missing", "r.json"), []byte("{}")); err == nil {
		t.Error("WriteFile into a missing directory = nil, want an error")
	}
}

// TestWriteFileErrors: an error says what is wrong with the path (a
// directory, a missing or non-directory parent, no permission) and never
// names the temporary file; nothing is left behind.
func TestWriteFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{"out", "is a directory, not a file"},
		{"missing/r.json", "its directory does not exist"},
		{"missing/deeper/r.json", "its directory does not exist"},
		{"file/r.json", "a parent is a file, not a directory"},
	}
	for _, c := range cases {
		err := report.WriteFile(filepath.Join(dir, c.path), []byte("{}"))
		if err == nil || err.Error() != c.want {
			t.Errorf("WriteFile(%s) = %v, want %q", c.path, err, c.want)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "out"), 0o555); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 { // root writes anywhere
		if err := report.WriteFile(filepath.Join(dir, "out", "r.json"), []byte("{}")); err == nil || err.Error() != "permission denied: cannot create a file in its directory" {
			t.Errorf("WriteFile into a read-only directory = %v", err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	all, _ := os.ReadDir(dir)
	if len(entries) != 0 || len(all) != 2 {
		t.Errorf("left behind: %v in out/, %v in the directory", entries, all)
	}
}
