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

// TestPlanSkewedMemoryChild is the helper process of TestPlanSkewedMemory:
// it streams the change through Parse and Prepare and prints its peak RSS.
func TestPlanSkewedMemoryChild(t *testing.T) {
	if os.Getenv("WARDEN_TEST_PLAN_MEMORY") == "" {
		t.Skip("helper process of TestPlanSkewedMemory")
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(gendiff.WriteSkewed(pw, 1500, 300_000)) }()
	files, err := ParseLimit(pr, 512<<20)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(files, Options{})
	if err != nil {
		t.Fatal(err)
	}
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestPlanSkewedMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), "WARDEN_TEST_PLAN_MEMORY=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	kb, chunks := 0, 0
	for l := range strings.Lines(string(out)) {
		if v, ok := strings.CutPrefix(l, "plan-memory "); ok {
			var s string
			fmt.Sscanf(v, "vmhwm_kb=%s chunks=%d", &s, &chunks)
			kb, _ = strconv.Atoi(s)
		}
	}
	if kb <= 0 || chunks == 0 {
		t.Fatalf("child printed no memory figure:\n%s", out)
	}
	t.Logf("planned 1,500 files, 300,000 changed lines: %d chunks, peak RSS %.1f MB", chunks, float64(kb)/1024)
	if kb > limitMB*1024 {
		t.Errorf("planning peak RSS = %.1f MB, want at most %d MB", float64(kb)/1024, limitMB)
	}
}
