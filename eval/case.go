package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
)

// The files of a case directory.
const (
	CaseFile   = "case.toml"   // the metadata: known findings, clean regions
	ChangeFile = "change.diff" // the change, a unified diff
	FilesDir   = "files"       // the new side of every changed file
)

// Meta is a case's case.toml.
type Meta struct {
	// Description says what the change is and why the case was chosen.
	Description string `toml:"description"`
	// Synthetic marks a case written for warden's own tests: it checks the
	// mechanics, never the quality of a model or skill.
	Synthetic bool `toml:"synthetic"`
	// Provenance and License say where a real case comes from (a
	// repository, the fix commit) and under which licence.
	Provenance string `toml:"provenance"`
	License    string `toml:"license"`
	Language   string `toml:"language"`
	// Findings are the problems the change has; none makes it a clean case.
	Findings []Known `toml:"findings"`
	// Clean are regions where nothing should be found.
	Clean []Region `toml:"clean"`
}

// Known is a finding the change is known to have.
type Known struct {
	Path      string `toml:"path" json:"path"`
	StartLine int    `toml:"start_line" json:"start_line"`
	EndLine   int    `toml:"end_line" json:"end_line"`
	Category  string `toml:"category" json:"category"`
	Severity  string `toml:"severity" json:"severity"`
	// Fix is, in a pointer corpus, the commit that fixed this finding
	// when it is not the case's fix.
	Fix string `toml:"fix" json:"fix,omitempty"`
}

// Region is a range of new-side lines of one file.
type Region struct {
	Path      string `toml:"path" json:"path"`
	StartLine int    `toml:"start_line" json:"start_line"`
	EndLine   int    `toml:"end_line" json:"end_line"`
}

// Case is one loaded case.
type Case struct {
	Name  string // the directory's base name
	Dir   string
	Meta  Meta
	Files []*hunks.File
	// Changed is the number of added lines: the denominator of noise.
	Changed int
	// Pointer is the pointer the case was materialised from; nil for a
	// case directory.
	Pointer *Pointer
	files   fs.FS
}

// Clean reports whether the case has no known finding.
func (c *Case) Clean() bool { return len(c.Meta.Findings) == 0 }

// Source reads a changed file's new side from the case's files.
func (c *Case) Source(p string) ([]byte, error) { return fs.ReadFile(c.files, p) }

// LoadCase reads the case in dir: case.toml, change.diff and files/, the
// new side of each changed file. It checks that the diff describes the
// files (every added and context line is the file's line at its number)
// and that every known finding and clean region lies in a changed file;
// an error names the case's file and the problem.
func LoadCase(dir string) (*Case, error) {
	data, err := os.ReadFile(filepath.Join(dir, CaseFile))
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", dir, err)
	}
	var meta Meta
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&meta); err != nil {
		return nil, fmt.Errorf("%s: %v", filepath.Join(dir, CaseFile), review.OneLine(err.Error()))
	}
	return loadCase(dir, meta)
}

// loadCase reads the change and the files of the case in dir, described
// by meta, and checks them (see LoadCase).
func loadCase(dir string, meta Meta) (*Case, error) {
	c := &Case{Name: filepath.Base(dir), Dir: dir, Meta: meta, files: os.DirFS(filepath.Join(dir, FilesDir))}
	diff, err := os.Open(filepath.Join(dir, ChangeFile))
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", dir, err)
	}
	defer diff.Close()
	if c.Files, err = hunks.Parse(diff); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ChangeFile), err)
	}
	if len(c.Files) == 0 {
		return nil, fmt.Errorf("%s: no change", filepath.Join(dir, ChangeFile))
	}
	if err := c.check(); err != nil {
		return nil, fmt.Errorf("case %s: %w", dir, err)
	}
	return c, nil
}

