package gitrepo

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// A diff over the cap fails with one line that names the input and the
// cap, whether it is read from a file or standard input or from git.
func TestDiffCap(t *testing.T) {
	t.Parallel()
	if _, err := ReadCapped(strings.NewReader("0123456789"), 10); err != nil {
		t.Errorf("ReadCapped(10 bytes, cap 10) = %v, want the diff", err)
	}
	_, err := ReadCapped(strings.NewReader("0123456789x"), 10)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadCapped(11 bytes, cap 10) = %v, want ErrTooLarge", err)
	}
	msg := fmt.Errorf("diff %s: %v", "standard input", err).Error()
	want := fmt.Sprintf("diff standard input: larger than the %d MiB cap on a diff", MaxOutput>>20)
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("error = %q, want one line starting %q", msg, want)
	}

	// git's output: the write past the cap fails, git stops on EPIPE.
	out := &cappedBuffer{limit: 8}
	cmd := exec.Command("git", "--version")
	cmd.Stdout = out
	_ = cmd.Run()
	if !out.over || out.Len() > 8 {
		t.Errorf("cappedBuffer(cap 8) over=%t with %d bytes, want over with at most 8", out.over, out.Len())
	}
}
