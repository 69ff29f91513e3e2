package skills

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteList writes what `warden skills list` shows of found: the skills a
// review runs (Catalog: found's and the built-ins, with source and
// description) on w, then the skill files skipped and why; the warnings go
// to warn, one "warden: warning: FILE:LINE: message" a line.
func WriteList(w, warn io.Writer, found *Found) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tDESCRIPTION")
	for _, s := range Catalog(found.Skills) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Source, line(s.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeSkipped(w, warn, found.Skipped, found.Warnings)
	return nil
}

// WriteValidation writes what `warden skills validate` shows of found:
// every problem of a broken skill file on errw ("file:line: message"),
// the agents' skills that are not review skills on w as skipped, the
// warnings on errw, and the count of valid skills when none is broken. It
// returns how many skill files are broken.
func WriteValidation(w, errw io.Writer, found *Found) (broken int) {
	var notReview []Skipped
	for _, s := range found.Skipped {
		if s.Reason == SkipNotReview {
			notReview = append(notReview, s)
			continue
		}
		broken++
		for _, p := range s.Problems {
			fmt.Fprintln(errw, line(p.Error()))
		}
	}
	writeSkipped(w, errw, notReview, found.Warnings)
	if broken == 0 {
		fmt.Fprintf(w, "%d skill(s) valid\n", len(found.Skills))
	}
	return broken
}

// writeSkipped lists skipped files on w and the warnings on warn.
func writeSkipped(w, warn io.Writer, skipped []Skipped, warnings Problems) {
	if len(skipped) > 0 {
		fmt.Fprintf(w, "\nSkipped (%d), not run in reviews:\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintf(w, "  %s\n", line(s.String()))
		}
	}
	for _, p := range warnings {
		fmt.Fprintf(warn, "warden: warning: %s\n", line(p.Error()))
	}
}

// line is s on one line: runs of white space (line breaks included)
// become one space.
func line(s string) string { return strings.Join(strings.Fields(s), " ") }
