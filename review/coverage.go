package review

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/org/warden/hunks"
)

// Coverage is what a review covered of the change, in changed files and
// changed lines (added plus deleted): the one decision of what was in
// scope, what was reviewed, and why the rest was not. Run and DryRun
// compute it once; Decide reads it, and every sink renders it without
// recomputing it.
//
// In scope is every changed file the configuration does not exclude by
// policy (Excluded: a path filter, a skill's paths, lockfile, vendored,
// binary, generated, deleted, ...). A line in scope is reviewed when every
// work item of its chunk was; a file when all its lines in scope were. A
// line a limit dropped (max_files, max_changed_lines, max_file_bytes,
// GitHub's file limits) or whose items failed or were skipped (a timeout,
// the budget, a cost or token cap) is in scope and not reviewed
// (NotReviewed), which keeps the review from being complete; unless
// LimitsOutOfScope, which puts what the planning limits dropped out of
// scope, in Excluded.
type Coverage struct {
	InScope  Amount `json:"in_scope"`
	Reviewed Amount `json:"reviewed"`
	// PartlyReviewed counts the files in scope of which some changed
	// lines were reviewed and some not (not in Reviewed.Files).
	PartlyReviewed int `json:"partly_reviewed_files"`
	// NotReviewed is what was in scope and not reviewed, by reason: a
	// limit (LimitMaxFiles, ...) or the Item.Reason of the chunk's first
	// work item that was not reviewed. Most lines first.
	NotReviewed []Gap `json:"not_reviewed"`
	// Excluded is what policy left out of scope, by kind
	// (ExclusionKind): never hidden, counted here. Most files first.
	Excluded []Gap `json:"excluded"`
	// Conventions are the files an untrusted author's change had
	// reviewed although a convention would have excluded them
	// (hunks.Options.Untrusted), by kind.
	Conventions []Gap `json:"conventions,omitempty"`
	// LimitsOutOfScope is set when the configuration puts what the
	// planning limits drop out of scope ([filters] limits_out_of_scope):
	// those files are then in Excluded under the limit's name.
	LimitsOutOfScope bool `json:"limits_out_of_scope,omitempty"`
}

// Amount is a number of changed files and of their changed lines.
type Amount struct {
	Files int `json:"files"`
	Lines int `json:"lines"`
}

// Gap is the changed files and lines left unreviewed (or excluded) for one
// reason. Files counts the files the reason touches, so a file two reasons
// share counts in both.
type Gap struct {
	Reason string `json:"reason"`
	Files  int    `json:"files"`
	Lines  int    `json:"lines"`
}

// The reasons of the planning limits in Coverage, named as the settings
// that set them, and GitHub's limits of the files API.
const (
	LimitMaxFiles        = "max_files"
	LimitMaxChangedLines = "max_changed_lines"
	LimitMaxFileBytes    = "max_file_bytes"
	LimitGitHubNoPatch   = "github_no_patch"   // the files API gave no patch (a file too large)
	LimitGitHubFiles     = "github_file_limit" // beyond the files API's 3,000 files
)

// limitOf maps a plan's ignored reason to the limit that dropped the path;
// "" when no limit did.
func limitOf(reason string) string {
	switch reason {
	case "limit:files":
		return LimitMaxFiles
	case "limit:lines", "limit:lines:partial":
		return LimitMaxChangedLines
	case "limit:bytes":
		return LimitMaxFileBytes
	case "github:no-patch":
		return LimitGitHubNoPatch
	case "github:file-limit":
		return LimitGitHubFiles
	}
	return ""
}

// ExclusionKind is the kind of policy exclusion an ignored reason names:
// "path_filter" for a [filters] ignore glob, "skill_filter" when no
// selected skill takes the path, "unchanged" for what an incremental review
// left to the earlier one; else the reason itself (lockfile, vendored,
// binary, generated, deleted, ...).
func ExclusionKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "ignored:"):
		return "path_filter"
	case reason == "skill-filter":
		return "skill_filter"
	case strings.HasPrefix(reason, "unchanged since "):
		return "unchanged"
	}
	return reason
}

// gapNouns word a reason for people: "over max_files", "timed out".
var gapNouns = map[string]string{
	LimitMaxFiles:        "over max_files",
	LimitMaxChangedLines: "over max_changed_lines",
	LimitMaxFileBytes:    "over max_file_bytes",
	LimitGitHubNoPatch:   "without a patch from GitHub",
	LimitGitHubFiles:     "beyond GitHub's 3,000 files",
	"timeout":            "timed out",
	"budget":             "out of time budget",
	"budget:cost":        "over the cost cap",
	"budget:tokens":      "over the token cap",
	"cancelled":          "cancelled",
}

// Phrase words a gap in files for every sink: "1,022 files over
// max_files", "3 files timed out", "1 file failed (auth)".
func (g Gap) Phrase() string {
	noun := Counted(g.Files, "file", "files")
	if g.Files == 0 {
		noun = Counted(g.Lines, "line", "lines")
	}
	if w, ok := gapNouns[g.Reason]; ok {
		return noun + " " + w
	}
	return noun + " failed (" + OneLine(g.Reason) + ")"
}

