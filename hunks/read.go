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
	if limit > 0 {
		if n, ok := knownSize(r); ok && n > limit {
			return nil, fmt.Errorf("%w: %s, over the %s cap", ErrTooLarge, sizeString(n), sizeString(limit))
		}
	}
	nr := &normalizer{r: bufio.NewReaderSize(r, 64<<10), limit: limit, blank: true}
	files, err := parse(nr)
	switch {
	case nr.over:
		return nil, fmt.Errorf("%w: over the %s cap", ErrTooLarge, sizeString(limit))
	case nr.err != nil:
		return nil, fmt.Errorf("read diff: %w", nr.err)
	case err != nil:
		return nil, err
	case nr.blank:
		return nil, ErrEmpty
	}
	return files, nil
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

// normalizer streams a diff to the parser line by line: it counts bytes
// against limit, notes whether anything but white space arrived, and
// removes the "\r" of a "\r\n" from every line outside a fragment's body
// (file headers, "---"/"+++" lines, "@@" headers, "\ No newline" markers),
// so a diff that went through a CRLF tool never puts "\r" into a path or a
// mode. Lines of a fragment's body keep their "\r": Parse records it in
// Line.CRLF. It follows the fragment's line counts as git writes them; where
// a malformed diff makes it lose count, the parser reports the error.
type normalizer struct {
	r     *bufio.Reader
	limit int64
	n     int64
	over  bool
	blank bool
	err   error // a read error other than io.EOF

	oldLeft, newLeft int  // lines still due in the current fragment
	midLine          bool // the previous piece did not end its line
	pending          []byte
}

func (z *normalizer) Read(p []byte) (int, error) {
	for len(z.pending) == 0 {
		line, err := z.r.ReadSlice('\n')
		if len(line) > 0 {
			z.n += int64(len(line))
			if z.limit > 0 && z.n > z.limit {
				z.over = true
				return 0, ErrTooLarge
			}
			if z.blank && len(bytes.TrimSpace(line)) > 0 {
				z.blank = false
			}
			z.pending = z.line(line, errors.Is(err, bufio.ErrBufferFull))
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			if len(z.pending) == 0 {
				return 0, io.EOF
			}
		default:
			z.err = err
			return 0, err
		}
	}
	n := copy(p, z.pending)
	z.pending = z.pending[n:]
	return n, nil
}

// line handles one piece of input: a whole line, or (partial) a piece of a
// line longer than the buffer, which passes unchanged.
func (z *normalizer) line(b []byte, partial bool) []byte {
	first := !z.midLine
	z.midLine = partial
	if !first {
		return b
	}
	if z.oldLeft > 0 || z.newLeft > 0 {
		switch {
		case b[0] == ' ' || b[0] == '\n' || b[0] == '\r':
			z.oldLeft, z.newLeft = max(z.oldLeft-1, 0), max(z.newLeft-1, 0)
			return b
		case b[0] == '-':
			z.oldLeft--
			return b
		case b[0] == '+':
			z.newLeft--
			return b
		case b[0] == '\\':
			return trimCR(b)
		}
		z.oldLeft, z.newLeft = 0, 0 // lost count: the parser will say why
	}
	if !partial {
		b = trimCR(b)
		if bytes.HasPrefix(b, []byte("@@ ")) {
			z.oldLeft, z.newLeft = fragmentCounts(b)
		}
	}
	return b
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
