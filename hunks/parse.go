package hunks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/org/warden/secrets"
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
// go-gitdiff's form or in ours. With s.keep > 0, fn gets a file cut to its
// first s.keep changed lines (cutFile) and the count of what was cut off.
func parse(s *section, fn func(*File, tail)) error {
	// A file that was cut waits for the sections that continue it.
	var pending *File
	var pendingTail tail
	flush := func() {
		if pending != nil {
			fn(pending, pendingTail)
			pending = nil
		}
	}
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
		for i, gf := range parsed {
			keep := 0
			switch {
			case i == 0 && s.continues:
				keep = -1 // every line of it is past the cut
			case i == 0 && s.cuts:
				keep = s.keep // only a section's first file is cut
			}
			f, cut, err := convertFile(gf, keep)
			if err != nil {
				return fmt.Errorf("parse diff: %w", err)
			}
			switch {
			case keep < 0:
				pendingTail.changed += cut.changed
				pendingTail.added += cut.added + s.short
				continue
			case keep > 0:
				flush()
				pending, pendingTail = f, tail{changed: cut.changed, added: cut.added + s.short}
				continue
			}
			flush()
			fn(f, cut)
		}
		if !s.next() {
			flush()
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
//
// With keep > 0 (PrepareDiff), a section that starts with "diff --git"
// shortens the body lines of its file's fragments past the file's first
// keep changed lines (the rule of cutFile) to their operation and line
// ending: go-gitdiff still checks and counts them, but their text, which
// no plan holds, is never held; short counts the added bytes it dropped.
// Each further fragment of that file is a section of its own (continues),
// the file's header given again before it, so go-gitdiff holds one of
// them at a time: a file of any size is parsed with the memory of its
// largest fragment.
type section struct {
	z        *normalizer
	keep     int
	held     []byte   // the line that starts the next section, read but not given
	heldKind lineKind // and where it sits
	atEnd    bool     // the section ended: its reads return io.EOF until next
	hasFile  bool     // this section gave a line that starts a file
	given    int64    // lines given in this section
	previous int64    // lines of the diff given in the sections before it
	pending  string   // what Read has not given yet of a line

	header    []string // the cut file's lines before its first fragment
	replay    []string // header lines still to give again (continues)
	replayed  int64    // lines given again in this section: not the diff's
	continues bool     // this section is a further fragment of the cut file
	split     bool     // the section ended before a further fragment of the cut file

	run     run   // where the section is in its file's fragments
	left    int   // changed lines before the cut
	cutting bool  // the cut is reached (or, between fragments, is due)
	short   int64 // added bytes dropped by shortening
	// cuts: the rule runs on the section's first file, whose conversion
	// then cuts it at the same line.
	cuts bool
}

// run is where a section is in the fragments it may shorten.
type run int

const (
	runOff    run = iota // not shortening: keep is 0, the section does not start with a file, or its fragments ended
	runBefore            // in the file's header, before its first fragment
	runIn                // in the file's fragments
)

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
	var b []byte
	var kind lineKind
	switch {
	case len(s.replay) > 0:
		b, kind = []byte(s.replay[0]), otherLine
		if s.replayed == 0 {
			kind = fileLine
		}
		s.replay = s.replay[1:]
		s.replayed++
	case s.held != nil:
		b, kind, s.held = s.held, s.heldKind, nil
	default:
		var err error
		b, kind, err = s.z.readLine()
		if err != nil {
			s.atEnd = true
			return "", err
		}
		if kind == fragmentLine && !bytes.HasPrefix(b, []byte("@@ -")) {
			kind = otherLine // go-gitdiff reads no fragment there
		}
		if kind == fileLine && s.hasFile ||
			kind == fragmentLine && s.run == runIn && (s.cutting || s.left == 0) {
			// A next file, or a further fragment of the cut file.
			s.held, s.heldKind, s.atEnd = bytes.Clone(b), kind, true
			s.split = kind == fragmentLine
			return "", io.EOF
		}
	}
	if kind == fileLine {
		s.run = runOff
		if s.given == 0 && s.keep > 0 {
			s.run, s.left, s.cuts = runBefore, s.keep, true // a file's part: its fragments may be shortened
			if s.continues {
				s.left = 0
			}
		}
		s.hasFile = true
	}
	if s.run == runBefore && !s.continues && mayBeWithheld(b) {
		s.run, s.cuts = runOff, false // a secret by its name: planned whole
	}
	s.given++
	line := s.shorten(b, kind)
	if s.run == runBefore && !s.continues {
		s.header = append(s.header, line)
	}
	return line, nil
}

// shorten applies keep (see section) to one line and returns it as a
// string.
func (s *section) shorten(b []byte, kind lineKind) string {
	switch {
	case s.run == runOff:
		return string(b)
	case kind == fragmentLine:
		s.run = runIn
		s.cutting = s.cutting || s.left == 0
		return string(b)
	case kind != bodyLine:
		if s.run == runIn && b[0] != '\\' { // a "\ No newline" marker ends a fragment, not the run
			s.run = runOff
		}
		return string(b)
	case s.run == runBefore || (b[0] != '+' && b[0] != '-' && b[0] != ' '):
		return string(b)
	}
	if !s.cutting && b[0] != ' ' {
		if s.left == 0 {
			s.cutting = true
		} else {
			s.left--
		}
	}
	if !s.cutting {
		return string(b)
	}
	text, end := b[1:], 0
	if t, ok := bytes.CutSuffix(text, []byte("\n")); ok {
		text, end = t, 1
		if t, ok := bytes.CutSuffix(text, []byte("\r")); ok {
			text, end = t, 2
		}
	}
	if b[0] == '+' {
		s.short += int64(len(text))
	}
	return shortLines[b[0]][end]
}

// shortLines are the shortened lines, by operation and line ending (none,
// "\n", "\r\n"): constants, so a shortened line costs no allocation.
var shortLines = map[byte][3]string{
	'+': {"+", "+\n", "+\r\n"},
	'-': {"-", "-\n", "-\r\n"},
	' ': {" ", " \n", " \r\n"},
}

// mayBeWithheld reports whether a line of a file's header ("diff --git",
// "+++", "rename to", ...) may name a file that is a secret by its name
// (secrets.Withheld): such a file is planned whole, never cut, since what
// it holds is reported from all of its lines. It reads the names loosely
// (a name with spaces is read in pieces, its last one holding the base
// name); a wrong yes only costs memory.
func mayBeWithheld(line []byte) bool {
	for _, f := range strings.Fields(string(line)) {
		f = strings.Trim(f, `"`)
		if secrets.Withheld(f) != "" || secrets.Withheld(strings.TrimPrefix(strings.TrimPrefix(f, "a/"), "b/")) != "" {
			return true
		}
	}
	return false
}

// next starts the next section; false at the input's end.
func (s *section) next() bool {
	if s.held == nil {
		return false
	}
	s.previous += s.given - s.replayed
	s.given, s.replayed, s.hasFile, s.atEnd = 0, 0, false, false
	s.run, s.cutting, s.short, s.cuts = runOff, false, 0, false
	s.continues, s.split = s.split, false
	if s.continues {
		s.replay = s.header // the file's header again, then the held fragment
	} else {
		s.header = nil
	}
	return true
}

// lineError makes go-gitdiff's "gitdiff: line N: ..." count the diff's
// lines, not the section's (its errors carry the number in their text
// only). An error in another form is returned as it is.
func (s *section) lineError(err error) error {
	rest, ok := strings.CutPrefix(err.Error(), "gitdiff: line ")
	if !ok || s.previous == 0 && s.replayed == 0 {
		return err
	}
	num, msg, ok := strings.Cut(rest, ":")
	n, perr := strconv.ParseInt(num, 10, 64)
	if !ok || perr != nil {
		return err
	}
	return fmt.Errorf("gitdiff: line %d:%s", n+s.previous-s.replayed, msg)
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

// tail is what convertFile cut off a file: its changed lines and the bytes
// of its added lines (as changedLines counts them).
type tail struct {
	changed int
	added   int64
}

// convertFile converts a go-gitdiff file. With keep > 0 it keeps the
// file's first keep changed lines only (as cutFile does) and counts the
// rest in the tail; with keep < 0 it keeps none. Every fragment's range is
// checked either way.
func convertFile(gf *gitdiff.File, keep int) (*File, tail, error) {
	f := fileHeader(gf)
	f.Fragments = make([]Fragment, 0, len(gf.TextFragments))
	c := &cutter{keep: keep, left: keep}
	for _, tf := range gf.TextFragments {
		if err := checkRange(tf.OldPosition, tf.OldLines); err != nil {
			return nil, tail{}, fmt.Errorf("%s: fragment %q: old side: %w", f.Path(), strings.TrimSpace(tf.Header()), err)
		}
		if err := checkRange(tf.NewPosition, tf.NewLines); err != nil {
			return nil, tail{}, fmt.Errorf("%s: fragment %q: new side: %w", f.Path(), strings.TrimSpace(tf.Header()), err)
		}
		if fr, ok := c.fragment(tf); ok {
			f.Fragments = append(f.Fragments, fr)
		}
	}
	return f, c.cut, nil
}

// fileHeader is a go-gitdiff file's paths, status and modes, without its
// fragments.
func fileHeader(gf *gitdiff.File) *File {
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
	return f
}

// cutter converts a file's fragments in order, keeping its first keep
// changed lines and the context that directly follows them (keep > 0;
// cutFile's rule), none (keep < 0) or all (0), and counts what it cuts.
type cutter struct {
	keep, left int
	cutting    bool
	cut        tail
}

// fragment converts one fragment; false when all of it is cut.
func (c *cutter) fragment(tf *gitdiff.TextFragment) (Fragment, bool) {
	c.cutting = c.cutting || (c.keep != 0 && c.left <= 0)
	fr := Fragment{
		OldStart: int(tf.OldPosition), OldLines: int(tf.OldLines),
		NewStart: int(tf.NewPosition), NewLines: int(tf.NewLines),
		Section: tf.Comment,
	}
	if !c.cutting {
		fr.Lines = make([]Line, 0, c.kept(tf.Lines))
	}
	oldN, newN := fr.OldStart, fr.NewStart
	for _, gl := range tf.Lines {
		l := convertLine(gl, &oldN, &newN)
		if c.keep > 0 && !c.cutting && l.Op != Context {
			if c.left == 0 {
				c.cutting = true
			} else {
				c.left--
			}
		}
		if !c.cutting {
			fr.Lines = append(fr.Lines, l)
			continue
		}
		if l.Op != Context {
			c.cut.changed++
		}
		if l.Op == Add {
			c.cut.added += int64(len(l.Text)) + 1
		}
	}
	if fr.Lines == nil {
		return fr, false
	}
	if len(fr.Lines) < len(tf.Lines) {
		fr = recount(fr, fr.Lines)
	}
	return fr, true
}

// kept is how many of lines the fragment keeps before the cut: all of them
// without keep. A fragment of millions of lines that the cut reaches early
// (one hunk of a large new file) so holds only what it keeps: sized for the
// whole fragment, the slice alone took 48 bytes a line of the diff.
func (c *cutter) kept(lines []gitdiff.Line) int {
	if c.keep <= 0 {
		return len(lines)
	}
	left := c.left
	for i, gl := range lines {
		if gl.Op != gitdiff.OpContext {
			if left == 0 {
				return i
			}
			left--
		}
	}
	return len(lines)
}

// convertLine converts one line of a fragment, numbering it from the old
// and new lines it advances.
func convertLine(gl gitdiff.Line, oldN, newN *int) Line {
	l := Line{Text: gl.Line, NoNewline: gl.NoEOL()}
	l.Text = strings.TrimSuffix(l.Text, "\n")
	if t, ok := strings.CutSuffix(l.Text, "\r"); ok {
		l.Text, l.CRLF = t, true
	}
	switch gl.Op {
	case gitdiff.OpAdd:
		l.Op, l.NewLine = Add, *newN
		*newN++
	case gitdiff.OpDelete:
		l.Op, l.OldLine = Delete, *oldN
		*oldN++
	default:
		l.Op, l.OldLine, l.NewLine = Context, *oldN, *newN
		*oldN++
		*newN++
	}
	return l
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