// KindPhrase words an excluded kind: "2 lockfile", "1 path filter", "3
// selected by no skill", "4 files over max_files" (a limit out of scope).
func (g Gap) KindPhrase() string {
	if isLimit(g.Reason) {
		return g.Phrase()
	}
	if w, ok := kindWords[g.Reason]; ok {
		return Count(g.Files) + " " + w
	}
	return Count(g.Files) + " " + OneLine(g.Reason)
}

// kindWords word the exclusion kinds that are not a hunks reason.
var kindWords = map[string]string{
	"path_filter":  "path filter",
	"skill_filter": "selected by no skill",
	"unchanged":    "unchanged since the last complete review",
}

// Known reports whether the report computed its coverage (a report read
// from an older file has none).
func (c *Coverage) Known() bool {
	return c.InScope.Files > 0 || len(c.NotReviewed) > 0 || len(c.Excluded) > 0 || len(c.Conventions) > 0
}

// Complete reports whether everything in scope was reviewed.
func (c *Coverage) Complete() bool { return len(c.NotReviewed) == 0 }

// Limited reports whether a planning limit left lines in scope
// unreviewed.
func (c *Coverage) Limited() bool {
	return slices.ContainsFunc(c.NotReviewed, func(g Gap) bool { return isLimit(g.Reason) })
}

func isLimit(reason string) bool {
	switch reason {
	case LimitMaxFiles, LimitMaxChangedLines, LimitMaxFileBytes, LimitGitHubNoPatch, LimitGitHubFiles:
		return true
	}
	return false
}

// LimitsLeftOut reports whether limits left files out of scope
// (LimitsOutOfScope): the report then says that the setting did.
func (c *Coverage) LimitsLeftOut() bool {
	return c.LimitsOutOfScope && slices.ContainsFunc(c.Excluded, func(g Gap) bool { return isLimit(g.Reason) })
}

// ExcludedFiles is how many files policy left out of scope.
func (c *Coverage) ExcludedFiles() int {
	n := 0
	for _, g := range c.Excluded {
		n += g.Files
	}
	return n
}

// Breakdown is "1,022 files over max_files, 188 files over
// max_changed_lines": the gaps, most lines first, at most four and how
// many more.
func (c *Coverage) Breakdown() string { return phrases(c.NotReviewed, Gap.Phrase) }

// ExcludedBreakdown is "2 lockfile, 1 generated": the excluded kinds.
func (c *Coverage) ExcludedBreakdown() string { return phrases(c.Excluded, Gap.KindPhrase) }

func phrases(gs []Gap, f func(Gap) string) string {
	const maxShown = 4
	var parts []string
	for i, g := range gs {
		if i == maxShown {
			parts = append(parts, Count(len(gs)-maxShown)+" more")
			break
		}
		parts = append(parts, f(g))
	}
	return strings.Join(parts, ", ")
}

// Amounts is "300 of 1,510 changed files reviewed (20,000 of 300,000
// lines)", "1 partly" added when files were; "12 changed files reviewed
// (340 lines)" when everything in scope was.
func (c *Coverage) Amounts() string {
	if c.InScope.Files == 0 {
		return "no changed file in scope"
	}
	if c.Complete() {
		return fmt.Sprintf("%s reviewed (%s)", Counted(c.Reviewed.Files, "changed file", "changed files"),
			Counted(c.Reviewed.Lines, "line", "lines"))
	}
	s := fmt.Sprintf("%s of %s reviewed (%s of %s)", Count(c.Reviewed.Files),
		Counted(c.InScope.Files, "changed file", "changed files"), Count(c.Reviewed.Lines), Counted(c.InScope.Lines, "line", "lines"))
	if c.PartlyReviewed > 0 {
		s += fmt.Sprintf(", %s partly", Count(c.PartlyReviewed))
	}
	return s
}

// LimitBreakdown is the gaps of the planning limits alone: "1,022 files
// over max_files, 188 files over max_changed_lines"; "" when no limit left
// code in scope unreviewed.
func (c *Coverage) LimitBreakdown() string {
	var gs []Gap
	for _, g := range c.NotReviewed {
		if isLimit(g.Reason) {
			gs = append(gs, g)
		}
	}
	return phrases(gs, Gap.Phrase)
}

// Summary is the coverage in one line for every sink: "300 of 1,510
// changed files reviewed (20,000 of 300,000 lines); not reviewed: 1,022
// files over max_files, 188 files over max_changed_lines". When
// everything in scope was reviewed: "12 changed files reviewed (340
// lines)".
func (c *Coverage) Summary() string {
	if c.Complete() {
		return c.Amounts()
	}
	return c.Amounts() + "; not reviewed: " + c.Breakdown()
}

