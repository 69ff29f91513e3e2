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
