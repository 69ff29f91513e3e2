package hunks

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/org/warden/secrets"
)

// The defaults of Options, used for a zero (or negative) value.
const (
	DefaultMaxFiles        = 300
	DefaultMaxChangedLines = 20_000
	DefaultMaxFileBytes    = 1 << 20
	DefaultContextLines    = 20
	DefaultCoalesceGap     = 30
	DefaultMaxChunkChars   = 8_000
)

// Options tune Prepare. A zero (or negative) number means its default.
type Options struct {
	// Ignore holds user globs (doublestar syntax) matched against each
	// file's path; a pattern starting with "!" re-includes. The last
	// matching pattern wins, and a re-include also overrides the built-in
	// filters by name and by generated-code marker (e.g. "!vendor/**").
	Ignore []string
	// MaxFiles is the most files reviewed (default 300).
	MaxFiles int
	// MaxChangedLines bounds added plus deleted lines over all reviewed
	// files (default 20,000).
	MaxChangedLines int
	// MaxFileBytes bounds one file's size at the reviewed revision when
	// Source has it, else the size of its added text (default 1 MiB).
	MaxFileBytes int64
	// ContextLines is the most context lines before and after a chunk
	// (default 20). In the languages the block rule knows, the context is
	// then trimmed to the chunk's enclosing block (see the package doc).
	ContextLines int
	// FullContext keeps ContextLines lines each side, untrimmed.
	FullContext bool
	// CoalesceGap: hunks fewer than this many lines apart coalesce into one
	// chunk (default 30) while the chunk stays within MaxChunkChars.
	CoalesceGap int
	// MaxChunkChars bounds a chunk's text, counted in bytes as the sum of
	// len(Text)+1 over its lines (default 8,000). A larger hunk is split at
	// line boundaries; only a single longer line makes a larger chunk.
	MaxChunkChars int
	// Untrusted says the change's author is not trusted: the exclusions
	// the author controls by convention (vendored, lockfile, minified and
	// generated, by name or by a marker in the file) are not applied, so
	// such files are reviewed like any other (within the limits); each is
	// listed in Plan.Conventions with the reason it would have had. The
	// Ignore globs (the repository's configuration) still apply.
	Untrusted bool
	// Source returns a file's content at the reviewed revision (new side).
	// nil, or an error, means "not available": context then comes from the
	// diff alone. It is used for context lines, generated-code markers and
	// byte limits, and called at most once per file that passes the filters
	// by name.
	Source func(path string) ([]byte, error)
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.MaxFiles, DefaultMaxFiles)
	def(&o.MaxChangedLines, DefaultMaxChangedLines)
	def(&o.ContextLines, DefaultContextLines)
	def(&o.CoalesceGap, DefaultCoalesceGap)
	def(&o.MaxChunkChars, DefaultMaxChunkChars)
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	return o
}

// Plan is what to review, in order, and what not to review, with reasons.
type Plan struct {
	Chunks  []Chunk   // sorted: Priority descending, then Path, then StartLine (deterministic)
	Ignored []Ignored // every dropped path with its reason, sorted by path
	// Conventions are the files kept for review although a convention
	// would have excluded them (Options.Untrusted), with that reason and
	// their changed lines, sorted by path.
	Conventions []Ignored
}

// candidate is a file that passed the filters.
type candidate struct {
	file    *File
	path    string
	class   Class
	changed int // added + deleted lines
	score   int
	source  []string // the new-side lines from Options.Source, nil when not available
	size    int64
	lines   []ContextLine // the new-side lines the diff shows, by line; see known
}

