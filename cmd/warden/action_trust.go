package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/org/warden/skills"
)

// trustedConfig is the configuration and the skills the Action may use for
// a pull request: those of its base revision, read from git objects, never
// those of the workspace (on pull_request the workspace is the pull
// request's own code, which could lower fail_on, drop or add a skill, or
// point a route at a server that collects the key).
type trustedConfig struct {
	cfg *fileConfig
	// skillsDir holds a copy of the base revision's skill directories
	// (skills.Dirs), regular files only; chooseSkills discovers skills
	// there. An empty directory when nothing was read: then only the
	// built-ins run.
	skillsDir string
	// from says where the configuration came from, for the log.
	from string
	// notRead is set when the base revision could not be read: what the
	// job summary and the log say instead ("warden.toml not read: ...").
	notRead string
	// warnings are things worth a warning (a skill that is a symbolic
	// link, left out).
	warnings []string
}

// close removes the copy of the skills.
func (tc *trustedConfig) close() {
	if tc.skillsDir != "" {
		os.RemoveAll(tc.skillsDir)
	}
}

// loadTrustedConfig reads warden.toml (or the config-path input) and the
// skill directories from the pull request's base revision in the checkout
// at e.dir, fetching the base commit when it is missing. Without a checkout
// that has or can fetch it, the configuration is the defaults plus the
// Action's inputs and only the built-in skills run; notRead says so. A
// config-path outside the workspace (a file an earlier step wrote) is read
// from disk: the workflow, not the pull request, names it.
func loadTrustedConfig(ctx context.Context, e *env, configPath string, pr *pullRequest) (*trustedConfig, error) {
	named, onDisk, err := resolveConfigPath(e.dir, configPath)
	if err != nil {
		return nil, err
	}
	tree, why := baseTree(ctx, e.dir, pr)
	if tree == nil {
		// An empty directory: only the built-in skills are found.
		empty, err := os.MkdirTemp(cmp.Or(e.getenv("RUNNER_TEMP"), os.TempDir()), "warden-no-skills-")
		if err != nil {
			return nil, err
		}
		tc := &trustedConfig{cfg: &fileConfig{}, skillsDir: empty, from: "the defaults and the Action's inputs"}
		if onDisk {
			cfg, _, err := loadConfig(nil, named, os.ReadFile)
			if err != nil {
				tc.close()
				return nil, &usageError{err}
			}
			tc.cfg, tc.from = cfg, named
		}
		tc.notRead = fmt.Sprintf("%s not read: no checkout of the base revision (%s); the review uses the built-in skills, the defaults and the Action's inputs",
			cmp.Or(configPath, "warden.toml"), why)
		if onDisk {
			tc.notRead = fmt.Sprintf("skills of the repository not read: no checkout of the base revision (%s); the review uses the built-in skills", why)
		}
		return tc, nil
	}
	defer tree.Close()

	tc := &trustedConfig{}
	short := shortSHA(pr.baseSHA)
	switch {
	case onDisk:
		tc.cfg, _, err = loadConfig(nil, named, os.ReadFile)
		tc.from = named
	case named == "":
		var file string
		tc.cfg, file, err = loadConfig(tree, "", nil)
		tc.from = "the defaults (no warden.toml in the base revision " + short + ")"
		if file != "" {
			tc.from = file + " of the base revision " + short
		}
	default:
		tc.cfg, _, err = loadConfig(tree, named, func(name string) ([]byte, error) {
			data, err := fs.ReadFile(tree, name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("not in the base revision %s: %w", short, fs.ErrNotExist)
			}
			return data, err
		})
		tc.from = named + " of the base revision " + short
	}
	if err != nil {
		return nil, &usageError{err}
	}
	if tc.skillsDir, tc.warnings, err = copySkills(tree, e.getenv); err != nil {
		return nil, fmt.Errorf("skills of the base revision %s: %w", short, err)
	}
	return tc, nil
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
		return "", false, usagef("input config-path: %q leaves the repository: name a file in it, relative to its root", configPath)
	}
	if p == "warden.toml" {
		p = ""
	}
	return p, false, nil
}

// baseTree opens the base revision of pr in the checkout at dir, fetching
// the commit when the checkout lacks it. It returns nil and why when there
// is no such checkout.
func baseTree(ctx context.Context, dir string, pr *pullRequest) (*gitTree, string) {
	if _, err := gitOutput(ctx, dir, "rev-parse", "--git-dir"); err != nil {
		return nil, "the workspace is not a git checkout"
	}
	if !isSHA(pr.baseSHA) {
		return nil, fmt.Sprintf("the event names no base commit (%q)", pr.baseSHA)
	}
	if err := ensureCommit(ctx, dir, pr.baseSHA); err != nil {
		return nil, fmt.Sprintf("the checkout does not have the base commit %s and cannot fetch it: %v", shortSHA(pr.baseSHA), err)
	}
	tree, err := openGitTree(ctx, dir, pr.baseSHA)
	if err != nil {
		return nil, err.Error()
	}
	return tree, ""
}

// ensureCommit fetches commit sha from origin, as git objects only (nothing
// is checked out), unless the checkout already has it.
func ensureCommit(ctx context.Context, dir, sha string) error {
	if _, err := gitOutput(ctx, dir, "cat-file", "-e", sha+"^{commit}"); err == nil {
		return nil
	}
	_, err := gitOutput(ctx, dir, "fetch", "--no-tags", "--quiet", "--no-recurse-submodules", "origin", sha)
	return err
}

// copySkills copies the regular files of the skill directories of tree
// into a new temporary directory. Symbolic links are left out, with a
// warning each: a link is not followed out of the base revision.
func copySkills(tree fs.FS, getenv func(string) string) (dir string, warnings []string, err error) {
	dir, err = os.MkdirTemp(cmp.Or(getenv("RUNNER_TEMP"), os.TempDir()), "warden-base-skills-")
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

// isSHA reports whether s is a full commit id (SHA-1 or SHA-256), lower-case hex.
func isSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdef") == ""
}

func shortSHA(s string) string {
	if len(s) > 7 {
		return s[:7]
	}
	return s
}
