package report

import (
	"io/fs"
	"os"
	"syscall"
	"testing"
)

// TestWriteProblem: every system error of writing a report beside its
// path reads as what it means for the path, and none keeps the temporary
// file's name (the root of the tests writes anywhere, so permission is
// tested here on the error itself).
func TestWriteProblem(t *testing.T) {
	t.Parallel()
	tmp := "/work/out/.warden-report-123"
	cases := []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: tmp, Err: syscall.EACCES}, "permission denied: cannot create a file in its directory"},
		{&fs.PathError{Op: "open", Path: tmp, Err: syscall.EPERM}, "permission denied: cannot create a file in its directory"},
		{&fs.PathError{Op: "open", Path: tmp, Err: syscall.ENOENT}, "its directory does not exist"},
		{&fs.PathError{Op: "open", Path: tmp, Err: syscall.ENOTDIR}, "a parent is a file, not a directory"},
		{&os.LinkError{Op: "rename", Old: tmp, New: "/work/out/r", Err: syscall.EISDIR}, "is a directory, not a file"},
		{&fs.PathError{Op: "write", Path: tmp, Err: syscall.ENOSPC}, "no space left on device"},
		{&os.LinkError{Op: "rename", Old: tmp, New: "/work/out/r", Err: syscall.EXDEV}, "replacing it: invalid cross-device link"},
		{&fs.PathError{Op: "open", Path: tmp, Err: syscall.EROFS}, "read-only file system"},
	}
	for _, c := range cases {
		prefix := ""
		if _, ok := c.err.(*os.LinkError); ok {
			prefix = "replacing it: "
		}
		if got := writeProblem(c.err, prefix).Error(); got != c.want {
			t.Errorf("writeProblem(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
