package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/org/warden/action"
)

// command is one subcommand's help: the one home for what `warden help`,
// `warden CMD -h` and the guidance under an error say about it.
type command struct {
	name     string
	summary  string // one line, for the command list
	usage    string // the synopsis after "warden "
	details  string // a paragraph or two; may be empty
	examples []string
	// flags returns the command's flag defaults as the flag package
	// prints them (from the command's own FlagSet, so they cannot drift).
	flags func() string
	// parse checks the command's flags and arguments without running it,
	// so that a mistake in them is told apart from the command's own
	// errors and comes with the help guidance.
	parse func(args []string) error
}

// noArgs is the parse of a command that takes no arguments.
func noArgs(name string) func([]string) error {
	return func(args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("%s: unexpected argument %q", name, args[0])
		}
		return nil
	}
}

// commands are warden's subcommands, in the order `warden help` lists them.
var commands = []command{
	{
		name: "review", summary: "review a change: the working tree, a branch, or a diff (the default command outside GitHub Actions)",
		usage: "review [--diff FILE|- | --base REF] [--config FILE] [--skill NAME]... [--format FORMAT] [--output FILE] [--dry-run] [--fail-on SEVERITY] [-v]",
		details: "Without --diff or --base it reviews the uncommitted changes (index, working tree and untracked files) against HEAD.\n" +
			"Configuration (warden.toml) and skills (.warden/skills, .agents/skills, .claude/skills) are read from the\n" +
			"repository's top level, whatever the working directory. Exit codes: 0 complete and nothing at or above\n" +
			"--fail-on; 1 a finding at or above --fail-on; 2 bad input or configuration (nothing was sent);\n" +
			"3 partial or provider-unavailable; 130 interrupted.",
		examples: []string{
			"warden review --dry-run                       # the plan, no model called, no key needed",
			"WARDEN_API_KEY=... warden review --base main  # what a pull request from this branch into main shows",
			"git diff HEAD~3 | warden review --diff - --format markdown --output review.md",
			"warden review --skill security-review --fail-on medium -v",
		},
		flags: func() string {
			return flagDefaults(func(w io.Writer) error { _, err := parseReviewFlags([]string{"-h"}, w); return err })
		},
		parse: func(args []string) error { _, err := parseReviewFlags(args, io.Discard); return err },
	},
	{
		name: "probe", summary: "health-check every configured route with one tiny real request each; exits 1 if one is unhealthy",
		usage:    "probe [--config FILE] [--format text|json] [--force]",
		examples: []string{"warden probe", "warden probe --format json | jq '.routes[] | select(.healthy | not)'"},
		flags: func() string {
			return flagDefaults(func(w io.Writer) error { _, err := parseProbeFlags([]string{"-h"}, w); return err })
		},
		parse: func(args []string) error { _, err := parseProbeFlags(args, io.Discard); return err },
	},
	{
		name: "eval", summary: "score skills on each route over a corpus of cases with known findings; record and replay the answers",
		usage: "eval [--replay DIR | --record DIR] [--baseline FILE] [--config FILE] [--skills DIR] [--skill NAME]... [--format text|json|markdown] CORPUS...",
		details: "A case is a directory with case.toml (known findings, clean regions), change.diff and files/ (see the README).\n" +
			"Exit codes: 0 scored; 1 a regression against --baseline; 2 bad input; 3 some items got no answer.",
		examples: []string{
			"warden eval --record eval/rec --format json --output base.json eval/cases   # against your model",
			"warden eval --replay eval/rec --baseline base.json eval/cases               # in CI, no model called",
		},
		flags: func() string {
			return flagDefaults(func(w io.Writer) error { _, err := parseEvalFlags([]string{"-h"}, w); return err })
		},
		parse: func(args []string) error { _, err := parseEvalFlags(args, io.Discard); return err },
	},
	{
		name: "skills", summary: "list the review skills, or validate skill files",
		usage: "skills list [DIR]\n  warden skills validate [DIR]",
		details: "list prints the repository's skills and the built-ins (DIR: the repository root, default the top level).\n" +
			"validate checks DIR's skill files: a repository root with .warden/skills (or .agents/skills, .claude/skills),\n" +
			"a folder of NAME/SKILL.md or NAME.md files, or one skill's folder. It exits 2 on any problem.",
		examples: []string{"warden skills list", "warden skills validate .warden/skills"},
		parse:    func(args []string) error { _, _, err := parseSkillsArgs(args); return err },
	},
	{
		name: "action", summary: "the GitHub Action entry point (the default when GITHUB_ACTIONS=true)",
		usage:    "action [--mode full|analyze|report] [--report-path FILE]",
		details:  "It reads its settings from the Action's inputs (INPUT_*) and the GITHUB_* variables; see action.yml.",
		examples: []string{"warden action --mode analyze --report-path \"$RUNNER_TEMP/warden-report.json\""},
		flags: func() string {
			return flagDefaults(func(w io.Writer) error { return parseActionFlags([]string{"-h"}, w, new(action.Inputs)) })
		},
		parse: func(args []string) error { return parseActionFlags(args, io.Discard, new(action.Inputs)) },
	},
	{
		name: "version", summary: "print warden's version (also: warden --version)",
		usage: "version", examples: []string{"warden version"},
		parse: noArgs("version"),
	},
	{
		name: "help", summary: "print this list, or a command's help: warden help COMMAND",
		usage: "help [COMMAND]", examples: []string{"warden help review"},
	},
}

