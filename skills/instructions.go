package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"
)

// The files in which a repository gives agents (and reviewers) its
// guidance, relative to its root.
const (
	// AgentsFile and ClaudeFile hold guidance for the files of the
	// directory they are in and of its subdirectories (the AGENTS.md and
	// Claude Code conventions); at the root, for every file.
	AgentsFile = "AGENTS.md"
	ClaudeFile = "CLAUDE.md"
	// CopilotFile holds guidance for every file (GitHub Copilot's
	// repository-wide instructions).
	CopilotFile = ".github/copilot-instructions.md"
	// CopilotDir holds NAME.instructions.md files, at any depth, whose
	// frontmatter's applyTo globs choose the files they are for (GitHub
	// Copilot's path-specific instructions); one whose excludeAgent is
	// code-review is not meant for reviews.
	CopilotDir = ".github/instructions"
)

// maxInstructionBytes bounds what is read of one instructions file: the
// review sends at most a few tens of thousands of characters of guidance,
// so more is never needed.
const maxInstructionBytes = 256 << 10

// Instruction is one part of a repository's guidance for reviewers: the
// text of one file, or of one [[instructions]] entry of warden.toml, and
// the paths it is for.
type Instruction struct {
	// Source names where it comes from: a file's path in the repository
	// ("AGENTS.md", "web/CLAUDE.md"), or the entry of warden.toml
	// ("warden.toml instructions[0]"; with a file, "docs/review.md
	// (warden.toml instructions[1])").
	Source string
	// Dir is, for AGENTS.md and CLAUDE.md, the directory whose files it
	// is for ("." for every file); "." for the others.
	Dir string
	// Paths and Ignore choose the paths it is for, as a skill's do (empty
	// Paths: every path under Dir).
	Paths, Ignore []string
	// Text is the guidance, trimmed, with LF line ends.
	Text string
	// Also names files of the same scope with the same text, not sent
	// twice (a CLAUDE.md that links to AGENTS.md).
	Also []string
}

// AppliesTo says in words which paths the instruction is for: "every
// file", "files under web/", "api/**, !api/gen/**".
func (in *Instruction) AppliesTo() string {
	var parts []string
	if in.Dir != "." && in.Dir != "" {
		parts = append(parts, "files under "+in.Dir+"/")
	}
	globs := slices.Clone(in.Paths)
	for _, g := range in.Ignore {
		globs = append(globs, "!"+strings.TrimPrefix(g, "!"))
	}
	if len(globs) > 0 {
		parts = append(parts, strings.Join(globs, ", "))
	}
	if len(parts) == 0 {
		return "every file"
	}
	return strings.Join(parts, " matching ")
}

// Name is Source with the files of Also: "AGENTS.md (= CLAUDE.md)".
func (in *Instruction) Name() string {
	if len(in.Also) == 0 {
		return in.Source
	}
	return in.Source + " (= " + strings.Join(in.Also, ", ") + ")"
}

// InstructionEntry is one [[instructions]] entry of warden.toml: its text,
// or a file of the repository that holds it, and the paths it is for.
type InstructionEntry struct {
	Key   string // "instructions[0]", for its Source
	Where string // where it is written, for errors: "warden.toml:12: instructions[0]"
	// Paths and Ignore are doublestar globs (a leading "!" negates one);
	// empty Paths: every path.
	Paths, Ignore []string
	Text          string
	File          string // a path relative to the repository's root
}

// InstructionSources say where LoadInstructions reads.
type InstructionSources struct {
	// Repo is the repository's tree at the revision the caller trusts
	// (never the change under review); nil when none could be read.
	Repo fs.FS
	// RepoName names Repo in errors ("HEAD (3b15d29)").
	RepoName string
	// Entries are warden.toml's [[instructions]]; their files are read
	// from Repo.
	Entries []InstructionEntry
	// Files, when set, reads the agents' files of Repo too: AGENTS.md and
	// CLAUDE.md of each directory that holds one of Paths (and of their
	// parents), CopilotFile and CopilotDir's files.
	Files bool
	// Paths are the paths under review; the AGENTS.md and CLAUDE.md of
	// their directories are read.
	Paths []string
}