// check holds the case together: the diff against its files, the known
// findings and clean regions against the diff.
func (c *Case) check() error {
	changed := map[string]bool{}
	for _, f := range c.Files {
		if f.NewPath == "" {
			continue
		}
		changed[f.NewPath] = true
		src, err := c.Source(f.NewPath)
		if err != nil {
			return fmt.Errorf("%s/%s: the diff changes it but the case does not ship it: %w", FilesDir, f.NewPath, err)
		}
		lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
		for _, fr := range f.Fragments {
			n := fr.NewStart
			for _, l := range fr.Lines {
				if l.Op == hunks.Delete {
					continue
				}
				if l.Op == hunks.Add {
					c.Changed++
				}
				if n < 1 || n > len(lines) || lines[n-1] != strings.TrimSuffix(l.Text, "\r") {
					return fmt.Errorf("%s line %d does not match %s/%s: the diff is not against the shipped files", ChangeFile, n, FilesDir, f.NewPath)
				}
				n++
			}
		}
	}
	var errs []error
	for i, k := range c.Meta.Findings {
		if err := checkRange(changed, k.Path, k.StartLine, k.EndLine); err != nil {
			errs = append(errs, fmt.Errorf("%s findings[%d]: %w", CaseFile, i, err))
		}
		if k.Category == "" || k.Severity == "" {
			errs = append(errs, fmt.Errorf("%s findings[%d]: category and severity are required", CaseFile, i))
		}
	}
	for i, r := range c.Meta.Clean {
		if err := checkRange(changed, r.Path, r.StartLine, r.EndLine); err != nil {
			errs = append(errs, fmt.Errorf("%s clean[%d]: %w", CaseFile, i, err))
		}
	}
	return errors.Join(errs...)
}

func checkRange(changed map[string]bool, p string, start, end int) error {
	switch {
	case !changed[p]:
		return fmt.Errorf("path %q is not a file the change adds or modifies", p)
	case start < 1 || end < start:
		return fmt.Errorf("lines %d to %d are not a range of lines", start, end)
	}
	return nil
}

// LoadCorpus loads the case directories named by paths (Sources.Load with
// no cache: a pointer corpus is an error).
func LoadCorpus(paths []string) ([]*Case, error) {
	return Sources{}.Load(context.Background(), paths)
}

// Load loads the cases named by paths: a directory with case.toml is one
// case, any other directory holds cases (each subdirectory with a
// case.toml, in name order), and a .toml file is a pointer corpus whose
// cases are materialised with git (Materialize). Cases are named by their
// path relative to the argument's parent, so two corpora may both have a
// case "go-nil"; a pointer case by its file's name and its own
// ("real/cobra-help-flag" for case cobra-help-flag of real.toml).
func (s Sources) Load(ctx context.Context, paths []string) ([]*Case, error) {
	var cases []*Case
	seen := map[string]bool{}
	add := func(c *Case) error {
		if seen[c.Name] {
			return fmt.Errorf("corpus: case %s is named twice", c.Name)
		}
		seen[c.Name] = true
		cases = append(cases, c)
		return nil
	}
	for _, p := range paths {
		if IsPointerFile(p) {
			pf, err := ReadPointers(p)
			if err != nil {
				return nil, err
			}
			stem := strings.TrimSuffix(filepath.Base(p), ".toml")
			for _, ptr := range pf.Cases {
				c, err := s.Materialize(ctx, ptr, stem+"/"+ptr.Name)
				if err != nil {
					return nil, fmt.Errorf("corpus %s: %w", p, err)
				}
				if err := add(c); err != nil {
					return nil, err
				}
			}
			continue
		}
		dirs, err := caseDirs(p)
		if err != nil {
			return nil, err
		}
		for _, d := range dirs {
			c, err := LoadCase(d)
			if err != nil {
				return nil, err
			}
			if rel, err := filepath.Rel(filepath.Dir(filepath.Clean(p)), d); err == nil {
				c.Name = filepath.ToSlash(rel)
			}
			if err := add(c); err != nil {
				return nil, err
			}
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("corpus %s: no case (a case is a directory with %s, or a .toml file of [[cases]] pointers)", strings.Join(paths, " "), CaseFile)
	}
	return cases, nil
}

func caseDirs(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", p, review.UnwrapPathError(err))
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("corpus %s: not a directory", p)
	}
	if _, err := os.Stat(filepath.Join(p, CaseFile)); err == nil {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", p, review.UnwrapPathError(err))
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(p, e.Name(), CaseFile)); err == nil {
				dirs = append(dirs, filepath.Join(p, e.Name()))
			}
		}
	}
	slices.Sort(dirs)
	return dirs, nil
}
