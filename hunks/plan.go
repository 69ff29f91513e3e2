package hunks

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"io"
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
	// by name, while that file is planned. An error with a FileSize() int64
	// method (a file too large to read) still gives the file's size.
	Source func(path string) ([]byte, error)
	// VerifySource uses what Source returns only when its lines agree with
	// the file's new side in the diff (VerifiedSource's rule): a working
	// tree that moved on, or a diff made elsewhere, gives no context
	// rather than wrong context.
	VerifySource bool
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
	// Files are the files the chunks come from, in rank order, as planned:
	// a file cut to its share of MaxChangedLines holds only the lines kept.
	Files []*File
	// Withheld are the files dropped as secrets by their names (reason
	// secret:<kind>), in the diff's order, whole: review scans them itself,
	// without a model.
	Withheld []*File
}

// Files is a parsed change; Plan plans it (Prepare). A change that is read
// as it streams is planned by PrepareDiff instead.
type Files []*File

// Plan is Prepare(fs, opts).
func (fs Files) Plan(opts Options) (*Plan, error) { return Prepare(fs, opts) }

// candidate is a file that passed the filters.
type candidate struct {
	file    *File
	path    string
	class   Class
	changed int // added + deleted lines
	held    int // of which the planner holds (see cut)
	score   int
	seq     int      // the order it came in, for ties of rank
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
	p, err := newPlanner(opts)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		p.add(f, tail{})
	}
	return p.finish(), nil
}

// PrepareDiff is ParseLimit and Prepare in one pass: it plans the diff r
// as it streams, file by file, and holds only what the limits may still
// review, so planning a diff far larger than what a review covers takes
// the memory of what it covers, not of the diff (see the package doc).
// The plan is Prepare's for the same files; the errors are ParseLimit's
// and Prepare's (a bad glob is reported before anything is read).
func PrepareDiff(r io.Reader, limit int64, opts Options) (*Plan, error) {
	p, err := newPlanner(opts)
	if err != nil {
		return nil, err
	}
	if err := parseEach(r, limit, p.opts.MaxChangedLines, p.add); err != nil {
		return nil, err
	}
	return p.finish(), nil
}

// planner makes a plan from files given one at a time. add drops at once
// what cannot be reviewed whatever comes next: a file the filters leave
// out, one over MaxFileBytes, and one outside the MaxFiles best so far
// (limit:files, when a better one arrives). Of a file it keeps it holds
// only the changed lines the file could take in any plan (cut): at most
// MaxChangedLines, and fewer once better-ranked files are known (recut).
// finish spreads the line budget over the files kept and cuts them into
// chunks.
type planner struct {
	opts    Options
	ignore  rules
	plan    *Plan
	best    worstFirst // the MaxFiles best candidates so far
	seq     int
	held    int // changed lines the candidates in best hold
	recutAt int // held above which recut runs
}

func newPlanner(opts Options) (*planner, error) {
	ignore, err := compile(opts.Ignore)
	if err != nil {
		return nil, fmt.Errorf("ignore: %w", err)
	}
	opts = opts.withDefaults()
	return &planner{opts: opts, ignore: ignore, plan: &Plan{Chunks: []Chunk{}, Ignored: []Ignored{}}, recutAt: 2 * opts.MaxChangedLines}, nil
}

// drop lists path as not reviewed for reason, with the changed lines it
// leaves unreviewed.
func (p *planner) drop(path, reason string, lines int) {
	p.plan.Ignored = append(p.plan.Ignored, Ignored{Path: path, Reason: reason, Lines: lines})
}

// dropFile drops a file the filters leave out (cut: what parseEach cut off
// it already), keeping it whole in Plan.Withheld when it is a secret by
// its name.
func (p *planner) dropFile(f *File, cut tail, reason string) {
	if strings.HasPrefix(reason, "secret:") {
		p.plan.Withheld = append(p.plan.Withheld, f)
	}
	lines, _ := changedLines(f)
	p.drop(f.Path(), reason, lines+cut.changed)
}

