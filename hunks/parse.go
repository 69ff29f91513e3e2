package hunks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
)

// ErrNotDiff is returned (wrapped) by Parse when non-blank input holds no
// file header at all: it is not a diff.
var ErrNotDiff = errors.New("not a unified diff")

// maxLineNumber bounds the line numbers a fragment header may claim, so that
// arithmetic on them can never overflow.
const maxLineNumber = math.MaxInt32

// Parse reads git's unified diff format (git diff / git show / format-patch
// output, and plain "diff -u" output) and returns its files in input order.
//
// Blank input, and a commit header with no file changes (git show of an
// empty commit), give no files and no error. Other input without a single
// "diff --git" or "---"/"+++" file header gives an error wrapping
// ErrNotDiff. A malformed diff gives an error naming the line. Paths of a
// plain "diff -u" are kept as written (only git's "a/" and "b/" prefixes are
// known to be removable). A "\r\n" line ending outside a fragment's lines
// (a diff saved by a CRLF tool) is read as "\n": it never reaches a path.
// ParseLimit adds a size cap and reports blank input.
func Parse(r io.Reader) ([]*File, error) {
	files, err := ParseLimit(r, 0)
	if errors.Is(err, ErrEmpty) {
		return nil, nil
	}
	return files, err
}

// parse parses the normalised input one file's part of the diff at a time
// (section) and gives fn each file: a large diff is never held whole, in
// go-gitdiff's form or in ours.
func parse(s *section, fn func(*File)) error {
	for first := true; ; first = false {
		parsed, preamble, err := parseSection(s)
		if err != nil {
			return fmt.Errorf("parse diff: %w", s.lineError(err))
		}
		if first && len(parsed) == 0 { // not a single file header in the input
			if strings.TrimSpace(preamble) == "" || isCommitHeader(preamble) {
				return nil
			}
			return fmt.Errorf(`%w: no "diff --git" or "---/+++" header found`, ErrNotDiff)
		}
		for _, gf := range parsed {
			f, err := convertFile(gf)
			if err != nil {
				return fmt.Errorf("parse diff: %w", err)
			}
			fn(f)
		}
		if !s.next() {
			return nil
		}
	}
}

// parseSection runs go-gitdiff on the current section.
func parseSection(s *section) (files []*gitdiff.File, preamble string, err error) {
	defer func() {
		// go-gitdiff is third-party code fed with untrusted input: a panic
		// in it is a parse error, never a crash of the review.
		if p := recover(); p != nil {
			files, err = nil, fmt.Errorf("internal error: %v", p)
		}
	}()
	return gitdiff.Parse(s)
}

// section hands go-gitdiff one file's part of a diff at a time: the lines
// up to the next "diff --git" line that starts a file (outside a
// fragment's body), the first part also holding what precedes the first
// file. go-gitdiff parses a whole input at once; cut at the files'
// boundaries, a diff of any size is parsed with the memory of its largest
// file. Text between files (a format-patch mail's headers) stays with the
// file before it, where go-gitdiff skips it as it would in one input.
type section struct {
	z        *normalizer
	held     string // the line that starts the next section, read but not given
	atEnd    bool   // the section ended: its reads return io.EOF until next
	hasFile  bool   // this section gave a line that starts a file
	given    int64  // lines given in this section
	previous int64  // lines given in the sections before it
	pending  string // what Read has not given yet of a line
}

