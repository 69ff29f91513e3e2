package hunks

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
)

// ErrTooLarge is returned (wrapped, with the cap in the message) by
// ParseLimit for input larger than its limit.
var ErrTooLarge = errors.New("diff too large")

// ErrEmpty is returned (wrapped) by ParseLimit for input that is empty or
// only white space: no diff at all, which is not the same as a diff of no
// change (a commit header without files). A failed command upstream in a
// pipe looks like this; Parse treats it as no files.
var ErrEmpty = errors.New("empty input")

// ParseLimit is Parse with a cap of limit bytes on the input (no cap when
// limit <= 0) and an error wrapping ErrEmpty for blank input.
//
// The cap is checked before anything is read when r knows its size (an
// *os.File of a regular file, a *bytes.Reader, a *strings.Reader, or any
// reader with Stat or Size), and otherwise while the input streams through
// the parser: the input is never buffered whole, and parsing stops with an
// error wrapping ErrTooLarge as soon as byte limit+1 arrives.
func ParseLimit(r io.Reader, limit int64) ([]*File, error) {
	var files []*File
	if err := parseEach(r, limit, 0, func(f *File, _ tail) { files = append(files, f) }); err != nil {
		return nil, err
	}
	return files, nil
}

// parseEach reads a diff as ParseLimit does and gives each file to fn as
// soon as it is parsed, one file's part of the diff at a time: what fn does
// not keep is never held. With keep > 0 a file comes cut to its first keep
// changed lines, with the count of the rest (see section). On an error, fn
// may have had the files before it.
func parseEach(r io.Reader, limit int64, keep int, fn func(*File, tail)) error {
	if limit > 0 {
		if n, ok := knownSize(r); ok && n > limit {
			return fmt.Errorf("%w: %s, over the %s cap", ErrTooLarge, sizeString(n), sizeString(limit))
		}
	}
	z := &normalizer{r: bufio.NewReaderSize(r, 64<<10), limit: limit, blank: true}
	err := parse(&section{z: z, keep: keep}, fn)
	switch {
	case z.over:
		return fmt.Errorf("%w: over the %s cap", ErrTooLarge, sizeString(limit))
	case z.err != nil:
		return fmt.Errorf("read diff: %w", z.err)
	case err != nil:
		return err
	case z.blank:
		return ErrEmpty
	}
	return nil
}

// knownSize returns the size of r when r can tell it without being read.
func knownSize(r io.Reader) (int64, bool) {
	switch v := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := v.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size(), true
		}
	case interface{ Size() int64 }:
		return v.Size(), true
	case interface{ Len() int }:
		return int64(v.Len()), true
	}
	return 0, false
}

// sizeString writes n bytes as "600 MiB", "12 KiB" or "17 bytes".
func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// normalizer reads a diff line by line for the parser: it counts bytes
// against limit, notes whether anything but white space arrived, and
// removes the "\r" of a "\r\n" from every line outside a fragment's body
// (file headers, "---"/"+++" lines, "@@" headers, "\ No newline" markers),
// so a diff that went through a CRLF tool never puts "\r" into a path or a
// mode. Lines of a fragment's body keep their "\r": Parse records it in
// Line.CRLF. It follows the fragment's line counts as git writes them, which
// also tells where a file's part of the diff may start (section); where a
// malformed diff makes it lose count, the parser reports the error.
type normalizer struct {
	r     *bufio.Reader
	limit int64
	n     int64
	over  bool
	blank bool
	err   error // a read error other than io.EOF

	oldLeft, newLeft int // lines still due in the current fragment
	long             []byte
}

// lineKind is where a line sits in the diff, as the normalizer follows it.
type lineKind int

const (
	otherLine    lineKind = iota // outside a fragment's body: a header, a marker, text between files
	fileLine                     // "diff --git" outside a fragment's body: a file's part starts
	fragmentLine                 // an "@@" header whose counts the normalizer follows
	bodyLine                     // a line of a fragment's body
)

// readLine returns the next line with its "\n" (the last line may have
// none), valid until the next call, and where it sits. At the end of the
// input it returns nil and io.EOF; on ErrTooLarge or a read error, nil and
// that error.
func (z *normalizer) readLine() ([]byte, lineKind, error) {
	b, err := z.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) { // a line longer than the buffer: gather it
		z.long = append(z.long[:0], b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = z.r.ReadSlice('\n')
			z.long = append(z.long, b...)
		}
		b = z.long
	}
	switch {
	case err == nil, err == io.EOF && len(b) > 0:
	case err == io.EOF:
		return nil, otherLine, io.EOF
	default:
		z.err = err
		return nil, otherLine, err
	}
	z.n += int64(len(b))
	if z.limit > 0 && z.n > z.limit {
		z.over = true
		return nil, otherLine, ErrTooLarge
	}
	if z.blank && len(bytes.TrimSpace(b)) > 0 {
		z.blank = false
	}
	if cap(z.long) > 1<<20 {
		z.long = nil // do not keep a very long line's buffer (b still holds it)
	}
	b, kind := z.line(b)
	return b, kind, nil
}

// line normalises one whole line (in place) and says where it sits.
func (z *normalizer) line(b []byte) ([]byte, lineKind) {
	if z.oldLeft > 0 || z.newLeft > 0 {
		switch {
		case b[0] == ' ' || b[0] == '\n' || b[0] == '\r':
			z.oldLeft, z.newLeft = max(z.oldLeft-1, 0), max(z.newLeft-1, 0)
			return b, bodyLine
		case b[0] == '-':
			z.oldLeft--
			return b, bodyLine
		case b[0] == '+':
			z.newLeft--
			return b, bodyLine
		case b[0] == '\\':
			return trimCR(b), bodyLine
		}
		z.oldLeft, z.newLeft = 0, 0 // lost count: the parser will say why
	}
	b = trimCR(b)
	switch {
	case bytes.HasPrefix(b, []byte("@@ ")):
		z.oldLeft, z.newLeft = fragmentCounts(b)
		return b, fragmentLine
	case bytes.HasPrefix(b, []byte("diff --git ")):
		return b, fileLine
	}
	return b, otherLine
}

// trimCR turns a line's "\r\n" ending into "\n" (in place).
func trimCR(b []byte) []byte {
	if n := len(b); n >= 2 && b[n-2] == '\r' && b[n-1] == '\n' {
		b[n-2] = '\n'
		return b[:n-1]
	}
	return b
}

// fragmentCounts reads the old and new line counts of an "@@ -a,b +c,d @@"
// header (a count left out is 1); a header it cannot read gives 0, 0.
func fragmentCounts(h []byte) (oldN, newN int) {
	fields := bytes.Fields(h)
	if len(fields) < 4 || !bytes.Equal(fields[3], []byte("@@")) {
		return 0, 0
	}
	count := func(f []byte, sign byte) int {
		if len(f) < 2 || f[0] != sign {
			return 0
		}
		_, c, ok := bytes.Cut(f[1:], []byte(","))
		if !ok {
			return 1
		}
		n, err := strconv.Atoi(string(c))
		if err != nil || n < 0 {
			return 0
		}
		return n
	}
	return count(fields[1], '-'), count(fields[2], '+')
}
