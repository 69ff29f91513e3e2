package main

import (
	"cmp"
	"context"

	"github.com/org/warden/cli"
	"github.com/org/warden/config"
	"github.com/org/warden/review"
	"github.com/org/warden/workdiff"
)

// change is the diff under review and a way to read its files at the
// reviewed revision.
type change struct {
	diff   review.Diff
	source func(path string) ([]byte, error)
	// ignored lists paths of the change that could not even be read (the
	// files API omits the patch of a very large file, and stops at 3,000
	// files), so the report says they were not reviewed.
	ignored []review.Ignored
	// trusted is what the repository's instructions are read from: the
	// tree of the revision the change is made against (workdiff's
	// Against), or nil and why not.
	trusted config.ReviewSettings
	close   func() // closes the instructions' tree, once planning read it
	stop    func() // ends git's processes and a spooled stdin, once the review and its report are done
}

// readChange gets the change the flags name (workdiff.Read): --diff, --base,
// or the uncommitted changes, and (unless instructions are off) opens the
// tree its instructions are read from. Every error is the user's input.
func readChange(ctx context.Context, e *env, o *cli.Review, instructions bool) (*change, error) {
	ch, err := workdiff.Read(ctx, workdiff.Options{Dir: e.dir, Root: e.root, Diff: o.Diff, Stdin: e.stdin, Base: o.Base, AllowEmpty: o.AllowEmpty})
	if err != nil {
		return nil, &usageError{err}
	}
	c := &change{diff: ch, source: ch.Source, close: func() {}, stop: func() { ch.Close() }}
	if !instructions {
		return c, nil
	}
	tree, from, why := ch.TrustedTree(ctx, cmp.Or(e.root, e.dir))
	c.trusted = config.ReviewSettings{InstructionsFrom: from, InstructionsNotRead: why}
	if tree != nil {
		c.trusted.Instructions, c.close = tree, func() { tree.Close() }
	}
	return c, nil
}