// Read makes a section an io.Reader; go-gitdiff reads it with ReadString.
func (s *section) Read(p []byte) (int, error) {
	for s.pending == "" {
		line, err := s.ReadString('\n')
		if err != nil {
			return 0, err
		}
		s.pending = line
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// ReadString gives the section's next line as bufio.Reader would (go-gitdiff
// reads through it); io.EOF at the section's end.
func (s *section) ReadString(byte) (string, error) {
	if s.atEnd {
		return "", io.EOF
	}
	line := s.held
	if line != "" {
		s.held = ""
	} else {
		var fileStart bool
		var err error
		line, fileStart, err = s.z.readLine()
		if err != nil {
			s.atEnd = true
			return "", err
		}
		if fileStart && s.hasFile {
			s.held, s.atEnd = line, true
			return "", io.EOF
		}
	}
	if strings.HasPrefix(line, "diff --git ") {
		s.hasFile = true
	}
	s.given++
	return line, nil
}

// next starts the next section; false at the input's end.
func (s *section) next() bool {
	if s.held == "" {
		return false
	}
	s.previous += s.given
	s.given, s.hasFile, s.atEnd = 0, false, false
	return true
}

// lineError makes go-gitdiff's "gitdiff: line N: ..." count the diff's
// lines, not the section's (its errors carry the number in their text
// only). An error in another form is returned as it is.
func (s *section) lineError(err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "gitdiff: line ")
	if !ok || s.previous == 0 {
		return err
	}
	num, msg, ok := strings.Cut(rest, ":")
	n, perr := strconv.ParseInt(num, 10, 64)
	if !ok || perr != nil {
		return err
	}
	return fmt.Errorf("gitdiff: line %d:%s", n+s.previous, msg)
}

// isCommitHeader reports whether text is the header of a commit as git show
// or git format-patch print it.
func isCommitHeader(text string) bool {
	h, err := gitdiff.ParsePatchHeader(text)
	if err != nil || (len(h.SHA) != 40 && len(h.SHA) != 64) {
		return false
	}
	return strings.Trim(h.SHA, "0123456789abcdef") == ""
}

func convertFile(gf *gitdiff.File) (*File, error) {
	f := &File{
		OldPath: gf.OldName,
		NewPath: gf.NewName,
		Status:  Modified,
		OldMode: gitMode(gf.OldMode),
		NewMode: gitMode(gf.NewMode),
		Binary:  gf.IsBinary,
	}
	if f.NewMode == 0 && !gf.IsNew && !gf.IsDelete {
		f.NewMode = f.OldMode // the mode of an "index" line holds for both sides
	}
	switch {
	case gf.IsNew:
		f.Status, f.OldPath = Added, ""
	case gf.IsDelete:
		f.Status, f.NewPath = Deleted, ""
	case gf.IsRename:
		f.Status = Renamed
	case gf.IsCopy:
		f.Status = Copied
	}
	f.ModeOnly = f.OldMode != 0 && f.NewMode != 0 && f.OldMode != f.NewMode &&
		len(gf.TextFragments) == 0 && !f.Binary && f.Status == Modified
	f.Fragments = make([]Fragment, 0, len(gf.TextFragments))
	for _, tf := range gf.TextFragments {
		if err := checkRange(tf.OldPosition, tf.OldLines); err != nil {
			return nil, fmt.Errorf("%s: fragment %q: old side: %w", f.Path(), strings.TrimSpace(tf.Header()), err)
		}
		if err := checkRange(tf.NewPosition, tf.NewLines); err != nil {
			return nil, fmt.Errorf("%s: fragment %q: new side: %w", f.Path(), strings.TrimSpace(tf.Header()), err)
		}
		fr := Fragment{
			OldStart: int(tf.OldPosition), OldLines: int(tf.OldLines),
			NewStart: int(tf.NewPosition), NewLines: int(tf.NewLines),
			Section: tf.Comment,
			Lines:   make([]Line, 0, len(tf.Lines)),
		}
		oldN, newN := fr.OldStart, fr.NewStart
		for _, gl := range tf.Lines {
			l := Line{Text: gl.Line, NoNewline: gl.NoEOL()}
			l.Text = strings.TrimSuffix(l.Text, "\n")
			if t, ok := strings.CutSuffix(l.Text, "\r"); ok {
				l.Text, l.CRLF = t, true
			}
			switch gl.Op {
			case gitdiff.OpAdd:
				l.Op, l.NewLine = Add, newN
				newN++
			case gitdiff.OpDelete:
				l.Op, l.OldLine = Delete, oldN
				oldN++
			default:
				l.Op, l.OldLine, l.NewLine = Context, oldN, newN
				oldN++
				newN++
			}
			fr.Lines = append(fr.Lines, l)
		}
		f.Fragments = append(f.Fragments, fr)
	}
	return f, nil
}

// checkRange rejects a fragment range that no diff tool writes: negative,
// starting at line 0 with lines in it, or beyond maxLineNumber.
func checkRange(start, lines int64) error {
	switch {
	case start < 0 || lines < 0 || start+lines > maxLineNumber:
		return fmt.Errorf("line number out of range")
	case start == 0 && lines > 0:
		return fmt.Errorf("lines start at line 0")
	}
	return nil
}

// gitMode converts one of git's octal modes (0100644, 0100755, 0120000,
// 0160000, 040000) to an fs.FileMode: regular files keep their permission
// bits, a symlink gets fs.ModeSymlink, a submodule (gitlink) or directory
// gets fs.ModeDir.
func gitMode(m fs.FileMode) fs.FileMode {
	perm := m & 0o777
	switch m & 0o170000 {
	case 0o120000:
		return fs.ModeSymlink | perm
	case 0o160000, 0o040000:
		return fs.ModeDir | perm
	}
	return perm
}
