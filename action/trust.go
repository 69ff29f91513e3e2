package action

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// trusted is the configuration and the skills the Action may use for a
// pull request: those of its base revision, read from git objects, never
// those of the workspace (on pull_request the workspace is the pull
// request's own code, which could lower fail_on, drop or add a skill, or
// point a route at a server that collects the key).
type trusted struct {
	cfg *Config
	// skills holds a copy of the base revision's skill directories
	// (skills.Dirs), regular files only, in a temporary directory dir. Empty
	// when nothing was read: then only the built-ins run.
	skills fs.FS
	dir    string
	// from says where the configuration came from, for the log.
	from string
	// notRead is set when the base revision could not be read: what the
	// job summary and the log say instead ("warden.toml not read: ...").
	notRead string
	// warnings are things worth a warning (a skill that is a symbolic
	// link, left out).
	warnings []string
	// tree is the base revision's tree, open until close: the
	// repository's instructions (AGENTS.md, [[instructions]] files) are
	// read from it when the review is planned, never from the workspace.
	// nil when the base could not be read.
	tree *gitrepo.Tree
	// instructionsFrom names tree for the report ("the base revision
	// 3b15d29").
	instructionsFrom string
}

// close removes the copy of the skills and closes the base's tree.
func (tc *trusted) close() {
	if tc.dir != "" {
		os.RemoveAll(tc.dir)
	}
	if tc.tree != nil {
		tc.tree.Close()
	}
}

// instructions is what the plan reads the repository's instructions from:
// the base revision's tree, or nil and why not.
func (tc *trusted) instructions() (repo fs.FS, from, notRead string) {
	if tc.tree == nil {
		return nil, "", "no checkout of the base revision to read them from"
	}
	return tc.tree, tc.instructionsFrom, ""
}

// loadTrusted reads warden.toml (or the config-path input) and the skill
// directories from the pull request's base revision in the checkout,
// fetching the base commit when it is missing. Without a checkout that has
// or can fetch it, the configuration is the defaults plus the Action's
// inputs and only the built-in skills run; notRead says so. A config-path
// outside the workspace (a file an earlier step wrote) is read from disk:
// the workflow, not the pull request, names it.
func (a *runner) loadTrusted(ctx context.Context, pr *PullRequest) (*trusted, error) {
	configPath := a.in.ConfigPath
	named, onDisk, err := resolveConfigPath(a.svc.Workspace, configPath)
	if err != nil {
		return nil, err
	}
	tree, why := baseTree(ctx, a.svc.Workspace, a.svc.Git, pr)
	if tree == nil {
		return a.untrusted(configPath, named, onDisk, why)
	}
	short := gitrepo.Short(pr.BaseSHA)
	tc := &trusted{tree: tree, instructionsFrom: "the base revision " + short}
	defer func() {
		if tc.cfg == nil || tc.skills == nil { // an error: nothing is handed on
			tree.Close()
		}
	}()
	switch {
	case onDisk:
		tc.cfg, err = a.configure(named, a.svc.ReadFile)
		tc.from = named
	case named == "":
		data, rerr := fs.ReadFile(tree, "warden.toml")
		tc.from = "the defaults (no warden.toml in the base revision " + short + ")"
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
			tc.cfg, err = a.svc.Configure("", nil)
		case rerr != nil:
			err = fmt.Errorf("config warden.toml: %w", unwrapPathError(rerr))
		default:
			tc.cfg, err = a.svc.Configure("warden.toml", data)
			tc.from = "warden.toml of the base revision " + short
		}
	default:
		tc.cfg, err = a.configure(named, func(name string) ([]byte, error) {
			data, err := fs.ReadFile(tree, name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("not in the base revision %s: %w", short, fs.ErrNotExist)
			}
			return data, err
		})
		tc.from = named + " of the base revision " + short
	}
	if err != nil {
		return nil, &InputError{err}
	}
	if tc.dir, tc.warnings, err = copySkills(tree, a.svc.RunnerTemp); err != nil {
		return nil, fmt.Errorf("skills of the base revision %s: %w", short, err)
	}
	tc.skills = os.DirFS(tc.dir)
	return tc, nil
}

