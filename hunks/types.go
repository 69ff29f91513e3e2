package hunks

import (
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

// File is one file of a diff.
type File struct {
	OldPath   string // "" for an added file
	NewPath   string // "" for a deleted file
	Status    FileStatus
	OldMode   fs.FileMode // 0 when the diff does not say
	NewMode   fs.FileMode
	ModeOnly  bool // only the mode changed
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

// Line is one line of a fragment, without its trailing newline.
type Line struct {
	Op        Op
	Text      string
	OldLine   int  // 0 for an added line
	NewLine   int  // 0 for a deleted line
	NoNewline bool // "\ No newline at end of file" followed this line
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
	Before    []ContextLine // up to 20 lines before StartLine
	After     []ContextLine // up to 20 lines after EndLine
	Added     int
	Deleted   int
	Priority  int // higher first
}

// Ignored is a path that will not be reviewed, and why.
type Ignored struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}