// add plans one file, of which cut was cut off already (parseEach).
func (p *planner) add(f *File, cut tail) {
	c, reason := filter(f, cut, p.ignore, p.opts)
	switch {
	case reason != "" && c != nil && p.opts.Untrusted:
		// A convention the author controls: reviewed anyway.
		p.plan.Conventions = append(p.plan.Conventions, Ignored{Path: c.path, Reason: reason, Lines: c.changed})
	case reason != "":
		p.dropFile(f, cut, reason)
		return
	}
	if c.size > p.opts.MaxFileBytes {
		p.drop(c.path, "limit:bytes", c.changed)
		return
	}
	c.seq = p.seq
	p.seq++
	c.cut(p.opts.MaxChangedLines)
	heap.Push(&p.best, c)
	p.held += c.held
	if p.best.Len() > p.opts.MaxFiles {
		worst := heap.Pop(&p.best).(*candidate)
		p.held -= worst.held
		p.drop(worst.path, "limit:files", worst.changed)
	}
	if p.held > p.recutAt {
		p.recut()
	}
}

// recut cuts every file kept so far to the most changed lines it can take
// in the plan finish makes, whatever files come next. For a file i, the
// files ranked above it now (A) stay above it in any plan that keeps it,
// and each of them takes at least min(its changed lines, what i takes):
// finish gives the budget out in rank order, each file min(changed, share,
// what is left). So i takes at most the largest t with t + Σ_A min(c_j, t)
// <= MaxChangedLines (lineBound), which only shrinks as files arrive. It
// runs when the lines held have doubled since the last time, so its cost
// is spread over the files added.
func (p *planner) recut() {
	byRank := slices.Clone(p.best)
	slices.SortFunc(byRank, func(a, b *candidate) int { return -rank(a, b) })
	above := lineBound{budget: p.opts.MaxChangedLines, t: p.opts.MaxChangedLines}
	p.held = 0
	for _, c := range byRank {
		c.cut(above.t)
		p.held += c.held
		above.add(c.changed)
	}
	p.recutAt = 2*p.held + p.opts.MaxChangedLines
}

// cut makes the candidate hold at most its first n changed lines (cutFile);
// c.changed stays the whole file's count, which ranks it and decides its
// share.
func (c *candidate) cut(n int) {
	if c.held > n {
		c.file, c.held, c.lines = cutFile(c.file, n), max(n, 0), nil
	}
}

// lineBound is, over a growing set of files, the largest t with
// t + Σ min(c_j, t) <= budget (c_j their changed lines): the files whose
// c_j <= t count whole (small, their sum), the others t each (big).
type lineBound struct {
	budget, t int
	small     maxHeap
	smallSum  int
	big       int
}

// add adds a file of c changed lines and lowers t to fit.
func (b *lineBound) add(c int) {
	if c > b.t {
		b.big++
	} else {
		heap.Push(&b.small, c)
		b.smallSum += c
	}
	for {
		b.t = (b.budget - b.smallSum) / (1 + b.big)
		if b.small.Len() == 0 || b.small[0] <= b.t {
			return
		}
		b.smallSum -= heap.Pop(&b.small).(int) // now over t: it counts t
		b.big++
	}
}

