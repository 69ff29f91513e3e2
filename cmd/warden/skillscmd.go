package main

import (
	"os"
	"path/filepath"

	"github.com/org/warden/cli"
	"github.com/org/warden/skills"
)

// runSkills is `warden skills list|validate [DIR]`: the review skills that
// run, what discovery skipped and why, and the warnings, as a review sees
// them (list); validate exits 2 when a skill file is broken.
func runSkills(e *env, o *cli.Skills) error {
	sub, arg := o.Sub, o.Dir
	dir := e.root
	if arg != "" {
		dir = e.abs(arg)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("skills %s: %s is not a directory", sub, arg)
		}
	}
	if sub == "list" {
		return skills.WriteList(e.stdout, e.stderr, skills.Discover(os.DirFS(dir)))
	}
	// Where DIR is in the repository decides the rule of an agent's folder.
	rel, err := filepath.Rel(e.root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		rel = ""
	}
	if n := skills.WriteValidation(e.stdout, e.stderr, skills.Validate(os.DirFS(dir), filepath.ToSlash(rel))); n > 0 {
		return usagef("%d skill file(s) under %s cannot run", n, dir)
	}
	return nil
}
