// Package cli is warden's command line grammar: the commands, their flags and
// arguments read into typed options, the help texts, and the errors that say
// where to read them (with the nearest command or flag to a mistyped one),
// and the version line (Build, from the build information cmd/warden
// reads). It is the one home of what `warden help`, `warden CMD -h`,
// `warden version` and the guidance under a usage error say.
//
// It parses and it writes help; it runs nothing and touches no process state
// (no os, no environment, no files), so cmd/warden, the wiring, decides all
// that follows from a command line, exit codes included. It must not import
// config, execution or any sink beyond the value types its flags read
// (review.Severity, report.Format, eval.Thresholds, action.Mode).
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/org/warden/report"
)

// Invocation is a parsed command line.
type Invocation struct {
	// Command is the command's name; "" with Help is warden itself (the
	// command list).
	Command string
	// Help asks for Command's help (WriteHelp); nothing else is to run.
	Help bool
	// Options are the command's: *Review, *Probe, *Eval, *Skills or
	// *Action; nil for version and help.
	Options any
}

// Error is bad input on the command line (a flag, an argument, a command
// name): one line, with where to read the command's help.
type Error struct {
	Command string // "" for warden itself
	Err     error
}

func (e *Error) Error() string {
	help := "warden help"
	if e.Command != "" {
		help += " " + e.Command
	}
	msg := strings.TrimSuffix(report.OneLine(e.Err.Error()), ".")
	if e.Command != "" && !strings.HasPrefix(msg, e.Command+":") && !strings.HasPrefix(msg, e.Command+" ") {
		msg = e.Command + ": " + msg
	}
	if strings.HasSuffix(msg, "?") { // "...; did you mean X?"
		return fmt.Sprintf("%s Run '%s' for usage", msg, help)
	}
	return fmt.Sprintf("%s. Run '%s' for usage", msg, help)
}

func (e *Error) Unwrap() error { return e.Err }

// SplitDir reads a leading -C DIR (or -C=DIR): the directory to run in ("" for
// the working directory) and the arguments after it.
func SplitDir(args []string) (dir string, rest []string, err error) {
	if len(args) >= 2 && args[0] == "-C" {
		dir, args = args[1], args[2:]
	} else if len(args) >= 1 && strings.HasPrefix(args[0], "-C=") {
		dir, args = strings.TrimPrefix(args[0], "-C="), args[1:]
	}
	if len(args) == 1 && (args[0] == "-C" || args[0] == "-C=") {
		return "", nil, &Error{Err: errors.New("-C needs a directory: warden -C DIR COMMAND")}
	}
	return dir, args, nil
}

// Parse reads a command line (after -C): help and version requests, the
// command (def when the line names none) and its options. Every error is an
// *Error.
func Parse(args []string, def string) (Invocation, error) {
	if inv, done, err := helpOrVersion(args); done {
		return inv, err
	}
	name, named := def, false
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args, named = args[0], args[1:], true
	}
	c, ok := lookup(name)
	if !ok {
		return Invocation{}, &Error{Err: unknownWord("command", name, commandNames())}
	}
	if wantsHelp(args) {
		return Invocation{Command: name, Help: true}, nil
	}
	inv := Invocation{Command: name}
	if c.parse != nil {
		fs := flag.NewFlagSet("warden "+name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var err error
		switch inv.Options, err = c.parse(fs, args); {
		case errors.Is(err, flag.ErrHelp): // -help=true and kin, which wantsHelp does not spot
			return Invocation{Command: name, Help: true}, nil
		case err != nil:
			if fe := flagError(c, named, args); fe != nil {
				return Invocation{}, fe
			}
			return Invocation{}, &Error{Command: name, Err: err}
		}
	}
	return inv, nil
}

// helpOrVersion answers `warden help [COMMAND]`, -h and --version; done is
// false for any other command line.
func helpOrVersion(args []string) (inv Invocation, done bool, err error) {
	if len(args) == 0 {
		return Invocation{}, false, nil
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if args[0] != "help" || len(args) == 1 {
			return Invocation{Help: true}, true, nil
		}
		name := args[1]
		if wantsHelp(args[1:2]) {
			name = "help"
		}
		if _, ok := lookup(name); !ok {
			return Invocation{}, true, &Error{Err: fmt.Errorf("help: %w", unknownWord("command", args[1], commandNames()))}
		}
		return Invocation{Command: name, Help: true}, true, nil
	case "--version", "-version":
		return Invocation{Command: "version"}, true, nil
	}
	return Invocation{}, false, nil
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