// coverageOf computes a review's coverage from its plan and its items'
// statuses (items[i] is p.Items[i]'s). Planned items (a dry run) are in
// scope and neither reviewed nor a gap.
func coverageOf(p *Plan, items []Item, limitsOut bool) Coverage {
	files := scopeFiles{byPath: map[string]*scopeFile{}}
	files.addChunks(p, items)
	cov := Coverage{LimitsOutOfScope: limitsOut}
	excluded := gapSet{}
	skillFiltered := map[string]bool{}
	for _, ig := range p.Ignored {
		if ig.Reason == "skill-filter" {
			skillFiltered[ig.Path] = true
		}
	}
	for _, ig := range p.Ignored {
		limit := limitOf(ig.Reason)
		switch {
		case limit == "":
			excluded.add(ExclusionKind(ig.Reason), 1, ig.Lines)
		case skillFiltered[ig.Path]:
			// What a limit cut of a file no skill takes: out of scope too.
			excluded.add(ExclusionKind("skill-filter"), 0, ig.Lines)
		case limitsOut:
			excluded.add(limit, 1, ig.Lines)
		default:
			f := files.of(ig.Path)
			f.inScope += ig.Lines
			f.gaps[limit] += ig.Lines // a file whose lines are unknown (0) is a gap too
		}
	}
	conventions := gapSet{}
	for _, c := range p.Conventions {
		conventions.add(c.Reason, 1, c.Lines)
	}
	cov.NotReviewed = files.total(&cov).sorted(false)
	cov.Excluded = excluded.sorted(true)
	if len(conventions) > 0 {
		cov.Conventions = conventions.sorted(true)
	}
	return cov
}

// scopeFile is one file in scope: its changed lines, those reviewed, and
// the others by reason.
type scopeFile struct {
	inScope, reviewed int
	gaps              map[string]int // reason → lines
}

// scopeFiles are the files in scope, in the order they were met.
type scopeFiles struct {
	byPath map[string]*scopeFile
	order  []string
}

func (fs *scopeFiles) of(path string) *scopeFile {
	f := fs.byPath[path]
	if f == nil {
		f = &scopeFile{gaps: map[string]int{}}
		fs.byPath[path] = f
		fs.order = append(fs.order, path)
	}
	return f
}

// addChunks counts the planned chunks' lines: a chunk is reviewed when
// every item on it was; else its lines go to the reason of its first item
// that was not.
func (fs *scopeFiles) addChunks(p *Plan, items []Item) {
	type chunk struct {
		c       *hunks.Chunk
		planned bool
		reason  string
	}
	var chunks []*chunk
	at := map[*hunks.Chunk]*chunk{}
	for i, wi := range p.Items {
		ch := at[wi.Chunk]
		if ch == nil {
			ch = &chunk{c: wi.Chunk}
			at[wi.Chunk] = ch
			chunks = append(chunks, ch)
		}
		switch it := items[i]; it.Status {
		case StatusReviewed:
		case StatusPlanned:
			ch.planned = true
		default:
			if ch.reason == "" {
				ch.reason = cmp.Or(it.Reason, string(it.Status), "unknown")
			}
		}
	}
	for _, ch := range chunks {
		f, n := fs.of(ch.c.Path), ch.c.Added+ch.c.Deleted
		f.inScope += n
		switch {
		case ch.planned:
		case ch.reason != "":
			f.gaps[ch.reason] += n
		default:
			f.reviewed += n
		}
	}
}

// total adds the files up into cov's amounts and returns their gaps.
func (fs *scopeFiles) total(cov *Coverage) gapSet {
	gaps := gapSet{}
	for _, path := range fs.order {
		f := fs.byPath[path]
		cov.InScope.Files++
		cov.InScope.Lines += f.inScope
		cov.Reviewed.Lines += f.reviewed
		switch {
		case len(f.gaps) == 0 && f.reviewed == f.inScope:
			cov.Reviewed.Files++
		case f.reviewed > 0:
			cov.PartlyReviewed++
		}
		for reason, n := range f.gaps {
			gaps.add(reason, 1, n)
		}
	}
	return gaps
}

// gapSet adds up files and lines by reason.
type gapSet map[string]*Gap

func (s gapSet) add(reason string, files, lines int) {
	g := s[reason]
	if g == nil {
		g = &Gap{Reason: reason}
		s[reason] = g
	}
	g.Files += files
	g.Lines += lines
}

// sorted is the gaps most lines first (most files first when byFiles),
// then by reason.
func (s gapSet) sorted(byFiles bool) []Gap {
	out := make([]Gap, 0, len(s))
	for _, g := range s {
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b Gap) int {
		if byFiles {
			return cmp.Or(cmp.Compare(b.Files, a.Files), cmp.Compare(b.Lines, a.Lines), strings.Compare(a.Reason, b.Reason))
		}
		return cmp.Or(cmp.Compare(b.Lines, a.Lines), cmp.Compare(b.Files, a.Files), strings.Compare(a.Reason, b.Reason))
	})
	return out
}
