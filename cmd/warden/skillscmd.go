package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/org/warden/skills"
)

// runSkills is `warden skills list|validate [DIR]`.
func runSkills(e *env, args []string) error {
	sub, arg, err := parseSkillsArgs(args)
	if err != nil {
		return &usageError{err}
	}
	dir := e.root
	if arg != "" {
		dir = arg
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(e.dir, dir)
		}
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

// parseSkillsArgs reads `warden skills SUB [DIR]`.
func parseSkillsArgs(args []string) (sub, dir string, err error) {
	if len(args) == 0 {
		return "", "", errors.New("skills: want a subcommand: list or validate")
	}
	sub, args = args[0], args[1:]
	if sub != "list" && sub != "validate" {
		return "", "", fmt.Errorf("skills: unknown subcommand %q (want list or validate)", sub)
	}
	fs := flag.NewFlagSet("warden skills "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("skills %s: %w", sub, err)
	}
	if fs.NArg() > 1 {
		return "", "", fmt.Errorf("skills %s: want at most one directory, got %d arguments", sub, fs.NArg())
	}
	return sub, fs.Arg(0), nil
}
