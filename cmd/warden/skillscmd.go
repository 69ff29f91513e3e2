package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/org/warden/skills"
)

// runSkills is `warden skills list|validate [DIR]`.
func runSkills(e *env, args []string) error {
	if len(args) == 0 {
		return usagef("skills: want a subcommand: list or validate")
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("warden skills "+sub, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err}
	}
	if fs.NArg() > 1 {
		return usagef("skills %s: want at most one directory, got %d arguments", sub, fs.NArg())
	}
	dir := e.dir
	if fs.NArg() == 1 {
		dir = fs.Arg(0)
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.dir, dir)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return usagef("skills %s: %s is not a directory", sub, fs.Arg(0))
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
	default:
		return usagef("skills: unknown subcommand %q (want list or validate)", sub)
	}
}
