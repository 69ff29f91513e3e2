package review

import (
	"fmt"
	"slices"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
	"github.com/org/warden/secrets"
	"github.com/org/warden/skills"
)

// DefaultMaxTokens is the completion budget asked for one work item.
const DefaultMaxTokens = 4096

// Options configure planning and running a review.
type Options struct {
	Skills      []*skills.Skill // in the order they run on each chunk
	Change      Change
	MaxTokens   int      // per answer; 0: DefaultMaxTokens
	FailOn      Severity // recorded in the report's policy; the exit code is the caller's
	ReportOn    Severity // findings below this are left out of the report
	MaxFindings int      // at most this many findings, most severe first; 0: no cap
	// BatchSkills asks one request per chunk for all the skills that apply
	// to it (instead of one per skill and chunk); the answer tags each
	// finding with its skill. The report still has one item per skill and
	// chunk.
	BatchSkills bool
	// Verify asks for the optional verification pass (verify.go); "" is
	// off. VerifyRoute names the route it runs on; "": the review's
	// routes, in their order.
	Verify      VerifyMode
	VerifyRoute string
	// Context, when set, adds context beyond the hunk to each chunk's
	// request (related.Gather: the whole small file, else the enclosing
	// declaration and the declarations the changed lines use), under its
	// budget in characters.
	Context *related.Options
	// Progress, when set, is called after each request ends (one per item,
	// or one per batch with BatchSkills); calls are serialized.
	Progress func(done, total int)
	// Cache, when set, answers the items it has a result for without a
	// model call (Item.Cached) and keeps every new accepted answer.
	Cache *Cache
	// LimitsOutOfScope puts what the planning limits dropped (max_files,
	// max_changed_lines, max_file_bytes, GitHub's file limits) out of the
	// review's scope, so that it does not keep the review from being
	// complete; Coverage says what was left out.
	LimitsOutOfScope bool
	// Instructions, when set, adds the repository's instructions that
	// apply to each chunk's path to its requests' system message
	// (instructions.go); nil sends none.
	Instructions *Guide
	// Secrets finds the secrets that no request may carry: each is
	// replaced by a placeholder before a request is built, and one on an
	// added line is a finding of its own (Plan.Own). nil: the rule set
	// alone, with no held values.
	Secrets *secrets.Scanner
}

// WorkItem is one skill on one chunk, with its request ready to send. The
// items of one batch (Options.BatchSkills) are adjacent in Plan.Items and
// share one Request (the same pointer).
type WorkItem struct {
	Skill            *skills.Skill
	Chunk            *hunks.Chunk
	Request          *execution.Request
	TimeoutBase      time.Duration // on the first route
	TimeoutEffective time.Duration // the adaptive deadline on the first route
	Deadline         time.Duration // what the first attempt really gets (execution.Engine.FirstDeadline)
	// Context is what the request carries beyond the hunk (Options.Context);
	// nil when off.
	Context *related.Context
	// Instructions are the repository's instructions the request carries
	// (Options.Instructions); nil when none are configured.
	Instructions *AppliedInstructions
}

// Plan is what a review will do: the work items in priority order, and
// every path it will not review, with the reason.
type Plan struct {
	Items   []WorkItem
	Ignored []Ignored
	// Conventions are the files an untrusted author's change reviews
	// although a convention would exclude them (hunks.Plan.Conventions).
	Conventions []Ignored
	// Instructions say which of the repository's instructions the items
	// carry (Options.Instructions); nil when none are configured.
	Instructions *InstructionsReport
	// SkippedSkills and SkillWarnings are what skill discovery skipped,
	// and what it warned of in the skills that run (Prepare).
	SkippedSkills []SkippedSkill
	SkillWarnings []SkillWarning
	// Own are the findings warden makes itself, without a model call:
	// the secrets on the change's added lines (secrets.go) and the text
	// on them addressed to the AI reviewer (injection.go). Redacted says
	// where secrets were replaced by placeholders in the requests;
	// Injections where the text the requests carry addresses the
	// reviewer (the pull request's too); Change is the pull request's
	// text as the requests carry it.
	Own        []Finding
	Redacted   []Redaction
	Injections []Injection
	Change     Change
}

