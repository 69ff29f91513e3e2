package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/org/warden/internal/gendiff"
)

// TestDryRunMemoryChild is the helper process of TestDryRunMemory: it runs
// the dry run in the directory the parent names and prints its peak RSS.
func TestDryRunMemoryChild(t *testing.T) {
	dir := os.Getenv("WARDEN_TEST_MEMORY_DIR")
	if dir == "" {
		t.Skip("helper process of TestDryRunMemory")
	}
	childDryRun(t, dir, "--diff", "change.diff")
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	kb := func(key string) int {
		for l := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(l, key+":"); ok {
				n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
				return n
			}
		}
		return -1
	}
	fmt.Printf("warden-memory vmhwm_kb=%d heap_sys_bytes=%d total_alloc_bytes=%d\n", kb("VmHWM"), ms.HeapSys, ms.TotalAlloc)
}

// TestDryRunMemory runs `warden review --dry-run --format json` over a
// generated change of 5,000 files and 200,000 changed lines (filters raised
// so that all of it is planned: 10,000 chunks, 20,000 work items with the
// two built-in skills) in a child process, and reads the child's peak
// resident set size (VmHWM in /proc/self/status) after it: at most 280 MB.
// (It was 200 MB before every chunk was scanned for secrets and the
// repository's instructions joined the prompts; measured since: 250 MB,
// of which the secret rules' automata and regular expressions hold about
// 15 MB and the rest is the scan's and the prompts' transient garbage.)
// The child is this test binary, so the figure includes the Go runtime and
// the test framework.
func TestDryRunMemory(t *testing.T) {
	t.Parallel()
	memoryRun(t, "a 20,000-item dry run in a child process")
	const files, limitMB = 5000, 280
	dir := t.TempDir()
	writeChange(t, dir, files)
	cfg := fmt.Sprintf("[filters]\nmax_files = %d\nmax_changed_lines = %d\n", files, 40*files)
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	hwm, heapSys, total, report := dryRunMemory(t, dir)
	planned := strings.Count(string(report), `"status": "planned"`)
	t.Logf("dry run of %d files, %d changed lines, %d planned items: peak RSS %.1f MB, heap from the OS %.1f MB, allocated in all %.1f MB, report %.1f MB",
		files, 40*files, planned, float64(hwm)/1024, float64(heapSys)/(1<<20), float64(total)/(1<<20), float64(len(report))/(1<<20))
	if planned != 4*files {
		t.Errorf("dry run planned %d items, want %d (2 skills × 2 chunks × %d files)", planned, 4*files, files)
	}
	if hwm > limitMB*1024 {
		t.Errorf("dry run peak RSS = %.1f MB, want at most %d MB", float64(hwm)/1024, limitMB)
	}
}

// dryRunMemory runs TestDryRunMemoryChild in dir (a change.diff, maybe a
// warden.toml) and returns the child's peak RSS in kB, its heap from the
// OS and all it allocated in bytes, and the JSON report it wrote.
func dryRunMemory(t *testing.T, dir string) (hwmKB, heapSys, total int, report []byte) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDryRunMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WARDEN_TEST_MEMORY_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for l := range strings.Lines(string(out)) {
		if strings.HasPrefix(l, "warden-memory ") {
			fmt.Sscanf(l, "warden-memory vmhwm_kb=%d heap_sys_bytes=%d total_alloc_bytes=%d", &hwmKB, &heapSys, &total)
		}
	}
	report, err = os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil || hwmKB <= 0 {
		t.Fatalf("child printed no memory figures (%v):\n%s", err, out)
	}
	return hwmKB, heapSys, total, report
}

// memoryRun skips a test that measures a child's peak RSS where it cannot
// (no /proc/self/status) or should not (-short, and -race, which
// multiplies memory, about 3.5× here, and time); short says what it does.
func memoryRun(t *testing.T, short string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status (Linux)")
	}
	if testing.Short() {
		t.Skip(short)
	}
	if raceDetector {
		t.Skip("the race detector multiplies memory and time: run without -race")
	}
}

// writeChange writes gendiff's change of n files to dir/change.diff and
// returns its size in bytes.
func writeChange(t *testing.T, dir string, n int) int64 {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "change.diff"))
	if err != nil {
		t.Fatal(err)
	}
	if err := gendiff.Write(f, n); err != nil {
		t.Fatal(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return size
}

// childDryRun is a helper process's `warden review CHANGE... --dry-run
// --format json --output report.json` in dir, which must exit 0.
func childDryRun(t *testing.T, dir string, change ...string) {
	t.Helper()
	var stderr bytes.Buffer
	args := append(append([]string{"-C", dir, "review"}, change...), "--dry-run", "--format", "json", "--output", "report.json")
	if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr, func(string) string { return "" }); code != exitOK {
		t.Fatalf("dry run: exit %d: %s", code, stderr.String())
	}
}
