package eval

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/review"
	"github.com/org/warden/scenario"
)

// A pointer corpus is one TOML file of [[cases]], each naming a public
// change by its commits and labelling it with our own words: no code, no
// commit message, no issue text. The code is fetched with git when the
// corpus is loaded (Sources.Materialize).

// Pointer is one case of a pointer corpus.
type Pointer struct {
	// Name names the case within its file: lower-case letters, digits,
	// dots, dashes.
	Name string `toml:"name"`
	// Repository is the clone URL. git's own url.<base>.insteadOf
	// configuration redirects it (to a local mirror, offline).
	Repository string `toml:"repository"`
	License    string `toml:"license"` // the repository's licence, as a fact (an SPDX name)
	Language   string `toml:"language"`
	// Commit is the change under review, Parent its parent: the review
	// sees git diff Parent Commit.
	Commit string `toml:"commit"`
	Parent string `toml:"parent"`
	// Fix is the later commit that fixed the defect: the evidence for the
	// labels. A clean case has none.
	Fix string `toml:"fix"`
	// Description says, in one line of our own words, what is wrong (or,
	// for a clean case, what the change does).
	Description string   `toml:"description"`
	Findings    []Known  `toml:"findings"`
	Clean       []Region `toml:"clean"`
}

// PointerFile is a pointer corpus file.
type PointerFile struct {
	Cases []Pointer `toml:"cases"`
}