// LoadInstructions reads a repository's instructions for reviewers from
// src. It returns them in precedence order, the one to keep first when a
// request's budget cannot hold them all: warden.toml's entries in their
// order, Copilot's path-specific files, then AGENTS.md before CLAUDE.md
// from the deepest directory to the root, then CopilotFile. Notes say what
// was found and not used, and why (a symbolic link out of the tree, a file
// that is not UTF-8, a Copilot file for another agent, a file cut at 256
// KiB). Two files of one scope with the same text are one Instruction
// (Also).
//
// The error is an entry's file that cannot be read: the configuration
// names it, so a review without it would not be the one configured.
// Nothing else is an error. It never follows a link out of Repo.
func LoadInstructions(src InstructionSources) (out []*Instruction, notes []string, err error) {
	l := &instrLoader{repo: src.Repo}
	for _, e := range src.Entries {
		in, err := l.entry(e, src.RepoName)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, in)
	}
	if src.Files && src.Repo != nil {
		out = append(out, l.copilotPathFiles()...)
		out = append(out, l.dirFiles(src.Paths)...)
		if in := l.file(CopilotFile, "."); in != nil {
			out = append(out, in)
		}
	}
	return mergeSame(out), l.notes, nil
}

// instrLoader reads instruction files from one tree, collecting notes.
type instrLoader struct {
	repo  fs.FS
	notes []string
}

func (l *instrLoader) notef(format string, args ...any) {
	l.notes = append(l.notes, fmt.Sprintf(format, args...))
}

// entry is one [[instructions]] entry, its file read from the tree.
func (l *instrLoader) entry(e InstructionEntry, repoName string) (*Instruction, error) {
	in := &Instruction{Source: "warden.toml " + e.Key, Dir: ".", Paths: e.Paths, Ignore: e.Ignore, Text: normalize(e.Text)}
	if e.File == "" {
		return in, nil
	}
	in.Source = e.File + " (warden.toml " + e.Key + ")"
	if l.repo == nil {
		return nil, fmt.Errorf("%s: file %s: no trusted revision to read it from (%s)", e.Where, e.File, repoName)
	}
	data, cut, err := l.read(e.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: file %s is not in %s (instructions are read from there, not from the change: commit it first)", e.Where, e.File, repoName)
	case err != nil:
		return nil, fmt.Errorf("%s: file %s of %s: %w", e.Where, e.File, repoName, unwrapPath(err))
	case !utf8.Valid(data):
		return nil, fmt.Errorf("%s: file %s is not UTF-8 text", e.Where, e.File)
	case cut:
		l.notef("%s: only its first %d KiB are read", e.File, maxInstructionBytes>>10)
	}
	in.Text = normalize(string(data))
	return in, nil
}

// file reads the guidance file name of scope dir; nil (with a note when
// there is something to say) when it is missing or cannot be used.
func (l *instrLoader) file(name, dir string) *Instruction {
	data, cut, err := l.read(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		l.notef("%s: not read: %v", name, unwrapPath(err))
		return nil
	case !utf8.Valid(data):
		l.notef("%s: not read: not UTF-8 text", name)
		return nil
	case cut:
		l.notef("%s: only its first %d KiB are read", name, maxInstructionBytes>>10)
	}
	text := normalize(string(data))
	switch {
	case text == "":
		return nil
	case onlyImports(text):
		l.notef("%s: not used: it only imports other files (%s), which warden does not follow", name, firstLine(text))
		return nil
	}
	return &Instruction{Source: name, Dir: dir, Text: text}
}

// dirFiles reads AGENTS.md and CLAUDE.md of every directory that holds one
// of paths, and of its parents, the deepest first.
func (l *instrLoader) dirFiles(paths []string) []*Instruction {
	seen := map[string]bool{}
	var dirs []string
	for _, p := range paths {
		for d := path.Dir(p); !seen[d]; d = path.Dir(d) {
			seen[d] = true
			dirs = append(dirs, d)
			if d == "." || d == "/" {
				break
			}
		}
	}
	slices.SortFunc(dirs, func(a, b string) int {
		if da, db := depth(a), depth(b); da != db {
			return db - da
		}
		return strings.Compare(a, b)
	})
	var out []*Instruction
	for _, d := range dirs {
		for _, name := range []string{AgentsFile, ClaudeFile} {
			if in := l.file(path.Join(d, name), d); in != nil {
				out = append(out, in)
			}
		}
	}
	return out
}

// depth is the number of directories in dir ("." is 0).
func depth(dir string) int {
	if dir == "." || dir == "" {
		return 0
	}
	return strings.Count(dir, "/") + 1
}

// copilotPathFiles reads CopilotDir's NAME.instructions.md files, in path
// order.
func (l *instrLoader) copilotPathFiles() []*Instruction {
	var out []*Instruction
	err := fs.WalkDir(l.repo, CopilotDir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist) && p == CopilotDir:
			return fs.SkipAll
		case err != nil:
			l.notef("%s: not read: %v", p, unwrapPath(err))
			return nil
		case d.IsDir() || !strings.HasSuffix(p, ".instructions.md"):
			return nil
		}
		if in := l.file(p, "."); in != nil && l.applyTo(in) {
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		l.notef("%s: not read: %v", CopilotDir, unwrapPath(err))
	}
	return out
}