// maxHeap is a heap of ints, the largest on top.
type maxHeap []int

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// finish spreads MaxChangedLines over the files kept, from the highest
// rank down, and cuts them into chunks.
func (p *planner) finish() *Plan {
	opts, plan := p.opts, p.plan
	kept := slices.Clone(p.best)
	slices.SortFunc(kept, func(a, b *candidate) int { return -rank(a, b) })
	share := lineShare(kept, opts.MaxChangedLines)
	left, reviewed := opts.MaxChangedLines, kept[:0]
	for _, c := range kept {
		take := min(c.changed, share, left)
		switch {
		case take <= 0:
			p.drop(c.path, "limit:lines", c.changed)
			continue
		case take < c.changed:
			p.drop(c.path, "limit:lines:partial", c.changed-take)
			c.truncate(take)
		}
		left -= take
		reviewed = append(reviewed, c)
	}
	kept = reviewed
	n := 0
	for _, c := range kept {
		n += len(c.file.Fragments)
		plan.Files = append(plan.Files, c.file)
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
	return plan
}

// rank orders candidates for the limits: by score, then path (a before b),
// then the order they came in; > 0 when a ranks above b.
func rank(a, b *candidate) int {
	return cmp.Or(cmp.Compare(a.score, b.score), strings.Compare(b.path, a.path), cmp.Compare(b.seq, a.seq))
}

// worstFirst is a heap of candidates with the lowest rank on top.
type worstFirst []*candidate

func (h worstFirst) Len() int           { return len(h) }
func (h worstFirst) Less(i, j int) bool { return rank(h[i], h[j]) < 0 }
func (h worstFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *worstFirst) Push(x any)        { *h = append(*h, x.(*candidate)) }
func (h *worstFirst) Pop() any {
	old := *h
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return c
}

// filter returns the candidate for f, or the reason it is not reviewed.
// For a reason by convention (vendored, lockfile, minified, generated by
// name or marker) it returns the candidate too, which an untrusted
// author's change reviews anyway (Options.Untrusted): then its Source is
// read whatever its name says.
func filter(f *File, cut tail, ignore rules, opts Options) (*candidate, string) {
	p := f.Path()
	if kind, _ := WithheldBy(f); kind != "" {
		return nil, "secret:" + kind
	}
	r, matched := ignore.lastMatch(p)
	if matched && !r.negate {
		return nil, "ignored:" + r.pattern
	}
	reincluded := matched && r.negate
	changed, added := changedLines(f)
	changed, added = changed+cut.changed, added+cut.added
	if reason := fileReason(f, changed); reason != "" {
		return nil, reason
	}
	c := &candidate{file: f, path: p, class: classify(p), changed: changed, held: changed, size: added}
	c.score = score(p, c.class, changed)
	byName := ""
	if !reincluded {
		byName = builtinReason(p)
	}
	if byName != "" && !opts.Untrusted {
		return c, byName
	}
	if opts.Source != nil {
		b, err := opts.Source(p)
		var sized interface{ FileSize() int64 }
		switch {
		case err == nil && b != nil:
			if lines := splitLines(string(b)); !opts.VerifySource || agrees(f, lines) == nil {
				c.source, c.size = lines, int64(len(b))
			}
		case errors.As(err, &sized):
			c.size = sized.FileSize()
		}
	}
	if byName == "" && !reincluded && isGenerated(c.head()) {
		return c, "generated"
	}
	return c, byName
}

// WithheldBy is the kind of secret f is by its name (secrets.Withheld),
// and the name that says so: its path, else the path it had before the
// change renamed or copied it (deploy/.env renamed deploy/env.txt holds
// what .env held). "" when neither name says anything. The plan withholds
// such a file (reason "secret:<kind>", Plan.Withheld).
func WithheldBy(f *File) (kind, name string) {
	for _, name := range []string{f.Path(), f.OldPath} {
		if kind := secrets.Withheld(name); name != "" && kind != "" {
			return kind, name
		}
	}
	return "", ""
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

// truncate keeps the candidate's first n changed lines (cutFile).
func (c *candidate) truncate(n int) {
	c.changed = min(c.changed, n)
	c.file = cutFile(c.file, n)
	c.lines = nil
}

// cutFile returns f with its first n changed lines (in file order): the
// fragment where the n-th one falls ends after it (and the context lines
// that directly follow it), later fragments go. It copies what it cuts, so
// f stays as it was and the lines cut off are not held.
func cutFile(f *File, n int) *File {
	cut := *f
	cut.Fragments = nil
	for _, fr := range f.Fragments {
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
			fr = recount(fr, slices.Clone(fr.Lines[:end]))
		}
		cut.Fragments = append(cut.Fragments, fr)
	}
	return &cut
}

// recount gives fr the first lines of its own, and the ranges that fit
// them.
func recount(fr Fragment, lines []Line) Fragment {
	oldN, newN := fr.OldLines, fr.NewLines
	fr.Lines = lines
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
	return fr
}