// Prepare filters files, applies the limits, and cuts what is left into
// prioritized chunks. Every file that is not reviewed is listed in
// Plan.Ignored with one of the reasons documented in the package doc.
// Prepare does not modify files. It errors only for a bad glob in
// opts.Ignore; the error wraps ErrBadGlob and names the pattern.
func Prepare(files []*File, opts Options) (*Plan, error) {
	ignore, err := compile(opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("ignore: %w", err)
	}
	opts = opts.withDefaults()
	plan := &Plan{Chunks: []Chunk{}, Ignored: []Ignored{}}
	drop := func(p, reason string, lines int) {
		plan.Ignored = append(plan.Ignored, Ignored{Path: p, Reason: reason, Lines: lines})
	}

	var cands []*candidate
	for _, f := range files {
		c, reason := filter(f, ignore, opts.Source, opts.Untrusted)
		switch {
		case reason != "" && c != nil && opts.Untrusted:
			// A convention the author controls: reviewed anyway.
			plan.Conventions = append(plan.Conventions, Ignored{Path: c.path, Reason: reason, Lines: c.changed})
		case reason != "":
			lines, _ := changedLines(f)
			drop(f.Path(), reason, lines)
			continue
		}
		cands = append(cands, c)
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.path, b.path))
	})
	kept := cands[:0]
	for _, c := range cands {
		switch {
		case c.size > opts.MaxFileBytes:
			drop(c.path, "limit:bytes", c.changed)
		case len(kept) >= opts.MaxFiles:
			drop(c.path, "limit:files", c.changed)
		default:
			kept = append(kept, c)
		}
	}
	share := lineShare(kept, opts.MaxChangedLines)
	left, reviewed := opts.MaxChangedLines, kept[:0]
	for _, c := range kept {
		take := min(c.changed, share, left)
		switch {
		case take <= 0:
			drop(c.path, "limit:lines", c.changed)
			continue
		case take < c.changed:
			drop(c.path, "limit:lines:partial", c.changed-take)
			c.truncate(take)
		}
		left -= take
		reviewed = append(reviewed, c)
	}
	kept = reviewed
	n := 0
	for _, c := range kept {
		n += len(c.file.Fragments)
	}
	plan.Chunks = make([]Chunk, 0, n)
	for _, c := range kept {
		plan.Chunks = c.chunks(plan.Chunks, opts)
	}
	slices.SortFunc(plan.Chunks, func(a, b Chunk) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), strings.Compare(a.Path, b.Path),
			cmp.Compare(a.StartLine, b.StartLine), cmp.Compare(a.EndLine, b.EndLine))
	})
	byPath := func(a, b Ignored) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Reason, b.Reason))
	}
	slices.SortStableFunc(plan.Ignored, byPath)
	slices.SortStableFunc(plan.Conventions, byPath)
	return plan, nil
}

// filter returns the candidate for f, or the reason it is not reviewed.
// For a reason by convention (vendored, lockfile, minified, generated by
// name or marker) it returns the candidate too, which an untrusted
// author's change reviews anyway (Options.Untrusted): then its Source is
// read whatever its name says.
func filter(f *File, ignore rules, source func(string) ([]byte, error), untrusted bool) (*candidate, string) {
	p := f.Path()
	if kind := secrets.Withheld(p); kind != "" {
		return nil, "secret:" + kind
	}
	r, matched := ignore.lastMatch(p)
	if matched && !r.negate {
		return nil, "ignored:" + r.pattern
	}
	reincluded := matched && r.negate
	changed, added := changedLines(f)
	if reason := fileReason(f, changed); reason != "" {
		return nil, reason
	}
	c := &candidate{file: f, path: p, class: classify(p), changed: changed, size: added}
	c.score = score(p, c.class, changed)
	byName := ""
	if !reincluded {
		byName = builtinReason(p)
	}
	if byName != "" && !untrusted {
		return c, byName
	}
	if source != nil {
		if b, err := source(p); err == nil && b != nil {
			c.source, c.size = splitLines(string(b)), int64(len(b))
		}
	}
	if byName == "" && !reincluded && isGenerated(c.head()) {
		return c, "generated"
	}
	return c, byName
}

// changedLines counts f's added and deleted lines, and the bytes added.
func changedLines(f *File) (changed int, added int64) {
	for _, fr := range f.Fragments {
		for _, l := range fr.Lines {
			switch l.Op {
			case Add:
				changed++
				added += int64(len(l.Text)) + 1
			case Delete:
				changed++
			}
		}
	}
	return changed, added
}

// fileReason is why a file with changed lines is not reviewed, whatever
// its path: deleted, binary, a submodule, or nothing changed but its name
// or mode. "" when it is reviewable.
func fileReason(f *File, changed int) string {
	switch {
	case f.Status == Deleted || f.NewPath == "":
		return "deleted"
	case f.Binary:
		return "binary"
	case f.OldMode.IsDir() || f.NewMode.IsDir():
		return "submodule"
	case changed > 0:
		return ""
	case f.Status == Renamed:
		return "renamed-unchanged"
	case f.Status == Copied:
		return "copied-unchanged"
	case f.ModeOnly:
		return "mode-only"
	}
	return "empty"
}

// head returns the file's first lines: from Source, or else from a fragment
// that starts at line 1.
func (c *candidate) head() []string {
	if c.source != nil {
		return c.source[:min(len(c.source), markerLines)]
	}
	var head []string
	for _, fr := range c.file.Fragments {
		if fr.NewStart > 1 {
			continue
		}
		for _, l := range fr.Lines {
			if l.Op != Delete && l.NewLine <= markerLines {
				head = append(head, l.Text)
			}
		}
	}
	return head
}

