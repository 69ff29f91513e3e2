// Package gitrepo runs git for warden: its output capped or streamed, its
// diff format fixed whatever the user's configuration says, a commit's tree
// read as an fs.FS from the object database (Tree), never from the working
// tree, and a commit's files read by path (Files), both through one
// long-lived `git cat-file --batch` process, not one git process per file
// (Started counts the processes); a merge base or why the local history
// has none (HistoryError); fetches from a remote with an access token git
// gets through its environment (Remote).
//
// It owns how warden calls git. Of this module it imports only secrets (a
// token in git's message is masked there), and it reads no environment of
// its own.
package gitrepo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/org/warden/secrets"
)

// MaxOutput bounds what warden reads from git or a diff (a --diff file,
// standard input or git's output), so a runaway input fails with a clear
// one-line error naming the input and the cap instead of exhausting memory.
// It is a hard cap, not a setting: what a review covers is bounded by
// [filters] max_files, max_changed_lines and max_file_bytes, each reported
// per path; this one only keeps the process alive.
const MaxOutput = 512 << 20

// ErrTooLarge is the error of a diff over MaxOutput.
var ErrTooLarge = fmt.Errorf("larger than the %d MiB cap on a diff (review a smaller range)", MaxOutput>>20)

// ReadCapped reads r to its end, or fails with ErrTooLarge after more than
// limit bytes.
func ReadCapped(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err == nil && int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, err
}

// cappedBuffer collects a command's output up to limit bytes; a write past
// it fails (git then gets EPIPE and stops) and sets over. It does not embed
// bytes.Buffer, whose ReadFrom io.Copy would call instead of Write.
type cappedBuffer struct {
	buf   bytes.Buffer
	limit int64
	over  bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if int64(b.buf.Len()+len(p)) > b.limit {
		b.over = true
		return 0, ErrTooLarge
	}
	return b.buf.Write(p)
}

func (b *cappedBuffer) Bytes() []byte { return b.buf.Bytes() }
func (b *cappedBuffer) Len() int      { return b.buf.Len() }

// DiffArgs make git's output parseable whatever the user's git config
// says: no colour, no external diff or textconv, standard a/ b/ prefixes,
// renames and copies detected.
var DiffArgs = []string{
	"-c", "core.quotePath=true", "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false",
	"-c", "color.ui=never", "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M", "-C",
}

// started counts the git processes commandEnv made.
var started atomic.Int64

// Started is the number of git processes this package has started since
// the program began (each command once, however long it lives): how a test
// tells that reading a change costs a few processes, not one per file.
func Started() int64 { return started.Load() }

// command is git in dir with the process's environment.
func command(ctx context.Context, dir string, args ...string) *exec.Cmd {
	return commandEnv(ctx, nil, dir, args...)
}

// commandEnv is git in dir with env as its environment (nil: the
// process's), its pager and language fixed: the one place a git process is
// made (every function of the package runs git through it), so Started
// counts them all.
func commandEnv(ctx context.Context, env []string, dir string, args ...string) *exec.Cmd {
	started.Add(1)
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	if env == nil {
		env = os.Environ()
	}
	// Never a prompt for credentials: a fetch that needs them fails.
	cmd.Env = append(env[:len(env):len(env)], "GIT_PAGER=cat", "LC_ALL=C", "GIT_TERMINAL_PROMPT=0")
	return cmd
}

// TopLevel is the top level of the git checkout dir is in (git rev-parse
// --show-toplevel), or dir when it is in none (or git is missing).
func TopLevel(ctx context.Context, dir string) string {
	out, err := Output(ctx, dir, "rev-parse", "--show-toplevel")
	if top := strings.TrimSpace(string(out)); err == nil && top != "" {
		return top
	}
	return dir
}

// Output runs git in dir and returns its standard output; a failure names
// the command and quotes git's own message.
func Output(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return OutputEnv(ctx, nil, dir, args...)
}

// OutputEnv is Output with env as git's whole environment (nil: the
// process's): a caller that is given its environment, such as `warden
// eval` fetching a corpus with the user's git configuration, passes it.
func OutputEnv(ctx context.Context, env []string, dir string, args ...string) ([]byte, error) {
	var stderr bytes.Buffer
	stdout := &cappedBuffer{limit: MaxOutput}
	cmd := commandEnv(ctx, env, dir, args...)
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	if stdout.over {
		return nil, fmt.Errorf("git %s: output %w", strings.Join(args, " "), ErrTooLarge)
	}
	out := stdout.Bytes()
	if err != nil {
		return nil, failed(args, stderr.String(), err)
	}
	return out, nil
}

// failed is the error of a git command that failed: the command and the
// first line of git's message (else how it ended).
func failed(args []string, stderr string, err error) error {
	msg := firstLine(stderr)
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
}