var (
	pointerName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*$`)
	fullSHA     = regexp.MustCompile(`^[0-9a-f]{40}$`)
)

// IsPointerFile reports whether path names a pointer corpus (a .toml file
// other than a case's case.toml) rather than a case directory.
func IsPointerFile(path string) bool {
	return strings.HasSuffix(path, ".toml") && filepath.Base(path) != CaseFile
}

// ReadPointers reads and checks a pointer corpus file; an error names the
// file, the case and the field.
func ReadPointers(path string) (*PointerFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("corpus %s: %w", path, review.UnwrapPathError(err))
	}
	var pf PointerFile
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&pf); err != nil {
		return nil, scenario.DecodeError(path, err)
	}
	if len(pf.Cases) == 0 {
		return nil, fmt.Errorf("corpus %s: no [[cases]]", path)
	}
	seen := map[string]bool{}
	var errs []error
	for i, p := range pf.Cases {
		if err := p.check(); err != nil {
			errs = append(errs, fmt.Errorf("%s: cases[%d] (%s): %w", path, i, cmp.Or(p.Name, "no name"), err))
		}
		if seen[p.Name] {
			errs = append(errs, fmt.Errorf("%s: case %s is named twice", path, p.Name))
		}
		seen[p.Name] = true
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &pf, nil
}

// check is what a pointer must say before anything is fetched.
func (p *Pointer) check() error {
	switch {
	case !pointerName.MatchString(p.Name):
		return fmt.Errorf("name %q: want lower-case letters, digits, dots and dashes", p.Name)
	case p.Repository == "" || strings.HasPrefix(p.Repository, "-"):
		return fmt.Errorf("repository %q: want a clone URL", p.Repository)
	case strings.Contains(p.Repository, "::"):
		// git's remote helpers (ext:: runs a command) are not for a corpus.
		return fmt.Errorf("repository %q: a remote helper address; want a clone URL", p.Repository)
	case p.License == "" || p.Language == "":
		return errors.New("license and language are required")
	case strings.TrimSpace(p.Description) == "" || strings.ContainsAny(p.Description, "\n\r"):
		return errors.New("description: want one line")
	}
	for _, f := range []struct{ key, sha string }{{"commit", p.Commit}, {"parent", p.Parent}, {"fix", p.Fix}} {
		if (f.sha != "" || f.key != "fix") && !fullSHA.MatchString(f.sha) {
			return fmt.Errorf("%s %q: want a full 40-character commit id in lower-case hex", f.key, f.sha)
		}
	}
	for i, k := range p.Findings {
		if k.Fix != "" && !fullSHA.MatchString(k.Fix) {
			return fmt.Errorf("findings[%d]: fix %q: want a full 40-character commit id in lower-case hex", i, k.Fix)
		}
	}
	return p.checkLabels()
}

// checkLabels is what a pointer's findings and clean regions must say.
func (p *Pointer) checkLabels() error {
	if len(p.Findings) == 0 && p.Fix != "" {
		return errors.New("fix is named but no finding: label what it fixed, or drop fix for a clean case")
	}
	for i, k := range p.Findings {
		if p.Fix == "" && k.Fix == "" {
			return fmt.Errorf("findings[%d]: name the commit that fixed it (the case's fix, or the finding's own)", i)
		}
		if k.Path == "" || k.StartLine < 1 || k.EndLine < k.StartLine {
			return fmt.Errorf("findings[%d]: want a path and lines start_line ≤ end_line from 1", i)
		}
		if k.Category == "" {
			return fmt.Errorf("findings[%d]: category is required", i)
		}
		if _, err := review.ParseSeverity(k.Severity); err != nil {
			return fmt.Errorf("findings[%d]: %w", i, err)
		}
	}
	for i, r := range p.Clean {
		if r.Path == "" || r.StartLine < 1 || r.EndLine < r.StartLine {
			return fmt.Errorf("clean[%d]: want a path and lines start_line ≤ end_line from 1", i)
		}
	}
	return nil
}

// Sources is where pointer cases come from: a cache directory for the
// fetched commits and the cases made of them, and git's environment (its
// own configuration, url.<base>.insteadOf included, comes from it).
type Sources struct {
	// Cache holds a bare repository per clone URL and a directory per
	// materialised case. "": pointer corpora cannot be loaded.
	Cache string
	// GitEnv is git's whole environment; nil: the process's.
	GitEnv []string
	// Progress, when set, hears one line per case that had to be fetched.
	Progress func(msg string)
}

// GitConfigVars are the environment variables git reads its configuration
// from (besides GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n).
var GitConfigVars = []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"}

// GitEnv is the environment of the git that fetches pointer corpora:
// environ (the process's), with the variables git reads its configuration
// from as getenv gives them, so that the user's url.<base>.insteadOf (a
// local mirror, offline) applies as it does to their own git, and a test
// can give git a configuration of its own.
func GitEnv(environ []string, getenv func(string) string) []string {
	names := slices.Clone(GitConfigVars)
	n, _ := strconv.Atoi(getenv("GIT_CONFIG_COUNT"))
	for i := range max(n, 0) {
		names = append(names, fmt.Sprintf("GIT_CONFIG_KEY_%d", i), fmt.Sprintf("GIT_CONFIG_VALUE_%d", i))
	}
	var env []string
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) && !strings.HasPrefix(k, "GIT_CONFIG_KEY_") && !strings.HasPrefix(k, "GIT_CONFIG_VALUE_") {
			env = append(env, kv)
		}
	}
	for _, k := range names {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// MissingCommitError is a commit a pointer names that its repository does
// not have (after fetching it by id and with every branch).
type MissingCommitError struct {
	Case, Role, SHA, Repository string
	Err                         error // git's words
}

func (e *MissingCommitError) Error() string {
	return fmt.Sprintf("case %s: %s %s is not in %s: %v", e.Case, e.Role, e.SHA, e.Repository, e.Err)
}

func (e *MissingCommitError) Unwrap() error { return e.Err }

// Materialize makes pointer p a case named name: it checks what p says
// (as ReadPointers does), fetches
// the named commits into the cache's bare repository of p.Repository
// (only those commits, at depth 1, where the server allows it; else every
// branch), checks that each is there and that Parent is Commit's first
// parent, and writes git's diff of the change with the new side of every
// file it adds or modifies, once: a later run finds the commits and the
// case in the cache and calls no server.
func (s Sources) Materialize(ctx context.Context, p Pointer, name string) (*Case, error) {
	if err := p.check(); err != nil {
		return nil, fmt.Errorf("case %s: %w", name, err)
	}
	if s.Cache == "" {
		return nil, fmt.Errorf("case %s: no cache directory to fetch it into (set WARDEN_EVAL_CACHE_DIR or HOME)", name)
	}
	dir := filepath.Join(s.Cache, "cases", p.Commit[:12]+"-"+shortHash(p.Repository+"\x00"+p.Parent))
	// Every run checks the commits (the cache's repository answers, with
	// no server, once it has them); the case is written once.
	if err := s.fetch(ctx, p, name); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, ChangeFile)); err != nil {
		if err := s.write(ctx, p, name, dir); err != nil {
			return nil, err
		}
	}
	meta := Meta{
		Description: p.Description,
		Provenance:  fmt.Sprintf("%s commit %s (parent %s)%s", p.Repository, p.Commit, p.Parent, fixedBy(p.Fixes())),
		License:     p.License, Language: p.Language, Findings: p.Findings, Clean: p.Clean,
	}
	c, err := loadCase(dir, meta)
	if err != nil {
		return nil, fmt.Errorf("case %s (materialised in %s): %w", name, dir, err)
	}
	c.Name, c.Pointer = name, &p
	return c, nil
}

func fixedBy(fixes []string) string {
	if len(fixes) == 0 {
		return ""
	}
	return ", fixed by " + strings.Join(fixes, ", ")
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:12]
}

// repo is the cache's bare repository of url, made on first use.
func (s Sources) repo(ctx context.Context, url string) (string, error) {
	dir := filepath.Join(s.Cache, "git", shortHash(url)+".git")
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("eval cache: %w", err)
	}
	if _, err := gitrepo.OutputEnv(ctx, s.GitEnv, dir, "init", "--quiet", "--bare"); err != nil {
		return "", fmt.Errorf("eval cache: %w", err)
	}
	return dir, nil
}

// roles are a pointer's commits by what they are: the change, its parent
// and each fix, once.
func (p Pointer) roles() [][2]string {
	r := [][2]string{{"commit", p.Commit}, {"parent", p.Parent}}
	for _, fix := range p.Fixes() {
		r = append(r, [2]string{"fix", fix})
	}
	return r
}

// Fixes are the commits that fixed the case's findings, each once, the
// case's own first.
func (p Pointer) Fixes() []string {
	var out []string
	for _, fix := range append([]string{p.Fix}, fixesOf(p.Findings)...) {
		if fix != "" && !slices.Contains(out, fix) {
			out = append(out, fix)
		}
	}
	return out
}

func fixesOf(ks []Known) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Fix
	}
	return out
}

// fetch brings p's commits into the cache's repository of p.Repository,
// unless it has them all, and checks them.
func (s Sources) fetch(ctx context.Context, p Pointer, name string) error {
	repo, err := s.repo(ctx, p.Repository)
	if err != nil {
		return err
	}
	missing := func() []string {
		var out []string
		for _, r := range p.roles() {
			if _, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, "cat-file", "-e", r[1]+"^{commit}"); err != nil {
				out = append(out, r[1])
			}
		}
		return out
	}
	if want := missing(); len(want) > 0 {
		base := []string{"fetch", "--quiet", "--no-tags", "--no-recurse-submodules"}
		// Just the named commits, where the server allows fetching by id
		// (GitHub does; a plain git server may need uploadpack.allowAnySHA1InWant).
		_, byID := gitrepo.OutputEnv(ctx, s.GitEnv, repo, append(append(base, "--depth=1", p.Repository), want...)...)
		if byID != nil || len(missing()) > 0 {
			all := append(base, p.Repository, "+refs/heads/*:refs/heads/*")
			if out, _ := gitrepo.OutputEnv(ctx, s.GitEnv, repo, "rev-parse", "--is-shallow-repository"); strings.TrimSpace(string(out)) == "true" {
				all = append(base, "--unshallow", p.Repository, "+refs/heads/*:refs/heads/*")
			}
			if _, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, all...); err != nil && byID != nil {
				return fmt.Errorf("case %s: fetch %s: %w", name, p.Repository, errors.Join(byID, err))
			}
		}
		if s.Progress != nil {
			s.Progress(fmt.Sprintf("case %s: fetched %d commits from %s", name, len(want), p.Repository))
		}
	}
	for _, r := range p.roles() {
		got, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, "rev-parse", "--verify", "--quiet", r[1]+"^{commit}")
		if err != nil || strings.TrimSpace(string(got)) != r[1] {
			return &MissingCommitError{Case: name, Role: r[0], SHA: r[1], Repository: p.Repository, Err: errors.New("not found by its id nor on any branch")}
		}
	}
	obj, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, "cat-file", "commit", p.Commit)
	if err != nil {
		return fmt.Errorf("case %s: %w", name, err)
	}
	if first := firstParent(obj); first != p.Parent {
		return fmt.Errorf("case %s: parent %s is not the first parent of commit %s (%s is)", name, p.Parent, p.Commit, cmp.Or(first, "none"))
	}
	return nil
}

// firstParent reads the first parent line of a raw commit object.
func firstParent(obj []byte) string {
	for _, l := range strings.Split(string(obj), "\n") {
		if l == "" {
			break // the end of the headers
		}
		if id, ok := strings.CutPrefix(l, "parent "); ok {
			return id
		}
	}
	return ""
}

// write materialises p into dir: change.diff (git diff Parent Commit, in
// the diff format warden reviews) and files/, the new side of every file
// the change adds or modifies. It writes into a temporary directory and
// renames it, so that a case directory is whole or absent.
func (s Sources) write(ctx context.Context, p Pointer, name, dir string) error {
	repo, err := s.repo(ctx, p.Repository)
	if err != nil {
		return err
	}
	diff, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, append(gitrepo.DiffArgs, p.Parent, p.Commit, "--")...)
	if err != nil {
		return fmt.Errorf("case %s: %w", name, err)
	}
	files, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		return fmt.Errorf("case %s: git diff %s %s: %w", name, p.Parent, p.Commit, err)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("eval cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".tmp-")
	if err != nil {
		return fmt.Errorf("eval cache: %w", err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if f.NewPath == "" {
			continue
		}
		if !filepath.IsLocal(filepath.FromSlash(f.NewPath)) {
			return fmt.Errorf("case %s: the change names a path outside its tree: %q", name, f.NewPath)
		}
		blob, err := gitrepo.OutputEnv(ctx, s.GitEnv, repo, "cat-file", "blob", p.Commit+":"+f.NewPath)
		if err != nil {
			return fmt.Errorf("case %s: %w", name, err)
		}
		dst := filepath.Join(tmp, FilesDir, filepath.FromSlash(f.NewPath))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("eval cache: %w", err)
		}
		if err := os.WriteFile(dst, blob, 0o644); err != nil {
			return fmt.Errorf("eval cache: %w", err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, ChangeFile), diff, 0o644); err != nil {
		return fmt.Errorf("eval cache: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, ChangeFile)); statErr != nil { // not another run's whole copy
			return fmt.Errorf("eval cache: %w", err)
		}
	}
	return nil
}