// NewPlan pairs every chunk with every skill whose paths select it, builds
// each item's request (with Options.BatchSkills, one request for all the
// skills on a chunk), and computes its deadline on the engine's first
// route. Chunks keep hunks' priority order; on one chunk, skills keep their
// order. A path no skill selects is reported ignored with reason
// "skill-filter". Secrets are replaced before any request carries them
// (secrets.go), and text the requests carry that addresses the AI
// reviewer is recorded (Plan.Injections; injection.go).
func NewPlan(hp *hunks.Plan, eng *execution.Engine, opts Options) (*Plan, error) {
	if len(opts.Skills) == 0 {
		return nil, fmt.Errorf("plan: no skill selected")
	}
	filters, err := skillFilters(opts.Skills)
	if err != nil {
		return nil, err
	}
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	first := eng.Routes()[0]
	g := newGuard(opts.Secrets)
	p := &Plan{Change: g.change(opts.Change)}
	pr := newPrompts(p.Change, maxTokens)
	pr.guide = opts.Instructions.redacted(g)
	from := g.renamed(hp.Withheld)
	for _, ig := range hp.Ignored {
		p.Ignored = append(p.Ignored, Ignored{Path: ig.Path, Reason: ig.Reason, Lines: ig.Lines, From: from[ig.Path]})
	}
	contexts := pr.gatherContexts(opts.Context, g)
	for _, c := range hp.Conventions {
		p.Conventions = append(p.Conventions, Ignored{Path: c.Path, Reason: c.Reason, Lines: c.Lines})
	}
	selected := map[string]bool{}
	var unselected []string
	var on []*skills.Skill
	// The plan's own chunks: redacting them must not write to hp, which
	// the caller (and other plans of it) may still read.
	chunks := slices.Clone(hp.Chunks)
	for ci := range chunks {
		c := &chunks[ci]
		g.chunk(c) // before any request carries it
		on = on[:0]
		for si, sk := range opts.Skills {
			if filters[si].Match(c.Path) {
				on = append(on, sk)
			}
		}
		if len(on) == 0 {
			if !selected[c.Path] {
				unselected = append(unselected, c.Path)
			}
			continue
		}
		selected[c.Path] = true
		p.addressed(c) // as the requests carry it
		size := 1
		if opts.BatchSkills {
			size = len(on)
		}
		for g := 0; g < len(on); g += size {
			group := on[g : g+size]
			req := pr.request(group, c)
			base, eff, err := eng.Timeout(first, req)
			if err != nil {
				return nil, fmt.Errorf("plan %s on %s: %w", group[0].Name, c.Path, err)
			}
			dl := eng.FirstDeadline(eff)
			for _, sk := range group {
				p.Items = append(p.Items, WorkItem{Skill: sk, Chunk: c, Request: req, TimeoutBase: base, TimeoutEffective: eff, Deadline: dl,
					Context: contexts[c], Instructions: pr.guide.For(c.Path)})
			}
		}
	}
	p.ignoreUnselected(hp, unselected, selected)
	p.Instructions = pr.guide.report(p.Items)
	p.keepOwn(g)
	return p, nil
}

// ignoreUnselected lists the paths no skill selected as ignored with reason
// "skill-filter", each once, with the changed lines it has in hp.
func (p *Plan) ignoreUnselected(hp *hunks.Plan, unselected []string, selected map[string]bool) {
	lines := map[string]int{}
	for _, c := range hp.Chunks {
		lines[c.Path] += c.Added + c.Deleted
	}
	seen := map[string]bool{}
	for _, path := range unselected {
		if !selected[path] && !seen[path] {
			seen[path] = true
			p.Ignored = append(p.Ignored, Ignored{Path: path, Reason: "skill-filter", Lines: lines[path]})
		}
	}
}

// addressed records where the added lines of a chunk the requests carry
// address the AI reviewer (Plan.Injections), each a finding of its own
// (Plan.Own).
func (p *Plan) addressed(c *hunks.Chunk) {
	for _, in := range chunkInjections(c) {
		p.Injections = append(p.Injections, in)
		p.Own = append(p.Own, injectionFinding(c, in))
	}
}

// keepOwn records what the plan found without a model: the secrets' of g
// and their redactions, before the findings of the text addressed to the
// AI reviewer; and, first among the injections, where the pull request's
// text addresses it, when a request carries that text (every request
// does; a plan without items sends none).
func (p *Plan) keepOwn(g *guard) {
	p.Own, p.Redacted = append(g.findings, p.Own...), g.redacted
	if len(p.Items) > 0 {
		p.Injections = append(changeInjections(p.Change), p.Injections...)
	}
}

// skillFilters are the path filters of skills, by index.
func skillFilters(sks []*skills.Skill) ([]*hunks.PathFilter, error) {
	filters := make([]*hunks.PathFilter, len(sks))
	for i, sk := range sks {
		f, err := hunks.NewPathFilter(sk.Paths, sk.Ignore)
		if err != nil {
			return nil, fmt.Errorf("skill %q: %w", sk.Name, err)
		}
		filters[i] = f
	}
	return filters, nil
}

// gatherContexts makes p give each chunk its context beyond the hunk, when
// o is set, gathered once per chunk into the map it returns (empty when o is
// nil), its secrets replaced by g.
func (p *prompts) gatherContexts(o *related.Options, g *guard) map[*hunks.Chunk]*related.Context {
	contexts := map[*hunks.Chunk]*related.Context{}
	if o == nil {
		return contexts
	}
	cxo := *o
	if cxo.Index == nil {
		cxo.Index = &related.Index{} // each file read and parsed once per plan
	}
	p.contextOf = func(c *hunks.Chunk) *related.Context {
		if cx, ok := contexts[c]; ok {
			return cx
		}
		cx := related.Gather(c, cxo)
		g.context(cx)
		contexts[c] = cx
		return cx
	}
	return contexts
}
