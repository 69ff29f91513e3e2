package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/org/warden/cli"
	"github.com/org/warden/skills"
)

// runSkills is `warden skills list|validate [DIR]`.
func runSkills(e *env, o *cli.Skills) error {
	sub, arg := o.Sub, o.Dir
	dir := e.root
	if arg != "" {
		dir = e.abs(arg)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("skills %s: %s is not a directory", sub, arg)
		}
	}
	switch sub {
	case "list":
		repo, problems := skills.Discover(os.DirFS(dir))
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
		for _, s := range skills.Catalog(repo) {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Source, oneLine(s.Description))
		}
		tw.Flush()
		if len(problems) > 0 {
			for _, p := range problems {
				fmt.Fprintln(e.stderr, p.Error())
			}
			return usagef("%d problem(s) in skill files", len(problems))
		}
		return nil
	case "validate":
		found, problems := skills.Validate(os.DirFS(dir))
		for _, p := range problems {
			fmt.Fprintln(e.stderr, p.Error())
		}
		if len(problems) > 0 {
			return usagef("%d problem(s) in skill files under %s", len(problems), dir)
		}
		fmt.Fprintf(e.stdout, "%d skill(s) valid\n", len(found))
		return nil
	}
	return nil
}
