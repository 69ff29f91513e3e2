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

// Dirs are the discovery directories, relative to a repository root, in the
// order they are searched: warden's own, then the Agent Skills and Claude
// Code conventions, so that skills written for those tools are found too.
var Dirs = []string{".warden/skills", ".agents/skills", ".claude/skills"}

// Discover finds the skills of a repository whose root is fsys. Each
// discovery directory (Dirs, in order) holds skills as NAME/SKILL.md or
// NAME.md, with entries read in name order; README.md, names starting with
// ".", files not ending in .md and folders without SKILL.md are skipped, and
// a directory that does not exist is not a problem.
//
// It returns every skill that parsed, sorted by name, with Source set to its
// path under fsys (".claude/skills/NAME/SKILL.md"), and every problem in the
// order found: a file that failed to parse or could not be read, a skill
// file named skill.md rather than SKILL.md, and a duplicate name (the first
// one found wins; the later ones are problems). It never panics.
func Discover(fsys fs.FS) ([]*Skill, Problems) {
	d := &discovery{fsys: fsys}
	if fsys == nil {
		d.addf("", 0, "no file system to discover skills in")
		return d.result()
	}
	for _, dir := range Dirs {
		d.scan(dir, false)
	}
	return d.result()
}

// Validate checks a directory for `warden skills validate DIR`, where fsys
// is DIR. When any discovery directory exists under fsys it checks those, as
// Discover does. Otherwise, when fsys holds a SKILL.md it checks that one
// skill (DIR is a skill's folder); otherwise it treats fsys itself as a
// folder that holds skills as NAME/SKILL.md or NAME.md, and Source is the
// path under that folder.
//
// It returns every skill that parsed, sorted by name, and every problem
// found. Finding no skill at all (and no file that failed) is itself a
// problem, "no skill found ...", so an empty directory or a mistyped path
// does not pass silently. It never panics.
func Validate(fsys fs.FS) ([]*Skill, Problems) {
	d := &discovery{fsys: fsys}
	if fsys == nil {
		d.addf("", 0, "no file system to validate")
		return d.result()
	}
	var where string
	switch {
	case slices.ContainsFunc(Dirs, d.exists):
		for _, dir := range Dirs {
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
	out, problems := d.result()
	if len(out) == 0 && len(problems) == 0 {
		problems = append(problems, Problem{Message: "no skill found " + where})
	}
	return out, problems
}

// discovery collects skills and problems while scanning one fs.FS.
type discovery struct {
	fsys     fs.FS
	skills   []*Skill
	problems Problems
	byName   map[string]string // name → Source of the first skill found
	folders  bool              // read NAME/SKILL.md folders only, no NAME.md files
}

func (d *discovery) addf(file string, line int, format string, args ...any) {
	d.problems = append(d.problems, Problem{File: file, Line: line, Message: fmt.Sprintf(format, args...)})
}

// readProblem records a failure to read file, without the OS path that
// os.DirFS puts in its errors.
func (d *discovery) readProblem(file string, err error) {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	d.addf(file, 0, "cannot read: %v", err)
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
		d.addf(dir, 0, "is not a directory: skills live in NAME/SKILL.md or NAME.md under it")
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
			d.addf(path.Join(dir, e.Name()), 0, "the file must be named SKILL.md, in capitals, to be read as a skill")
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
	s, nameLine, problems := parse(name, data)
	if len(problems) > 0 {
		d.problems = append(d.problems, problems...)
		return
	}
	if first, dup := d.byName[s.Name]; dup {
		d.addf(name, nameLine, "duplicate skill %q: %s defines it too, and the first one found wins", s.Name, first)
		return
	}
	if d.byName == nil {
		d.byName = map[string]string{}
	}
	d.byName[s.Name] = s.Source
	d.skills = append(d.skills, s)
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

func (d *discovery) result() ([]*Skill, Problems) {
	slices.SortStableFunc(d.skills, func(a, b *Skill) int { return strings.Compare(a.Name, b.Name) })
	return d.skills, d.problems
}
