package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// WardenDir is warden's own discovery directory: every skill in it is a
// review skill.
const WardenDir = ".warden/skills"

// AgentDirs are the Agent Skills and Claude Code conventions' discovery
// directories. Agents keep skills of every kind there (making PDFs,
// deploying, ...); warden runs one only when its frontmatter declares it a
// review skill (ReviewKey: ReviewValue) and skips the others.
var AgentDirs = []string{".agents/skills", ".claude/skills"}

// Dirs are the discovery directories, relative to a repository root, in the
// order they are searched: warden's own, then the agents'.
var Dirs = append([]string{WardenDir}, AgentDirs...)

// SkipReason says why a skill file was found and not loaded.
type SkipReason string

// The reasons a skill file is skipped.
const (
	// SkipNotReview: a skill of an agent directory whose frontmatter does
	// not declare it a review skill.
	SkipNotReview SkipReason = "not_review"
	// SkipBroken: a file that is not a valid skill (Problems say why).
	SkipBroken SkipReason = "broken"
	// SkipDuplicate: a second skill of a name already found.
	SkipDuplicate SkipReason = "duplicate"
	// SkipUnreadable: a file or directory that could not be read.
	SkipUnreadable SkipReason = "unreadable"
)

// Skipped is a skill file (or discovery directory) that was found and not
// loaded, and why.
type Skipped struct {
	// Name is the skill's name as its path gives it (NAME/SKILL.md,
	// NAME.md); "" when the path names none (a directory).
	Name   string
	File   string
	Reason SkipReason
	// Problems say what is wrong, each "file:line: message"; for
	// SkipNotReview, one saying what the frontmatter lacks.
	Problems Problems
}

// Summary is the skipped file as one problem: its first problem's line and
// message, with the count of the others.
func (s Skipped) Summary() Problem {
	if len(s.Problems) == 0 {
		return Problem{File: s.File, Message: string(s.Reason)}
	}
	p := s.Problems[0]
	p.File = s.File
	if n := len(s.Problems) - 1; n > 0 {
		p.Message += fmt.Sprintf(" (and %d more problem", n)
		if n > 1 {
			p.Message += "s"
		}
		p.Message += ")"
	}
	return p
}

// String is the skipped file in one line: "FILE:LINE: message", with
// "broken: " before the message of a broken file.
func (s Skipped) String() string {
	p := s.Summary()
	if s.Reason == SkipBroken {
		p.Message = "broken: " + p.Message
	}
	return p.Error()
}

// Found is what discovery found in a repository: the review skills that
// loaded, the skill files it skipped, and warnings about loaded skills.
type Found struct {
	Skills   []*Skill  // sorted by name
	Skipped  []Skipped // in the order found
	Warnings Problems  // of the loaded skills, in the order found (Skill.Warnings)
}

// SkippedNamed returns the skipped file of the skill name (the first, when
// several), and whether there is one.
func (f *Found) SkippedNamed(name string) (Skipped, bool) {
	for _, s := range f.Skipped {
		if s.Name == name && name != "" {
			return s, true
		}
	}
	return Skipped{}, false
}

// Discover finds the review skills of a repository whose root is fsys.
// Each discovery directory (Dirs, in order) holds skills as NAME/SKILL.md
// or NAME.md, with entries read in name order; README.md, names starting
// with ".", files not ending in .md and folders without SKILL.md are not
// looked at, and a directory that does not exist is not a problem. Every
// skill of WardenDir is a review skill; a skill of AgentDirs is one only
// when its frontmatter declares it (Skill.Review), and is skipped
// (SkipNotReview) otherwise, whatever else its frontmatter holds.
//
// No file is fatal: one that fails to parse or cannot be read, a skill
// file named skill.md rather than SKILL.md, and a duplicate name (the first
// one found wins) are skipped with their problems. Sources are paths
// under fsys (".claude/skills/NAME/SKILL.md"). It never panics.
func Discover(fsys fs.FS) *Found {
	d := &discovery{fsys: fsys}
	if fsys == nil {
		d.skip("", SkipUnreadable, Problem{Message: "no file system to discover skills in"})
		return d.result()
	}
	for _, dir := range Dirs {
		d.agent = dir != WardenDir
		d.scan(dir, false)
	}
	return d.result()
}