// splitLines splits text into lines without their "\n" or "\r\n".
func splitLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\n")
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// lineSize is what a line counts against MaxChunkChars.
func lineSize(l Line) int { return len(l.Text) + 1 }

// piece is a run of lines of one fragment, on its way into a chunk.
type piece struct {
	lines []Line
	size  int
	// anchor is the new-side line after which the first line sits: the
	// line before it, or for a deletion the last new-side line before it.
	anchor int
}

// chunks appends the candidate's chunks to out: it splits what is too large,
// coalesces what is close, then adds context and counts.
func (c *candidate) chunks(out []Chunk, opts Options) []Chunk {
	first := len(out)
	var cur *piece
	var anchors []int        // the anchor of each chunk
	lastNew, lastOld := 0, 0 // the last new- and old-side lines of cur
	flush := func() {
		if cur != nil {
			out = append(out, c.chunk(cur))
			anchors = append(anchors, cur.anchor)
			cur = nil
		}
	}
	for _, fr := range c.file.Fragments {
		if len(fr.Lines) == 0 {
			continue
		}
		next := fr.NewStart
		if fr.NewLines == 0 {
			next++ // a deletion-only fragment sits after line NewStart
		}
		gap := next - lastNew - 1
		var fill []Line
		if cur != nil && gap > 0 && gap < opts.CoalesceGap && next-1 <= len(c.source) {
			for n := lastNew + 1; n < next; n++ {
				fill = append(fill, Line{Op: Context, Text: c.source[n-1], OldLine: lastOld + n - lastNew, NewLine: n})
			}
		}
		if cur != nil && gap >= opts.CoalesceGap {
			flush()
		}
		for _, p := range split(fr, opts.MaxChunkChars) {
			size := p.size
			for _, l := range fill {
				size += lineSize(l)
			}
			if cur != nil && cur.size+size <= opts.MaxChunkChars {
				cur.lines = append(append(cur.lines, fill...), p.lines...)
				cur.size += size
			} else {
				flush()
				cur = &piece{lines: slices.Clip(p.lines), size: p.size, anchor: p.anchor}
			}
			fill = nil
		}
		lastNew, lastOld = fr.NewStart+fr.NewLines-1, fr.OldStart+fr.OldLines-1
		if fr.NewLines == 0 {
			lastNew = fr.NewStart
		}
		if fr.OldLines == 0 {
			lastOld = fr.OldStart
		}
	}
	flush()
	if c.source == nil && len(out)-first == 1 {
		return out // the diff shows no line outside the only chunk
	}
	for i := range out[first:] {
		ch := &out[first+i]
		before, after := ch.StartLine-1, ch.EndLine+1
		if ch.Added == 0 && ch.Deleted == len(ch.Lines) { // deletions only: they sit after the anchor
			before, after = anchors[i], anchors[i]+1
		}
		ch.Before, ch.After = c.context(before, -1, opts.ContextLines), c.context(after, +1, opts.ContextLines)
		if !opts.FullContext {
			trimToBlock(ch)
		}
	}
	return out
}

// split cuts a fragment into pieces of at most limit bytes of text (a single
// longer line makes its own piece).
func split(fr Fragment, limit int) []piece {
	prev := fr.NewStart - 1 // the last new-side line before the current line
	if fr.NewLines == 0 {
		prev = fr.NewStart
	}
	var out []piece
	start, size := 0, 0
	anchor := prev
	for i, l := range fr.Lines {
		if i > start && size+lineSize(l) > limit {
			out = append(out, piece{lines: fr.Lines[start:i], size: size, anchor: anchor})
			start, size, anchor = i, 0, prev
		}
		size += lineSize(l)
		if l.Op != Delete {
			prev = l.NewLine
		}
	}
	return append(out, piece{lines: fr.Lines[start:], size: size, anchor: anchor})
}