// Stream runs git in dir and returns its standard output as git writes it,
// so that a large output is read as it comes and never held whole. What
// was read is git's whole output only once the reader gave io.EOF and
// Close returned nil: Close waits for git and returns its failure (naming
// the command, quoting git's message). Closing before io.EOF stops git
// (the reader wanted no more) and returns nil. The context kills git.
func Stream(ctx context.Context, dir string, args ...string) (io.ReadCloser, error) {
	s := &stream{args: args, stderr: &cappedBuffer{limit: 64 << 10}}
	s.cmd = command(ctx, dir, args...)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	s.out = out
	return s, nil
}

// stream is Stream's reader.
type stream struct {
	args   []string
	cmd    *exec.Cmd
	out    io.ReadCloser
	stderr *cappedBuffer
	eof    bool // git's output ended
	closed bool
	err    error
}

func (s *stream) Read(p []byte) (int, error) {
	n, err := s.out.Read(p)
	if err == io.EOF {
		s.eof = true
	}
	return n, err
}

// Close waits for git; see Stream. It returns the same on every call.
func (s *stream) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	s.out.Close()
	if !s.eof {
		_ = s.cmd.Process.Kill() // the reader stopped early: git need not finish
		_ = s.cmd.Wait()
		return nil
	}
	if err := s.cmd.Wait(); err != nil {
		s.err = failed(s.args, s.stderr.buf.String(), err)
	}
	return s.err
}

// IsRepo reports whether dir is inside a git checkout.
func IsRepo(ctx context.Context, dir string) bool {
	_, err := Output(ctx, dir, "rev-parse", "--git-dir")
	return err == nil
}

// WorktreeDiff is the uncommitted change: tracked files against HEAD, plus
// untracked files that are not ignored, as new files.
func WorktreeDiff(ctx context.Context, dir string) ([]byte, error) {
	if _, err := Output(ctx, dir, "rev-parse", "--verify", "--quiet", "HEAD"); err != nil {
		return nil, fmt.Errorf("%s is not a git repository with a commit to compare against (HEAD): %w", dir, err)
	}
	diff, err := Output(ctx, dir, append(DiffArgs, "HEAD", "--")...)
	if err != nil {
		return nil, err
	}
	untracked, err := Output(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	for _, path := range strings.Split(string(untracked), "\x00") {
		if path == "" {
			continue
		}
		// --no-index exits 1 when the files differ, which they always do.
		out := &cappedBuffer{limit: MaxOutput - int64(len(diff))}
		cmd := command(ctx, dir, append(DiffArgs, "--no-index", "--", os.DevNull, path)...)
		cmd.Stdout = out
		err := cmd.Run()
		if out.over {
			return nil, fmt.Errorf("git diff HEAD with the untracked files: %w", ErrTooLarge)
		}
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				return nil, fmt.Errorf("git diff --no-index %s: %w", path, err)
			}
		}
		diff = append(diff, out.Bytes()...)
	}
	return diff, nil
}

// RangeDiff streams the change from the merge-base of base and head to
// head: what a pull request from head into base shows (Stream; the caller
// must Close it, and caps what it reads). A base or head the repository
// does not have, or two with no common ancestor, is a *HistoryError.
func RangeDiff(ctx context.Context, dir, base, head string) (io.ReadCloser, error) {
	mb, err := MergeBase(ctx, dir, base, head)
	if err != nil {
		return nil, err
	}
	return Stream(ctx, dir, append(DiffArgs, mb, head, "--")...)
}

// The history errors (HistoryError.Err).
var (
	ErrNoRevision  = errors.New("no such revision")
	ErrNoMergeBase = errors.New("no common ancestor")
)

// HistoryError is a revision, or the common ancestor of two, that the
// local history does not have. In a shallow repository (git clone --depth,
// the Actions checkout's default) that may only mean it was not fetched.
type HistoryError struct {
	Rev     string // the revision not found; for ErrNoMergeBase the first of the two
	Err     error  // ErrNoRevision or ErrNoMergeBase
	Shallow bool   // the repository is shallow
	// Remote is the remote the history would come from: origin, else the
	// first one; "" when the repository has none.
	Remote string
}

