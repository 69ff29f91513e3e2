package hunks

import (
	"fmt"
	"io/fs"
)

// FileStatus says how a file changed.
type FileStatus int

// The file statuses.
const (
	Modified FileStatus = iota + 1
	Added
	Deleted
	Renamed
	Copied
)

// String returns the status in lower case: "modified", "added", ...
func (s FileStatus) String() string {
	switch s {
	case Modified:
		return "modified"
	case Added:
		return "added"
	case Deleted:
		return "deleted"
	case Renamed:
		return "renamed"
	case Copied:
		return "copied"
	}
	return fmt.Sprintf("FileStatus(%d)", int(s))
}

// File is one file of a diff.
type File struct {
	OldPath   string // "" for an added file
	NewPath   string // "" for a deleted file
	Status    FileStatus
	OldMode   fs.FileMode // 0 when the diff does not say; git's 100755 is 0o755, 120000 has fs.ModeSymlink, a submodule fs.ModeDir
	NewMode   fs.FileMode // as OldMode; an "index" line's mode is both sides' mode
	ModeOnly  bool        // only the mode changed
	Binary    bool
	Fragments []Fragment
}

// Path is the path a reviewer talks about: the new path, or the old one for a
// deleted file.
func (f *File) Path() string {
	if f.NewPath != "" {
		return f.NewPath
	}
	return f.OldPath
}

// Fragment is one hunk of a file's diff (the text after an "@@" header).
type Fragment struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Section            string // the text after the closing "@@", often a function name
	Lines              []Line
}

// Op is what a diff line does.
type Op int

// The line operations.
const (
	Context Op = iota + 1
	Add
	Delete
)

// String returns the operation's name: "context", "add" or "delete".
func (o Op) String() string {
	switch o {
	case Context:
		return "context"
	case Add:
		return "add"
	case Delete:
		return "delete"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// Line is one line of a fragment, without its line ending: Text is the
// line's content with the trailing "\n" removed and, when the line ended in
// "\r\n", the "\r" too (CRLF records that it was there).
type Line struct {
	Op        Op
	Text      string
	OldLine   int  // 0 for an added line
	NewLine   int  // 0 for a deleted line
	NoNewline bool // "\ No newline at end of file" followed this line
	CRLF      bool // the line ended in "\r\n"; the "\r" is not part of Text
}

// Class is the kind of file a chunk belongs to, for priority.
type Class int

// The file classes, most important first.
const (
	Source Class = iota + 1
	Test
	Doc
	Config
)

// String returns the class in lower case: "source", "test", "doc" or "config".
func (c Class) String() string {
	switch c {
	case Source:
		return "source"
	case Test:
		return "test"
	case Doc:
		return "doc"
	case Config:
		return "config"
	}
	return fmt.Sprintf("Class(%d)", int(c))
}

// ContextLine is an unchanged new-side line shown around a chunk.
type ContextLine struct {
	Line int
	Text string
}

// Chunk is one reviewable piece of one file: coalesced or split hunks with
// their new-side line range and surrounding context.
type Chunk struct {
	Path      string
	OldPath   string // set for a renamed or copied file
	Language  string // "Go", "TypeScript", ...; "" when unknown
	Class     Class
	StartLine int // first new-side line the chunk covers
	EndLine   int // last new-side line the chunk covers
	Lines     []Line
	Before    []ContextLine // up to Options.ContextLines (20) lines before StartLine
	After     []ContextLine // up to Options.ContextLines (20) lines after EndLine
	Added     int
	Deleted   int
	Priority  int    // higher first
	Why       string // what Priority is made of: "source, risk word \"auth\", 12 changed lines"
}

// Ignored is a path that will not be reviewed, and why.
type Ignored struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Lines counts the file's changed lines (added and deleted) that this
	// entry leaves unreviewed: all of them, or for limit:lines:partial
	// those past the file's share. 0 for a file with none (binary, mode
	// only, ...).
	Lines int `json:"lines,omitempty"`
}
