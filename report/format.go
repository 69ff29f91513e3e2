package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/org/warden/review"
)

// Format is an output format of Write. The zero value is FormatText.
type Format int

// The formats.
const (
	FormatText     Format = iota // a terminal summary
	FormatJSON                   // the warden.report/v1 object (DESIGN.md §5)
	FormatMarkdown               // the GitHub check-run summary, mirrored as the job summary
	FormatSARIF                  // SARIF 2.1.0 for GitHub code scanning
)

var formatNames = [...]string{
	FormatText:     "text",
	FormatJSON:     "json",
	FormatMarkdown: "markdown",
	FormatSARIF:    "sarif",
}

// String returns the format's flag name: "text", "json", "markdown" or
// "sarif".
func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("format(%d)", int(f))
}

func (f Format) valid() bool { return f >= 0 && int(f) < len(formatNames) }

// ParseFormat reads a format name (case-insensitive, surrounding space
// ignored). The error lists the valid formats.
func ParseFormat(s string) (Format, error) {
	n := strings.ToLower(strings.TrimSpace(s))
	for i, v := range formatNames {
		if v == n {
			return Format(i), nil
		}
	}
	return FormatText, fmt.Errorf("unknown format %q (want text, json, markdown or sarif)", s)
}

// MarshalText implements encoding.TextMarshaler.
func (f Format) MarshalText() ([]byte, error) {
	if !f.valid() {
		return nil, fmt.Errorf("invalid %v", f)
	}
	return []byte(f.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (f *Format) UnmarshalText(b []byte) error {
	v, err := ParseFormat(string(b))
	if err != nil {
		return err
	}
	*f = v
	return nil
}

// Set implements flag.Value.
func (f *Format) Set(s string) error { return f.UnmarshalText([]byte(s)) }

// Options tune rendering. The zero value is valid: no colour, no tool
// version, every finding listed.
type Options struct {
	// Color turns on ANSI colours in FormatText. The CLI sets it when
	// stdout is a terminal. Other formats ignore it.
	Color bool
	// ToolVersion is warden's version, written to SARIF's
	// tool.driver.version (omitted when empty).
	ToolVersion string
	// ReportOn hides findings below this severity in FormatText and
	// FormatMarkdown: they are still counted, and a line says how many were
	// not shown. SeverityNone lists all. JSON and SARIF always carry every
	// finding.
	ReportOn review.Severity
}

// Write renders r to w in format f. It renders the whole output before
// writing, so nothing is written when rendering fails; r is not modified.
// Write is safe for concurrent use with distinct writers.
func Write(w io.Writer, r *review.Report, f Format, opts Options) error {
	if r == nil {
		return errors.New("render report: nil report")
	}
	var buf bytes.Buffer
	var err error
	switch f {
	case FormatText:
		err = writeText(&buf, r, opts)
	case FormatJSON:
		err = writeJSON(&buf, r)
	case FormatMarkdown:
		err = writeMarkdown(&buf, r, opts)
	case FormatSARIF:
		err = writeSARIF(&buf, r, opts)
	default:
		return fmt.Errorf("render report: unknown %v", f)
	}
	if err != nil {
		return fmt.Errorf("render %s report: %w", f, err)
	}
	if _, err := w.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("write %s report: %w", f, err)
	}
	return nil
}

// OneLine folds a message onto one line: control characters dropped, runs
// of white space (newlines included) one space. It is the one folding of
// untrusted and multi-line text for titles, logs and table cells.
func OneLine(s string) string { return review.OneLine(sanitize(s, true)) }

// WriteFile writes data to path whole or not at all: into a temporary file
// beside it, renamed over it. An error names no path, the temporary file's
// least of all: it says what is wrong with path ("is a directory, not a
// file", "its directory does not exist"), and the caller names path.
func WriteFile(path string, data []byte) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errIsDirectory
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".warden-report-*")
	if err != nil {
		return writeProblem(err, "")
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600; a report is for whoever reads the
	// workspace (an artifact upload, a later step), like any written file.
	err = tmp.Chmod(0o644)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return writeProblem(err, "")
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return writeProblem(err, "replacing it: ")
	}
	return nil
}

var errIsDirectory = errors.New("is a directory, not a file")

// writeProblem says what an error of writing a file beside path means for
// path, without the paths the system error carries (one of them is the
// temporary file's).
func writeProblem(err error, prefix string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("its directory does not exist")
	case errors.Is(err, syscall.ENOTDIR):
		return errors.New("a parent is a file, not a directory")
	case errors.Is(err, syscall.EISDIR):
		return errIsDirectory
	case errors.Is(err, fs.ErrPermission):
		return errors.New("permission denied: cannot create a file in its directory")
	}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return fmt.Errorf("%s%w", prefix, err)
}
