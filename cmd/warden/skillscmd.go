package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

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
		found := skills.Discover(os.DirFS(dir))
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
		for _, s := range skills.Catalog(found.Skills) {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Source, oneLine(s.Description))
		}
		tw.Flush()
		writeSkipped(e, found.Skipped, found.Warnings)
		return nil
	}
	rel, err := filepath.Rel(e.root, dir)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		rel = ""
	}
	found := skills.Validate(os.DirFS(dir), filepath.ToSlash(rel))
	broken := found.Broken()
	for _, s := range broken {
		for _, p := range s.Problems {
			fmt.Fprintln(e.stderr, p.Error())
		}
	}
	writeSkipped(e, slices.DeleteFunc(slices.Clone(found.Skipped), func(s skills.Skipped) bool { return s.Reason != skills.SkipNotReview }), found.Warnings)
	if len(broken) > 0 {
		return usagef("%d skill file(s) under %s cannot run", len(broken), dir)
	}
	fmt.Fprintf(e.stdout, "%d skill(s) valid\n", len(found.Skills))
	return nil
}

// writeSkipped lists the skill files skipped and why, and the warnings.
func writeSkipped(e *env, skipped []skills.Skipped, warnings skills.Problems) {
	if n := len(skipped); n > 0 {
		fmt.Fprintf(e.stdout, "\nSkipped (%d), not run in reviews:\n", n)
		for _, s := range skipped {
			fmt.Fprintf(e.stdout, "  %s\n", oneLine(s.String()))
		}
	}
	for _, w := range warnings {
		fmt.Fprintf(e.stderr, "warden: warning: %s\n", oneLine(w.Error()))
	}
}
