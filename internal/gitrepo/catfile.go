package gitrepo

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// batch is one long-lived `git cat-file --batch` process: objects are
// asked for by name, one at a time, and read from its output. It is what
// Tree and Files read file contents through, so a review starts one git
// process for its files, not one per file.
//
// Its lifetime is its owner's: close ends it; the context given to
// startBatch kills it when done. Once it fails (killed, or git stopped or
// answered what the protocol does not allow) every later request returns
// the same error; it is never restarted. It is safe for concurrent use.
type batch struct {
	mu     sync.Mutex // one request and its answer at a time
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	out    *bufio.Reader
	stderr *cappedBuffer
	err    error // why no request can be served any more; fs.ErrClosed after close

	killed atomic.Pointer[error] // the context's cause, when the context killed git
}

// startBatch starts `git cat-file --batch` in the repository at dir.
func startBatch(ctx context.Context, dir string) (*batch, error) {
	b := &batch{stderr: &cappedBuffer{limit: 64 << 10}}
	cmd := command(ctx, dir, "cat-file", "--batch")
	cmd.Cancel = func() error {
		cause := context.Cause(ctx)
		b.killed.Store(&cause)
		return cmd.Process.Kill()
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	b.cmd, b.stdin, b.out = cmd, stdin, bufio.NewReaderSize(stdout, 64<<10)
	return b, nil
}

// errTooLarge is what object returns for a blob over its limit; the
// caller turns it into a TooLargeError naming the file.
type errTooLarge struct{ size int64 }

func (e errTooLarge) Error() string { return fmt.Sprintf("%d bytes", e.size) }

// object asks git for the object name (any of git's object names: an id,
// "<commit>:<path>"; never with a line break, which would end the request
// early) and returns its type and, for a blob of at most limit bytes, its
// contents. An object that does not exist is an error wrapping
// fs.ErrNotExist; a blob over limit is read past (its contents are not
// kept) and refused with an errTooLarge; another type comes with no
// contents.
func (b *batch) object(name string, limit int64) (typ string, data []byte, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return "", nil, b.err
	}
	if _, err := io.WriteString(b.stdin, name+"\n"); err != nil {
		return "", nil, b.stop(err)
	}
	header, err := b.out.ReadString('\n')
	if err != nil {
		return "", nil, b.stop(err)
	}
	// "<id> <type> <size>\n", or "<name> missing\n" (the name may hold
	// spaces; an id never does).
	f := strings.Fields(header)
	if len(f) != 3 || !IsSHA(f[0]) {
		if strings.HasSuffix(header, " missing\n") {
			return "", nil, fs.ErrNotExist
		}
		return "", nil, b.stop(fmt.Errorf("unexpected answer %q", strings.TrimSpace(header)))
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return "", nil, b.stop(fmt.Errorf("unexpected answer %q", strings.TrimSpace(header)))
	}
	typ = f[1]
	if typ != "blob" || size > limit {
		// The contents and the newline that ends the record: read past.
		if _, err := io.CopyN(io.Discard, b.out, size+1); err != nil {
			return "", nil, b.stop(err)
		}
		if typ == "blob" {
			return typ, nil, errTooLarge{size}
		}
		return typ, nil, nil
	}
	data = make([]byte, size+1) // and the newline that ends the record
	if _, err := io.ReadFull(b.out, data); err != nil {
		return "", nil, b.stop(err)
	}
	if data[size] != '\n' {
		return "", nil, b.stop(errors.New("record does not end in a newline"))
	}
	return typ, data[:size], nil
}

// stop ends a process that can no longer be trusted to answer (git failed,
// was killed, or the protocol lost its way) and records why: the
// context's cause, else git's own message, else err. It returns that
// reason. b.mu is held.
func (b *batch) stop(err error) error {
	b.stdin.Close()
	_ = b.cmd.Process.Kill()
	_ = b.cmd.Wait()
	switch msg := firstLine(b.stderr.buf.String()); {
	case b.killed.Load() != nil:
		b.err = fmt.Errorf("git cat-file: stopped: %w", *b.killed.Load())
	case msg != "":
		b.err = fmt.Errorf("git cat-file: %s", msg)
	default:
		b.err = fmt.Errorf("git cat-file: %w", err)
	}
	return b.err
}