// untrusted is the configuration without a base revision: the defaults
// and the inputs (or a config-path on disk), and the built-in skills only.
func (a *runner) untrusted(configPath, named string, onDisk bool, why string) (*trusted, error) {
	// An empty directory: only the built-in skills are found.
	empty, err := os.MkdirTemp(cmp.Or(a.svc.RunnerTemp, os.TempDir()), "warden-no-skills-")
	if err != nil {
		return nil, err
	}
	tc := &trusted{dir: empty, skills: os.DirFS(empty), from: "the defaults and the Action's inputs"}
	if onDisk {
		if tc.cfg, err = a.configure(named, a.svc.ReadFile); err != nil {
			tc.close()
			return nil, &InputError{err}
		}
		tc.from = named
		tc.notRead = fmt.Sprintf("skills and instructions of the repository not read: no checkout of the base revision (%s); the review uses the built-in skills", why)
		return tc, nil
	}
	if tc.cfg, err = a.svc.Configure("", nil); err != nil {
		tc.close()
		return nil, &InputError{err}
	}
	tc.notRead = fmt.Sprintf("%s not read: no checkout of the base revision (%s); the review uses the built-in skills, the defaults and the Action's inputs, and no repository instructions",
		cmp.Or(configPath, "warden.toml"), why)
	return tc, nil
}

// configure reads the named configuration file with read and hands it to
// the wiring's Configure.
func (a *runner) configure(named string, read func(string) ([]byte, error)) (*Config, error) {
	data, err := read(named)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", named, unwrapPathError(err))
	}
	return a.svc.Configure(named, data)
}

// resolveConfigPath turns the config-path input into a path in the base
// tree (named; "" for the default warden.toml) or, for an absolute path
// outside the workspace, a file on disk (onDisk).
func resolveConfigPath(workspace, configPath string) (named string, onDisk bool, err error) {
	if configPath == "" || configPath == "warden.toml" {
		return "", false, nil
	}
	p := configPath
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(workspace, p)
		if err != nil || !filepath.IsLocal(rel) {
			return p, true, nil
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	if !fs.ValidPath(p) || p == "." {
		return "", false, inputErrorf("input config-path: %q leaves the repository: name a file in it, relative to its root", configPath)
	}
	if p == "warden.toml" {
		p = ""
	}
	return p, false, nil
}

// baseTree opens the base revision of pr in the checkout at dir, fetching
// the commit when the checkout lacks it. It returns nil and why when there
// is no such checkout.
func baseTree(ctx context.Context, dir string, remote gitrepo.Remote, pr *PullRequest) (*gitrepo.Tree, string) {
	if !gitrepo.IsRepo(ctx, dir) {
		return nil, "the workspace is not a git checkout"
	}
	if !gitrepo.IsSHA(pr.BaseSHA) {
		return nil, fmt.Sprintf("the event names no base commit (%q)", pr.BaseSHA)
	}
	if err := remote.EnsureCommit(ctx, dir, pr.BaseSHA); err != nil {
		return nil, fmt.Sprintf("the checkout does not have the base commit %s and cannot fetch it: %v", gitrepo.Short(pr.BaseSHA), err)
	}
	tree, err := gitrepo.OpenTree(ctx, dir, pr.BaseSHA)
	if err != nil {
		return nil, err.Error()
	}
	return tree, ""
}

// copySkills copies the regular files of the skill directories of tree
// into a new temporary directory. Symbolic links are left out, with a
// warning each: a link is not followed out of the base revision.
func copySkills(tree fs.FS, tmp string) (dir string, warnings []string, err error) {
	dir, err = os.MkdirTemp(cmp.Or(tmp, os.TempDir()), "warden-base-skills-")
	if err != nil {
		return "", nil, err
	}
	for _, root := range skills.Dirs {
		err = fs.WalkDir(tree, root, func(p string, d fs.DirEntry, err error) error {
			switch {
			case errors.Is(err, fs.ErrNotExist) && p == root:
				return nil
			case err != nil:
				return err
			case d.Type()&fs.ModeSymlink != 0:
				warnings = append(warnings, fmt.Sprintf("%s is a symbolic link in the base revision: not followed, and not read as a skill", p))
				return nil
			case d.IsDir():
				return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(p)), 0o755)
			case !d.Type().IsRegular():
				return nil
			}
			data, err := fs.ReadFile(tree, p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), data, 0o644)
		})
		if err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	return dir, warnings, nil
}

// trustedAssociations are the author_association values whose pull
// requests the Action trusts: the repository's owner, its organization's
// members and its collaborators.
var trustedAssociations = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// authorTrusted is the one decision of whether the Action trusts the
// author of pr: an owner, member or collaborator (author_association),
// wherever the change comes from. An untrusted author controls more than
// the code: the conventions that exclude files from a review (a generated
// header, a *_generated.go name, a build/ directory) do not apply to the
// change (PlanRequest.Untrusted), the author's dismissals do not count
// (followUp), and trusted-authors-only does not review the change.
func authorTrusted(pr *PullRequest) bool { return trustedAssociations[pr.Association] }

// unwrapPathError drops the *fs.PathError wrapper whose path the caller
// already names (review.UnwrapPathError, the one home).
var unwrapPathError = review.UnwrapPathError
