package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// Command is one subcommand's help and grammar.
type Command struct {
	Name     string
	Summary  string // one line, for the command list
	Usage    string // the synopsis after "warden "
	Details  string // a paragraph or two; may be empty
	Examples []string
	// parse defines the command's flags on fs, parses args with them and
	// checks them, returning the command's options. The help's flag list
	// comes from the same definitions, so it cannot drift.
	parse func(fs *flag.FlagSet, args []string) (any, error)
}

// modelExample is the examples' model: the environment's route
// (WARDEN_BASE_URL, WARDEN_MODEL) on a local Ollama, which needs no key.
// The examples are a shell session, run in order: an export serves the
// lines after it (a test runs every example of every help so).
const modelExample = "export WARDEN_BASE_URL=http://localhost:11434/v1 WARDEN_MODEL=qwen2.5-coder"

// Commands are warden's subcommands, in the order `warden help` lists them.
var Commands = []Command{
	{
		Name: "review", Summary: "review a change: the working tree, a branch, or a diff (the default command outside GitHub Actions)",
		Usage: "review [--diff FILE|- | --base REF] [--config FILE] [--skill NAME]... [--format FORMAT] [--output FILE] [--dry-run] [--fail-on SEVERITY] [-v]",
		Details: "Without --diff or --base it reviews the uncommitted changes (index, working tree and untracked files) against HEAD.\n" +
			"Configuration (warden.toml) and skills (.warden/skills, .agents/skills, .claude/skills) are read from the\n" +
			"repository's top level, whatever the working directory; the repository's instructions (AGENTS.md,\n" +
			"CLAUDE.md, Copilot's) from HEAD (with --base, the merge base), never from the change.\n" +
			"Exit codes: 0 complete and nothing at or above --fail-on; 1 a finding at or above --fail-on;\n" +
			"2 bad input or configuration (nothing was sent); 3 partial or provider-unavailable; 130 interrupted.",
		Examples: []string{
			"warden review --dry-run                # the plan: no model called, no key needed",
			modelExample + "  # a model for the lines below: a local Ollama",
			"warden review --base main              # what a pull request from this branch into main shows",
			"git diff HEAD~3 | warden review --diff - --format markdown --output review.md",
			"warden review --skill security-review --fail-on medium -v",
		},
		parse: parseReview,
	},
	{
		Name: "probe", Summary: "health-check every configured route with one tiny real request each; exits 1 if one is unhealthy",
		Usage: "probe [--config FILE] [--format text|json] [--force]",
		Examples: []string{
			modelExample + "  # a route (or [[routes]] in warden.toml) for the lines below",
			"warden probe",
			"warden probe --force --format json | jq '.routes[] | select(.healthy | not)'   # within the hour: --force",
		},
		parse: parseProbe,
	},
	{
		Name: "eval", Summary: "score skills on each route over a corpus of cases with known findings; record and replay the answers, also under fault schedules",
		Usage: "eval [--replay DIR | --record DIR] [--baseline FILE | --faults FILE...] [--config FILE] [--skills DIR] [--skill NAME]... [--format text|json|markdown] CORPUS...",
		Details: "CORPUS is a case directory (case.toml, change.diff, files/), a directory of them, or a .toml file of pointers to\n" +
			"public commits, fetched with git into the eval cache (see the README).\n" +
			"Exit codes: 0 scored; 1 a regression against --baseline, or under --faults a wrong outcome or a review over its\n" +
			"budget; 2 bad input; 3 some items got no answer.",
		Examples: []string{
			modelExample + "  # the model to score, for the lines below",
			"warden eval --record eval/rec --format json --output base.json eval/cases   # record its answers",
			"warden eval --replay eval/rec --baseline base.json eval/cases               # in CI: no model called",
			"warden eval --replay eval/rec --faults eval/faults eval/cases               # the same answers under fault schedules",
		},
		parse: parseEval,
	},
	{
		Name: "skills", Summary: "list the review skills, or validate skill files",
		Usage: "skills list [DIR]\n  warden skills validate [DIR]",
		Details: "list prints the skills a review runs, the built-ins and the repository's review skills, and the skill\n" +
			"files it skips, with why (DIR: the repository root, default the top level). A skill of .agents/skills or\n" +
			".claude/skills is a review skill only when its frontmatter says metadata: {warden: review}.\n" +
			"validate checks DIR's skill files: a repository root with .warden/skills (or .agents/skills, .claude/skills),\n" +
			"a folder of NAME/SKILL.md or NAME.md files, or one skill's folder. It exits 2 on a broken skill.",
		Examples: []string{"warden skills list", "warden skills validate .warden/skills"},
		parse:    parseSkills,
	},
	{
		Name: "action", Summary: "the GitHub Action entry point (the default when GITHUB_ACTIONS=true)",
		Usage:    "action [--mode full|analyze|report] [--report-path FILE]",
		Details:  "It reads its settings from the Action's inputs (INPUT_*) and the GITHUB_* variables; see action.yml.",
		Examples: []string{"warden action --mode analyze --report-path \"$RUNNER_TEMP/warden-report.json\"   # in a workflow's step"},
		parse:    parseAction,
	},
	{
		Name: "version", Summary: "print warden's version (also: warden --version)",
		Usage: "version", Examples: []string{"warden version"},
		parse: func(fs *flag.FlagSet, args []string) (any, error) { return nil, parseFlags(fs, args, 0) },
	},
	{
		Name: "help", Summary: "print this list, or a command's help: warden help COMMAND",
		Usage: "help [COMMAND]", Examples: []string{"warden help review"},
	},
}