// Validate checks a directory for `warden skills validate DIR`, where fsys
// is DIR and rel is DIR's path relative to the repository's top level ("."
// for the top level, "" when DIR is not in the repository). When any
// discovery directory exists under fsys it checks those, as Discover does.
// Otherwise, when fsys holds a SKILL.md it checks that one skill (DIR is a
// skill's folder); otherwise it treats fsys itself as a folder that holds
// skills as NAME/SKILL.md or NAME.md, and Source is the path under that
// folder. A folder that rel places in an agent directory follows its rule:
// a skill that does not declare itself a review skill is skipped.
//
// Finding no skill at all (and no file skipped) is itself a problem, "no
// skill found ...", so an empty directory or a mistyped path does not pass
// silently: it is a skipped entry with reason SkipBroken and no name. It
// never panics.
func Validate(fsys fs.FS, rel string) *Found {
	d := &discovery{fsys: fsys}
	if fsys == nil {
		d.skip("", SkipUnreadable, Problem{Message: "no file system to validate"})
		return d.result()
	}
	d.agent = slices.ContainsFunc(AgentDirs, func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") })
	var where string
	switch {
	case slices.ContainsFunc(Dirs, d.exists):
		for _, dir := range Dirs {
			d.agent = dir != WardenDir
			d.scan(dir, false)
		}
		where = "in " + strings.Join(Dirs, ", ")
	case d.exists("SKILL.md"):
		d.file("SKILL.md")
	case d.exists(".git"):
		// A repository root without a discovery directory: its own
		// Markdown files (README, SECURITY.md, CONDUCT.md) are not skills,
		// but a repository of skills keeps them in NAME/SKILL.md folders.
		d.folders = true
		d.scan(".", true)
		where = "in this repository: expected " + strings.Join(Dirs, ", ") + ", or NAME/SKILL.md folders at its root"
	default:
		d.scan(".", true)
		where = "here: expected NAME/SKILL.md or NAME.md files, or a repository root with " + strings.Join(Dirs, ", ")
	}
	f := d.result()
	if len(f.Skills) == 0 && len(f.Skipped) == 0 {
		f.Skipped = append(f.Skipped, Skipped{Reason: SkipBroken, Problems: Problems{{Message: "no skill found " + where}}})
	}
	return f
}

// discovery collects skills and skipped files while scanning one fs.FS.
type discovery struct {
	fsys    fs.FS
	found   Found
	byName  map[string]string // name → Source of the first skill found
	folders bool              // read NAME/SKILL.md folders only, no NAME.md files
	agent   bool              // the directory scanned is an agent's: only declared review skills load
}

// skip records file as skipped for reason, with its problems.
func (d *discovery) skip(file string, reason SkipReason, problems ...Problem) {
	s := Skipped{File: file, Reason: reason, Problems: problems}
	if file != "" {
		s.Name = Problem{File: file}.Skill()
	}
	d.found.Skipped = append(d.found.Skipped, s)
}

// readProblem records a failure to read file, without the OS path that
// os.DirFS puts in its errors.
func (d *discovery) readProblem(file string, err error) {
	d.skip(file, SkipUnreadable, Problem{File: file, Message: fmt.Sprintf("cannot read: %v", unwrapPath(err))})
}

func (d *discovery) exists(name string) bool {
	_, err := fs.Stat(d.fsys, name)
	return err == nil
}

// scan reads one directory of skills. A directory that does not exist is a
// problem only when mustExist.
func (d *discovery) scan(dir string, mustExist bool) {
	info, err := fs.Stat(d.fsys, dir)
	switch {
	case errors.Is(err, fs.ErrNotExist) && !mustExist:
		return
	case err != nil:
		d.readProblem(dir, err)
		return
	case !info.IsDir():
		d.skip(dir, SkipUnreadable, Problem{File: dir, Message: "is not a directory: skills live in NAME/SKILL.md or NAME.md under it"})
		return
	}
	entries, err := fs.ReadDir(d.fsys, dir)
	if err != nil {
		d.readProblem(dir, err)
		// ReadDir may still have returned some entries: go on with them.
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		p := path.Join(dir, name)
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			// A skill folder is often a link to one shared with another tool.
			info, err := fs.Stat(d.fsys, p)
			if err != nil {
				d.readProblem(p, err)
				continue
			}
			isDir = info.IsDir()
		}
		switch {
		case isDir:
			d.folder(p)
		case strings.HasSuffix(name, ".md") && !strings.EqualFold(name, "README.md") && !d.folders:
			d.file(p)
		}
	}
}

// folder reads the skill in the folder dir. A folder without SKILL.md is
// skipped, as Claude Code and other agents skip it (it may hold files shared
// by several skills), unless it holds the file under another case
// ("skill.md"), which is a mistake worth reporting.
func (d *discovery) folder(dir string) {
	file := path.Join(dir, "SKILL.md")
	if d.exists(file) {
		d.file(file)
		return
	}
	entries, _ := fs.ReadDir(d.fsys, dir)
	for _, e := range entries {
		if strings.EqualFold(e.Name(), "SKILL.md") {
			file := path.Join(dir, e.Name())
			d.skip(file, SkipBroken, Problem{File: file, Message: "the file must be named SKILL.md, in capitals, to be read as a skill"})
			return
		}
	}
}

// file reads and parses one skill file.
func (d *discovery) file(name string) {
	data, err := d.read(name)
	if err != nil {
		d.readProblem(name, err)
		return
	}
	r := parse(name, data)
	if d.agent {
		switch r.decl {
		case declNoFrontmatter, declNone:
			d.skip(name, SkipNotReview, Problem{File: name, Message: notReview(r.decl)})
			return
		}
	}
	if len(r.problems) > 0 {
		d.skip(name, SkipBroken, r.problems...)
		return
	}
	s := r.skill
	if first, dup := d.byName[s.Name]; dup {
		d.skip(name, SkipDuplicate, Problem{File: name, Line: r.nameLine,
			Message: fmt.Sprintf("duplicate skill %q: %s defines it too, and the first one found wins", s.Name, first)})
		return
	}
	if d.byName == nil {
		d.byName = map[string]string{}
	}
	d.byName[s.Name] = s.Source
	d.found.Skills = append(d.found.Skills, s)
	d.found.Warnings = append(d.found.Warnings, s.Warnings...)
}

// notReview says why an agent's skill file is not a review skill.
func notReview(decl declaration) string {
	if decl == declNoFrontmatter {
		return "not a review skill: no frontmatter, so nothing declares it one (" + ReviewKey + ": " + ReviewValue + ")"
	}
	return "not a review skill: its frontmatter does not declare it one (add metadata: with warden: review to run it in reviews)"
}

// read reads a file, but no more than one byte past the size a skill may
// have, so that Parse reports a huge file without it being read whole.
func (d *discovery) read(name string) ([]byte, error) {
	f, err := d.fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxFileSize+1))
}

func (d *discovery) result() *Found {
	slices.SortStableFunc(d.found.Skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	f := d.found
	return &f
}