// chunk turns a piece into a chunk with its range, counts and priority.
func (c *candidate) chunk(p *piece) Chunk {
	ch := Chunk{Path: c.path, Language: language(c.path), Class: c.class, Lines: p.lines}
	if c.file.Status == Renamed || c.file.Status == Copied {
		ch.OldPath = c.file.OldPath
	}
	for _, l := range p.lines {
		switch l.Op {
		case Add:
			ch.Added++
		case Delete:
			ch.Deleted++
			continue
		}
		if ch.StartLine == 0 || l.NewLine < ch.StartLine {
			ch.StartLine = l.NewLine
		}
		ch.EndLine = max(ch.EndLine, l.NewLine)
	}
	if ch.StartLine == 0 { // deletions only: they sit after line anchor
		ch.StartLine = max(1, p.anchor)
		ch.EndLine = ch.StartLine
	}
	ch.Priority = score(c.path, c.class, ch.Added+ch.Deleted)
	ch.Why = why(c.path, c.class, ch.Added+ch.Deleted)
	return ch
}

// context returns up to n new-side lines from line "from" on, walking in
// direction dir (-1 or +1), in file order. The lines come from Source when
// it is available, else from the diff's own context and added lines, as long
// as they are consecutive.
func (c *candidate) context(from, dir, n int) []ContextLine {
	var out []ContextLine
	if c.source != nil {
		for ln := from; len(out) < n && ln >= 1 && ln <= len(c.source); ln += dir {
			out = append(out, ContextLine{Line: ln, Text: c.source[ln-1]})
		}
	} else {
		known := c.known()
		i, found := slices.BinarySearchFunc(known, from, func(cl ContextLine, ln int) int { return cmp.Compare(cl.Line, ln) })
		for ln := from; found && len(out) < n && i >= 0 && i < len(known) && known[i].Line == ln; ln += dir {
			out = append(out, known[i])
			i += dir
		}
	}
	if dir < 0 {
		slices.Reverse(out)
	}
	return out
}

// known returns the new-side lines the diff shows (context and added), sorted
// by line number, one per line.
func (c *candidate) known() []ContextLine {
	if c.lines == nil {
		c.lines = []ContextLine{}
		for _, fr := range c.file.Fragments {
			for _, l := range fr.Lines {
				if l.Op != Delete {
					c.lines = append(c.lines, ContextLine{Line: l.NewLine, Text: l.Text})
				}
			}
		}
		slices.SortStableFunc(c.lines, func(a, b ContextLine) int { return cmp.Compare(a.Line, b.Line) })
		c.lines = slices.CompactFunc(c.lines, func(a, b ContextLine) bool { return a.Line == b.Line })
	}
	return c.lines
}

// minLineShare is the least share of MaxChangedLines a file is given when
// the change does not fit: about one hunk of the size the built-in skills
// are made for.
const minLineShare = 40

// lineShare returns how many changed lines each of cands (in rank order) may
// take of budget: all of them when everything fits; else the largest share
// s such that the files, each taking at most s, fit (the max-min fair
// share: small files whole, large ones cut to s); but at least
// minLineShare (or a tenth of a smaller budget), the files of lowest rank
// then going without.
func lineShare(cands []*candidate, budget int) int {
	total := 0
	for _, c := range cands {
		total += c.changed
	}
	if total <= budget {
		return budget
	}
	sizes := make([]int, len(cands))
	for i, c := range cands {
		sizes[i] = c.changed
	}
	slices.Sort(sizes)
	left := budget
	for i, n := range sizes {
		if rest := len(sizes) - i; n*rest > left {
			return max(left/rest, min(minLineShare, budget/10), 1)
		}
		left -= n
	}
	return budget // not reached: the total does not fit
}

// truncate keeps the candidate's first n changed lines (in file order): the
// fragment where the n-th one falls ends after it (and the context lines
// that directly follow it), later fragments go. It copies what it cuts, so
// the parsed File stays as it was.
func (c *candidate) truncate(n int) {
	c.changed = min(c.changed, n)
	f := *c.file
	f.Fragments = nil
	for _, fr := range c.file.Fragments {
		if n <= 0 {
			break
		}
		end := len(fr.Lines)
		for i, l := range fr.Lines {
			if l.Op == Context {
				continue
			}
			if n == 0 {
				end = i
				break
			}
			n--
		}
		if end < len(fr.Lines) {
			oldN, newN := fr.OldLines, fr.NewLines
			fr.Lines = fr.Lines[:end:end]
			fr.OldLines, fr.NewLines = 0, 0
			for _, l := range fr.Lines {
				if l.Op != Add {
					fr.OldLines++
				}
				if l.Op != Delete {
					fr.NewLines++
				}
			}
			// git writes an empty side's start as the line before it.
			if fr.OldLines == 0 && oldN > 0 {
				fr.OldStart--
			}
			if fr.NewLines == 0 && newN > 0 {
				fr.NewStart--
			}
		}
		f.Fragments = append(f.Fragments, fr)
	}
	c.file = &f
	c.lines = nil
}
