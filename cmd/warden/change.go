package main

import (
	"context"

	"github.com/org/warden/cli"
	"github.com/org/warden/review"
	"github.com/org/warden/workdiff"
)

// change is the diff under review and a way to read its files at the
// reviewed revision.
type change struct {
	diff   review.Diff
	source func(path string) ([]byte, error)
	close  func() error // ends what reading the change holds open; nil: nothing
	// ignored lists paths of the change that could not even be read (the
	// files API omits the patch of a very large file, and stops at 3,000
	// files), so the report says they were not reviewed.
	ignored []review.Ignored
}

// readChange gets the change the flags name (workdiff.Read): --diff, --base,
// or the uncommitted changes. Every error is the user's input. The caller
// closes it when the review is done.
func readChange(ctx context.Context, e *env, o *cli.Review) (*change, error) {
	ch, err := workdiff.Read(ctx, workdiff.Options{Dir: e.dir, Root: e.root, Diff: o.Diff, Stdin: e.stdin, Base: o.Base, AllowEmpty: o.AllowEmpty})
	if err != nil {
		return nil, &usageError{err}
	}
	return &change{diff: ch, source: ch.Source, close: ch.Close}, nil
}