// close ends the process: git sees the end of its input and exits. After
// it, every request fails with fs.ErrClosed.
func (b *batch) close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		b.err = fs.ErrClosed
		return nil // stopped already; the request that saw it said why
	}
	b.err = fs.ErrClosed
	b.stdin.Close()
	_, _ = io.Copy(io.Discard, b.out)
	if err := b.cmd.Wait(); err != nil {
		if k := b.killed.Load(); k != nil {
			return fmt.Errorf("git cat-file: stopped: %w", *k)
		}
		if msg := firstLine(b.stderr.buf.String()); msg != "" {
			return fmt.Errorf("git cat-file: %s", msg)
		}
		return fmt.Errorf("git cat-file: %w", err)
	}
	return nil
}

// firstLine is the first line of git's message, trimmed.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// MaxFileBytes bounds one file read from git (Tree, Files): warden reads
// configuration, skills and the reviewed files' contents through it; a
// larger blob is refused (TooLargeError) rather than held in memory.
const MaxFileBytes = 32 << 20

// TooLargeError is a file of a commit over MaxFileBytes: its size is
// known, its contents were not read into memory.
type TooLargeError struct {
	Path, Rev   string
	Size, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s at %s: %d bytes, over the %s cap on a file read from git", e.Path, Short(e.Rev), e.Size, sizeString(e.Limit))
}

// sizeString writes a cap: "32 MiB", or "100 bytes" below a MiB.
func sizeString(n int64) string {
	if n >= 1<<20 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// FileSize is the file's size in bytes (so a caller that only needs to
// know how large it is has its answer).
func (e *TooLargeError) FileSize() int64 { return e.Size }

// Files reads the files of one commit, by path, through one long-lived
// `git cat-file --batch` process: what the commit holds, whatever the
// working tree shows, without listing the tree first and without one git
// process per file. A symbolic link reads as its target's text (what git
// stores); a path through a link, a directory or a submodule is not a file.
//
// OpenFiles starts the process; it lives until Close or until the context
// given to OpenFiles is done, which kills it. It is safe for concurrent use.
type Files struct {
	commit string
	b      *batch
	limit  int64 // MaxFileBytes (smaller in tests)
}

// OpenFiles resolves rev (a commit, a branch, HEAD, ...) in the repository
// at dir to its commit id, so that every file is read from the same commit
// even if rev moves, and starts the cat-file process. The caller must
// Close it.
func OpenFiles(ctx context.Context, dir, rev string) (*Files, error) {
	if !validRev(rev) {
		return nil, fmt.Errorf("git files: %q is not a revision", rev)
	}
	out, err := Output(ctx, dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return nil, fmt.Errorf("git files of %s: not a commit of the repository: %w", rev, err)
	}
	b, err := startBatch(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &Files{commit: strings.TrimSpace(string(out)), b: b, limit: MaxFileBytes}, nil
}

// validRev reports whether rev can be handed to git as a revision: not
// empty, not an option, one word.
func validRev(rev string) bool {
	return rev != "" && !strings.HasPrefix(rev, "-") && !strings.ContainsAny(rev, " \t\r\n\x00")
}

// Commit is the commit id the files are read from.
func (f *Files) Commit() string { return f.commit }

// ReadFile returns the contents of the file at path (slash-separated,
// relative to the repository's top level) in the commit. Its errors name
// the path and the commit: a path leaving the repository (or not clean:
// "a/../b", "/a", "./a") wraps fs.ErrInvalid and is never asked of git; one
// the commit does not hold wraps fs.ErrNotExist; a file over MaxFileBytes
// is a *TooLargeError; after Close, fs.ErrClosed.
func (f *Files) ReadFile(path string) ([]byte, error) {
	if !fs.ValidPath(path) || path == "." {
		return nil, fmt.Errorf("path %q leaves the repository: %w", path, fs.ErrInvalid)
	}
	if strings.ContainsAny(path, "\n\r") {
		// cat-file --batch reads one name per line.
		return nil, fmt.Errorf("path %q holds a line break: not read from git: %w", path, fs.ErrInvalid)
	}
	typ, data, err := f.b.object(f.commit+":"+path, f.limit)
	var big errTooLarge
	switch {
	case errors.As(err, &big):
		return nil, &TooLargeError{Path: path, Rev: f.commit, Size: big.size, Limit: f.limit}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s at %s: %w", path, Short(f.commit), fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("%s at %s: %w", path, Short(f.commit), err)
	case typ != "blob":
		return nil, fmt.Errorf("%s at %s: a %s, not a file", path, Short(f.commit), typ)
	}
	return data, nil
}

// Close ends the cat-file process; later reads fail with fs.ErrClosed.
func (f *Files) Close() error { return f.b.close() }
