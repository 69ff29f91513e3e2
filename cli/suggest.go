package cli

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// suggest is the candidates a mistyped word most likely meant: those within
// two edits of it (fewer than its length, so a short word needs a close
// match) and those it begins, nearest first, in the candidates' order on a
// tie. The word itself counts (distance 0).
func suggest(word string, candidates []string) []string {
	type guess struct {
		name string
		d, i int
	}
	var gs []guess
	for i, c := range candidates {
		d := levenshtein.ComputeDistance(word, c)
		if (d <= 2 && d < len([]rune(word))) || (len(word) >= 2 && strings.HasPrefix(c, word)) {
			gs = append(gs, guess{c, d, i})
		}
	}
	slices.SortFunc(gs, func(a, b guess) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.i, b.i)) })
	var out []string
	for _, g := range gs {
		out = append(out, g.name)
	}
	return out
}

// didYouMean is "; did you mean X?" (or "X or Y"), each guess formatted by
// quote; "" without a guess.
func didYouMean(guesses []string, quote func(string) string) string {
	if len(guesses) == 0 {
		return ""
	}
	if len(guesses) > 2 {
		guesses = guesses[:2]
	}
	qs := make([]string, len(guesses))
	for i, g := range guesses {
		qs[i] = quote(g)
	}
	return "; did you mean " + strings.Join(qs, " or ") + "?"
}

// unknownWord is an unknown command or subcommand, with the nearest known
// ones.
func unknownWord(kind, word string, known []string) error {
	return fmt.Errorf("unknown %s %q%s", kind, word, didYouMean(suggest(word, known), func(s string) string { return fmt.Sprintf("%q", s) }))
}

// globalFlags are warden's own flags, before any command.
var globalFlags = []string{"version", "help", "C"}

// unknownFlag finds the first flag in args that fs does not define, as the
// flag package reads a command line (flags end at the first argument that
// is not one, or at "--"; a flag that is not boolean takes the next
// argument unless it has "=value"). It returns the flag as typed, without
// its value, and its name.
func unknownFlag(fs *flag.FlagSet, args []string) (typed, name string, ok bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return "", "", false
		}
		typed, _, hasValue := strings.Cut(a, "=")
		name = strings.TrimPrefix(strings.TrimPrefix(typed, "-"), "-")
		f := fs.Lookup(name)
		if f == nil {
			return typed, name, true
		}
		if b, isBool := f.Value.(interface{ IsBoolFlag() bool }); hasValue || (isBool && b.IsBoolFlag()) {
			continue
		}
		i++ // the flag's value
	}
	return "", "", false
}

// flagError is the usage error of an unknown flag in args, with the
// command's nearest flags, or warden's own when only those are near and
// the command was not named (`warden --verison`); nil when every flag is
// known (the parse failed for another reason).
func flagError(c Command, named bool, args []string) *Error {
	fs := c.flagSet()
	typed, name, ok := unknownFlag(fs, args)
	if !ok {
		return nil
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	dashes := func(n string) string {
		if len(n) == 1 {
			return "-" + n
		}
		return "--" + n
	}
	guesses := suggest(name, names)
	command := c.Name
	if len(guesses) == 0 && !named {
		if guesses = suggest(name, globalFlags); len(guesses) > 0 {
			command = ""
		}
	}
	return &Error{Command: command, Err: fmt.Errorf("unknown flag %s%s", typed, didYouMean(guesses, dashes))}
}

// flagSet is a flag set with the command's flags defined (and nothing
// parsed).
func (c Command) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("warden "+c.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c.parse != nil {
		_, _ = c.parse(fs, []string{"-h"}) // flag.ErrHelp, after the flags are defined
	}
	return fs
}
