package review

import (
	"fmt"
	"slices"

	"github.com/org/warden/hunks"
)

// Since narrows hp, the plan of a pull request's whole change, to what
// changed after commit since (the head an earlier complete review
// covered): interdiff is the diff from since to the current head. A chunk
// is kept when one of its new-side lines was added or changed since, or a
// line was removed next to one of them; the others were reviewed at since
// and are left out, their findings on the pull request staying as they
// are. A path with no chunk kept is listed ignored, reason "unchanged
// since <sha>". It returns the narrowed plan and how many chunks it left
// out.
func Since(hp *hunks.Plan, interdiff []*hunks.File, since string) (*hunks.Plan, int) {
	touched := map[string][]int{} // new-side lines, by path
	whole := map[string]bool{}    // renamed, copied or mode changed since: every chunk
	for _, f := range interdiff {
		path := f.NewPath
		if path == "" {
			continue // deleted since: no chunk of the whole change is on it
		}
		for _, fr := range f.Fragments {
			prev := fr.NewStart - 1 // the new-side line before the next one
			for _, l := range fr.Lines {
				switch l.Op {
				case hunks.Add:
					touched[path] = append(touched[path], l.NewLine)
					prev = l.NewLine
				case hunks.Delete:
					// Removed between prev and prev+1: both are touched.
					touched[path] = append(touched[path], prev, prev+1)
				default:
					prev = l.NewLine
				}
			}
		}
		if f.Status == hunks.Renamed || f.Status == hunks.Copied || f.ModeOnly {
			whole[path] = true
		}
	}
	short := since
	if len(short) > 7 {
		short = short[:7]
	}
	out := &hunks.Plan{Ignored: slices.Clone(hp.Ignored)}
	kept := map[string]bool{}
	var left []string
	lines := map[string]int{} // changed lines left out, by path
	dropped := 0
	for _, c := range hp.Chunks {
		keep := whole[c.Path] || slices.ContainsFunc(touched[c.Path], func(n int) bool { return n >= c.StartLine && n <= c.EndLine })
		if keep {
			out.Chunks = append(out.Chunks, c)
			kept[c.Path] = true
			continue
		}
		dropped++
		lines[c.Path] += c.Added + c.Deleted
		if !slices.Contains(left, c.Path) {
			left = append(left, c.Path)
		}
	}
	for _, p := range left {
		if !kept[p] {
			out.Ignored = append(out.Ignored, hunks.Ignored{Path: p, Reason: fmt.Sprintf("unchanged since %s", short), Lines: lines[p]})
		}
	}
	out.Conventions = hp.Conventions
	slices.SortStableFunc(out.Ignored, func(a, b hunks.Ignored) int {
		switch {
		case a.Path < b.Path:
			return -1
		case a.Path > b.Path:
			return 1
		}
		return 0
	})
	return out, dropped
}

// IncrementalFrom decides where a push's review starts: from lastHead, the
// head the last review covered, only when that review was complete and
// lastHead is still an ancestor of the new head; otherwise (no earlier
// review, an incomplete one, a force-push) from the whole change, with the
// reason.
func IncrementalFrom(lastHead string, lastComplete, ancestor bool) (since, why string) {
	switch {
	case lastHead == "":
		return "", "no earlier review of this pull request"
	case !lastComplete:
		return "", "the last review was not complete"
	case !ancestor:
		return "", fmt.Sprintf("the last reviewed head %.7s is not an ancestor of the new head (force-push)", lastHead)
	}
	return lastHead, ""
}