// applyTo reads the frontmatter of a Copilot path-specific file into in
// (its applyTo globs, and the text after it), and reports whether the file
// is for reviews: it has applyTo, valid globs, and no excludeAgent:
// code-review.
func (l *instrLoader) applyTo(in *Instruction) bool {
	var front struct {
		ApplyTo      string `yaml:"applyTo"`
		ExcludeAgent string `yaml:"excludeAgent"`
	}
	body, fm, ok := splitFrontmatter(in.Text)
	if ok {
		if err := yaml.Unmarshal([]byte(fm), &front); err != nil {
			l.notef("%s: not used: its frontmatter is not valid YAML: %v", in.Source, err)
			return false
		}
	}
	switch {
	case strings.TrimSpace(front.ApplyTo) == "":
		l.notef("%s: not used: no applyTo in its frontmatter, so it is for no file", in.Source)
		return false
	case strings.EqualFold(strings.TrimSpace(front.ExcludeAgent), "code-review"):
		l.notef("%s: not used: excludeAgent: code-review", in.Source)
		return false
	}
	for _, g := range splitGlobs(front.ApplyTo) {
		if !doublestar.ValidatePattern(strings.TrimPrefix(g, "!")) {
			l.notef("%s: not used: applyTo has an invalid glob %q", in.Source, g)
			return false
		}
		if g != "" {
			in.Paths = append(in.Paths, strings.TrimPrefix(g, "/"))
		}
	}
	in.Text = strings.TrimSpace(body)
	return in.Text != ""
}

// read reads name from the tree: at most maxInstructionBytes (cut says it
// was longer), following a symbolic link only to a regular file inside the
// tree.
func (l *instrLoader) read(name string) (data []byte, cut bool, err error) {
	if !fs.ValidPath(name) {
		return nil, false, fmt.Errorf("%q is not a path inside the repository", name)
	}
	info, err := fs.Lstat(l.repo, name)
	if err != nil {
		return nil, false, err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		target, err := fs.ReadLink(l.repo, name)
		if err != nil {
			return nil, false, err
		}
		resolved := path.Join(path.Dir(name), target)
		if path.IsAbs(target) || !fs.ValidPath(resolved) {
			return nil, false, fmt.Errorf("a symbolic link to %s, outside the repository: not followed", target)
		}
		if info, err = fs.Lstat(l.repo, resolved); err != nil {
			return nil, false, fmt.Errorf("a symbolic link to %s: %v", target, unwrapPath(err))
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			return nil, false, fmt.Errorf("a symbolic link to %s, itself a link: not followed", target)
		}
		name = resolved
	}
	if !info.Mode().IsRegular() {
		return nil, false, fmt.Errorf("not a regular file")
	}
	f, err := l.repo.Open(name)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxInstructionBytes+1))
	if err != nil {
		return nil, false, err
	}
	if len(data) > maxInstructionBytes {
		data = data[:maxInstructionBytes]
		for range utf8.UTFMax - 1 { // do not cut a character in two
			if r, size := utf8.DecodeLastRune(data); r != utf8.RuneError || size != 1 {
				break
			}
			data = data[:len(data)-1]
		}
		return data, true, nil
	}
	return data, false, nil
}

// normalize drops a byte order mark, makes line ends LF and trims.
func normalize(s string) string {
	s = strings.TrimPrefix(s, "\uFEFF")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n"))
}

// onlyImports reports whether every line of text is a Claude Code import
// ("@path/to/file"), which warden does not follow.
func onlyImports(text string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line != "" && (!strings.HasPrefix(line, "@") || strings.ContainsAny(line, " \t")) {
			return false
		}
	}
	return true
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// splitFrontmatter splits text (LF line ends) into the body after a YAML
// frontmatter and the frontmatter; ok is false when there is none.
func splitFrontmatter(text string) (body, front string, ok bool) {
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return text, "", false
	}
	fm, after, found := strings.Cut(rest, "\n---")
	if !found {
		return text, "", false
	}
	if nl := strings.IndexByte(after, '\n'); nl >= 0 {
		after = after[nl+1:]
	} else {
		after = ""
	}
	return after, fm, true
}

// mergeSame folds an instruction into an earlier one of the same scope
// with the same text (its Source goes to the earlier one's Also).
func mergeSame(ins []*Instruction) []*Instruction {
	var out []*Instruction
	for _, in := range ins {
		i := slices.IndexFunc(out, func(o *Instruction) bool {
			return o.Text == in.Text && o.Dir == in.Dir && slices.Equal(o.Paths, in.Paths) && slices.Equal(o.Ignore, in.Ignore)
		})
		if i >= 0 {
			out[i].Also = append(out[i].Also, in.Source)
			continue
		}
		out = append(out, in)
	}
	return out
}

// unwrapPath drops an *fs.PathError's operation and path, which the caller
// names itself.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