func (e *HistoryError) Error() string {
	if errors.Is(e.Err, ErrNoMergeBase) {
		return fmt.Sprintf("%s and HEAD: %v", e.Rev, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Rev, e.Err)
}

func (e *HistoryError) Unwrap() error { return e.Err }

// MergeBase is the best common ancestor of the commits a and b name. A
// revision the repository does not have, or none in common, is a
// *HistoryError.
func MergeBase(ctx context.Context, dir, a, b string) (string, error) {
	for _, rev := range []string{a, b} {
		if _, err := Output(ctx, dir, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}"); err != nil {
			return "", &HistoryError{Rev: rev, Err: ErrNoRevision, Shallow: IsShallow(ctx, dir), Remote: remoteName(ctx, dir)}
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := command(ctx, dir, "merge-base", a, b)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0: // git's answer for none
		return "", &HistoryError{Rev: a, Err: ErrNoMergeBase, Shallow: IsShallow(ctx, dir), Remote: remoteName(ctx, dir)}
	case err != nil:
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		return "", fmt.Errorf("git merge-base %s %s: %s", a, b, cmp.Or(msg, err.Error()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

// remoteName is the checkout's remote: origin when there is one, else the
// first; "" for none.
func remoteName(ctx context.Context, dir string) string {
	out, err := Output(ctx, dir, "remote")
	if err != nil {
		return ""
	}
	switch names := strings.Fields(string(out)); {
	case len(names) == 0:
		return ""
	case slices.Contains(names, "origin"):
		return "origin"
	default:
		return names[0]
	}
}

// IsShallow reports whether the repository at dir is shallow: its history
// stops where the clone or fetch was cut (--depth, --shallow-since).
func IsShallow(ctx context.Context, dir string) bool {
	out, err := Output(ctx, dir, "rev-parse", "--is-shallow-repository")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// Remote is where fetches go: a remote of the checkout ("origin"), and an
// access token for the URLs under TokenURL (the GitHub server's), sent as
// the Authorization header the Actions checkout sends (basic, user
// x-access-token) through git's environment, never its command line,
// which any process may read. git sends it to no other URL. The token
// prints, formats and logs as REDACTED.
type Remote struct {
	name, tokenURL, token string
}

// NewRemote is the remote name of a checkout, with token for the URLs
// under tokenURL ("" for none).
func NewRemote(name, tokenURL, token string) Remote {
	return Remote{name: cmp.Or(name, "origin"), tokenURL: tokenURL, token: token}
}

func (r Remote) String() string {
	if r.token == "" || r.tokenURL == "" {
		return r.name
	}
	return fmt.Sprintf("%s (token for %s: %s)", r.name, r.tokenURL, secrets.Masked)
}

// GoString is String, for %#v.
func (r Remote) GoString() string { return r.String() }

// LogValue is String, for log/slog.
func (r Remote) LogValue() slog.Value { return slog.StringValue(r.String()) }

// env is the git configuration that sends the token to tokenURL's URLs:
// an empty http.<url>.extraheader first, which drops one a checkout left
// in the repository's configuration (actions/checkout's
// persist-credentials), so that the request carries one Authorization
// header.
func (r Remote) env() []string {
	if r.token == "" || r.tokenURL == "" {
		return nil
	}
	key := "http." + r.tokenURL + ".extraheader"
	header := "AUTHORIZATION: basic " + r.basic()
	return []string{"GIT_CONFIG_COUNT=2", "GIT_CONFIG_KEY_0=" + key, "GIT_CONFIG_VALUE_0=", "GIT_CONFIG_KEY_1=" + key, "GIT_CONFIG_VALUE_1=" + header}
}

// basic is the token as basic authentication's credential.
func (r Remote) basic() string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + r.token))
}

// Fetch fetches refs (commit ids, refs) from the remote into the checkout
// at dir as git objects only (no tags, no submodules, nothing checked
// out), with opts before them (--depth=N, --deepen=N, --unshallow). A
// failure quotes git's message, never the token.
func (r Remote) Fetch(ctx context.Context, dir string, opts []string, refs ...string) error {
	args := append(append([]string{"fetch", "--no-tags", "--quiet", "--no-recurse-submodules"}, opts...), cmp.Or(r.name, "origin"))
	args = append(args, refs...)
	var stderr bytes.Buffer
	cmd := command(ctx, dir, args...)
	cmd.Env = append(cmd.Env, r.env()...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
		if r.token != "" {
			msg = secrets.Mask(msg, r.token, r.basic())
		}
		return fmt.Errorf("git %s: %s", strings.Join(args, " "), cmp.Or(msg, err.Error()))
	}
	return nil
}

// EnsureCommit fetches commit sha from the remote unless the checkout at
// dir has it. In a shallow checkout it fetches the commit alone
// (--depth=1), not its whole history.
func (r Remote) EnsureCommit(ctx context.Context, dir, sha string) error {
	if HasCommit(ctx, dir, sha) {
		return nil
	}
	var opts []string
	if IsShallow(ctx, dir) {
		opts = []string{"--depth=1"}
	}
	return r.Fetch(ctx, dir, opts, sha)
}

// HasCommit reports whether the checkout at dir has commit sha.
func HasCommit(ctx context.Context, dir, sha string) bool {
	_, err := Output(ctx, dir, "cat-file", "-e", sha+"^{commit}")
	return err == nil
}

// IsSHA reports whether s is a full commit id (SHA-1 or SHA-256), lower-case hex.
func IsSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

// Short is a commit id's first seven characters.
func Short(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}