// lookup returns the command named name.
func lookup(name string) (Command, bool) {
	for _, c := range Commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// commandNames are the commands' names, in the order of Commands.
func commandNames() []string {
	names := make([]string, len(Commands))
	for i, c := range Commands {
		names[i] = c.Name
	}
	return names
}

// WriteHelp is `warden help` (name "": the command list) and `warden help
// CMD`, `warden CMD -h`; version is warden's, for the list's first line.
func WriteHelp(w io.Writer, name, version string) {
	c, ok := lookup(name)
	if !ok {
		writeList(w, version)
		return
	}
	fmt.Fprintf(w, "warden %s: %s\n\nUsage:\n  warden %s\n", c.Name, c.Summary, c.Usage)
	if c.Details != "" {
		fmt.Fprintf(w, "\n%s\n", c.Details)
	}
	if f := c.flagList(); f != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", f)
	}
	if len(c.Examples) > 0 {
		fmt.Fprint(w, "\nExamples:\n")
		for _, ex := range c.Examples {
			fmt.Fprintf(w, "  %s\n", ex)
		}
	}
}

// flagList is the command's flags with their defaults, as the flag package
// prints them.
func (c Command) flagList() string {
	if c.parse == nil {
		return ""
	}
	var b strings.Builder
	fs := c.flagSet()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	return b.String()
}

func writeList(w io.Writer, version string) {
	fmt.Fprintf(w, "warden %s reviews code changes with AI review skills, bounded in time and honest about what it did not review.\n\n", version)
	fmt.Fprint(w, "Usage:\n  warden [-C DIR] COMMAND [flags]\n\nCommands:\n")
	for _, c := range Commands {
		fmt.Fprintf(w, "  %-9s %s\n", c.Name, c.Summary)
	}
	fmt.Fprint(w, "\nFlags:\n  -C DIR        run as if started in DIR\n  -h, --help    print this help\n  --version     print the version\n\n")
	fmt.Fprintf(w, "Examples:\n  warden review --dry-run\n  %s  # a model for the line below\n  warden review --base main\n\n", modelExample)
	fmt.Fprint(w, "Run 'warden help COMMAND' (or 'warden COMMAND -h') for a command's flags, defaults and examples.\n")
}