// lookupCommand returns the command named name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// flagDefaults runs a command's flag parser on -h and returns the flag list
// it prints, without the flag package's "Usage of ..." line.
func flagDefaults(parse func(io.Writer) error) string {
	var b bytes.Buffer
	_ = parse(&b) // flag.ErrHelp
	_, rest, _ := strings.Cut(b.String(), "\n")
	return rest
}

// writeCommandList is `warden help`: every command with its summary.
func writeCommandList(w io.Writer) {
	fmt.Fprintf(w, "warden %s reviews code changes with AI review skills, bounded in time and honest about what it did not review.\n\n", version)
	fmt.Fprint(w, "Usage:\n  warden [-C DIR] COMMAND [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, "\nFlags:\n  -C DIR        run as if started in DIR\n  -h, --help    print this help\n  --version     print the version\n\n")
	fmt.Fprint(w, "Examples:\n  warden review --dry-run\n  WARDEN_API_KEY=... warden review --base main\n\n")
	fmt.Fprint(w, "Run 'warden help COMMAND' (or 'warden COMMAND -h') for a command's flags, defaults and examples.\n")
}

// writeCommandHelp is `warden help CMD` and `warden CMD -h`.
func writeCommandHelp(w io.Writer, c command) {
	fmt.Fprintf(w, "warden %s: %s\n\nUsage:\n  warden %s\n", c.name, c.summary, c.usage)
	if c.details != "" {
		fmt.Fprintf(w, "\n%s\n", c.details)
	}
	if c.flags != nil {
		if f := c.flags(); f != "" {
			fmt.Fprintf(w, "\nFlags:\n%s", f)
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, ex := range c.examples {
			fmt.Fprintf(w, "  %s\n", ex)
		}
	}
}

// wantsHelp reports whether args ask for help (-h, -help or --help before
// any "--").
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// commandError is bad input to one command (a flag, an argument): printed
// once, on one line, with where to read the command's help.
type commandError struct {
	cmd string // "" for warden itself
	err error
}

func (e *commandError) Error() string {
	help := "warden help"
	if e.cmd != "" {
		help += " " + e.cmd
	}
	msg := strings.TrimSuffix(oneLine(e.err.Error()), ".")
	if e.cmd != "" && !strings.HasPrefix(msg, e.cmd+":") && !strings.HasPrefix(msg, e.cmd+" ") {
		msg = e.cmd + ": " + msg
	}
	return fmt.Sprintf("%s. Run '%s' for usage", msg, help)
}

func (e *commandError) Unwrap() error { return e.err }
