package hunks

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/org/warden/internal/gendiff"
)

// TestPlanSkewedMemoryChild is the helper process of TestPlanSkewedMemory
// and TestPlanOneLargeFileMemory: it streams the change they name through
// PrepareDiff and prints its size and its peak RSS.
func TestPlanSkewedMemoryChild(t *testing.T) {
	shape := os.Getenv("WARDEN_TEST_PLAN_MEMORY")
	if shape == "" {
		t.Skip("helper process of TestPlanSkewedMemory")
	}
	files, lines := 1500, 300_000
	if shape == "one-file" {
		files, lines = 1, 1_500_000
	}
	pr, pw := io.Pipe()
	counted := &countingReader{r: pr}
	go func() { pw.CloseWithError(gendiff.WriteSkewed(pw, files, lines)) }()
	p, err := PrepareDiff(counted, 512<<20, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("plan-memory diff_bytes=%d\n", counted.n)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			fmt.Printf("plan-memory vmhwm_kb=%s chunks=%d\n", strings.TrimSuffix(strings.TrimSpace(v), " kB"), len(p.Chunks))
		}
	}
}

// TestPlanSkewedMemory plans the Prometheus-shaped change (1,500 files,
// 300,000 changed lines, streamed as from a pipe) in a child process and
// reads the child's peak resident set size: at most 300 MB, the test binary
// and the Go runtime included.
func TestPlanSkewedMemory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status (Linux)")
	}
	if testing.Short() {
		t.Skip("plans 300,000 changed lines in a child process")
	}
	const limitMB = 300
	kb, chunks, _ := planMemory(t, "skewed")
	t.Logf("planned 1,500 files, 300,000 changed lines: %d chunks, peak RSS %.1f MB", chunks, float64(kb)/1024)
	if kb > limitMB*1024 {
		t.Errorf("planning peak RSS = %.1f MB, want at most %d MB", float64(kb)/1024, limitMB)
	}
}

// planMemory runs TestPlanSkewedMemoryChild on the change shape names and
// returns its peak RSS, the chunks planned and the diff's size.
func planMemory(t *testing.T, shape string) (kb, chunks int, size int64) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlanSkewedMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WARDEN_TEST_PLAN_MEMORY="+shape)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for l := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(l, "plan-memory "); ok {
			if n, ok := strings.CutPrefix(strings.TrimSpace(v), "diff_bytes="); ok {
				size, _ = strconv.ParseInt(n, 10, 64)
				continue
			}
			var s string
			fmt.Sscanf(v, "vmhwm_kb=%s chunks=%d", &s, &chunks)
			kb, _ = strconv.Atoi(s)
		}
	}
	if kb <= 0 || size <= 0 {
		t.Fatalf("child printed no memory figure:\n%s", out)
	}
	return kb, chunks, size
}

// TestPlanOneLargeFileMemory plans a diff that is one file of 1,500,000
// changed lines (about 115 MB; a dump or a generated file) as it streams:
// the planner holds 20,000 of its changed lines, and go-gitdiff sees the
// rest as their operations only, so the child's peak RSS (the test binary
// and the Go runtime included) is at most the diff's size. Parsed whole,
// the file took 2.7 times it.
func TestPlanOneLargeFileMemory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc/self/status (Linux)")
	}
	if testing.Short() {
		t.Skip("plans 1,500,000 changed lines in a child process")
	}
	if raceDetector {
		t.Skip("the race detector multiplies memory: run without -race")
	}
	kb, _, size := planMemory(t, "one-file")
	mb := float64(size) / (1 << 20)
	t.Logf("planned one file of 1,500,000 changed lines (%.0f MiB of diff): peak RSS %.1f MiB (%.2f× the diff)", mb, float64(kb)/1024, float64(kb)/1024/mb)
	if float64(kb)/1024 > mb {
		t.Errorf("planning a %.0f MiB one-file diff: peak RSS %.1f MiB, want at most the diff's size", mb, float64(kb)/1024)
	}
}
