package action

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/org/warden/ghbot"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
	"github.com/org/warden/secrets"
)

// reviewOptions are what a pull request event or a command changes in a
// review.
type reviewOptions struct {
	// trusted is set for a run with the base repository's secrets and a
	// write token on a trusted configuration (pull_request_target, the
	// comment events, a pull request from a branch of the repository):
	// it reads and writes the results cache's "trusted" domain. A fork's
	// pull_request run uses the "fork" domain, which the trusted runs
	// never read.
	trusted bool
	// fresh writes the results cache but does not read it (/warden
	// review).
	fresh  bool
	skills []string // --skill of /warden review
	// command is set for a review a trusted /warden command asked for.
	command bool
}

// Cache domains: a fork's run can never feed the privileged run.
const (
	CacheTrusted = ghbot.DomainTrusted
	CacheFork    = ghbot.DomainFork
)

// botState is what the bot adds to one review.
type botState struct {
	cache  *review.Cache
	narrow func(*hunks.Plan) *hunks.Plan
	notes  []string
}

// botSteps prepares the results cache and, on a push, the incremental
// review.
//
// keys are the model keys of the trusted configuration: without a
// results-cache-secret they derive the trusted domain's.
func (a *runner) botSteps(ctx context.Context, ev Event, pr *PullRequest, opts reviewOptions, keys []secrets.Value) botState {
	var st botState
	var cacheNotes []string
	if a.in.ResultsCacheDir != "" {
		domain := CacheFork
		if opts.trusted {
			domain = CacheTrusted
		}
		st.cache = &review.Cache{
			Dir:       filepath.Join(a.in.ResultsCacheDir, domain),
			Domain:    domain,
			Secret:    a.in.ResultsCacheSecret,
			WriteOnly: opts.fresh,
		}
		if len(st.cache.Secret) == 0 {
			st.cache.Secret = derivedCacheSecret(keys)
		}
		if opts.trusted && !st.cache.Signed() {
			// Nothing a fork cannot read signs the entries: an unsigned
			// entry is no evidence of an answer, so none is read or kept.
			st.cache = nil
			msg := "the results cache is off for this privileged run: nothing signs its entries (no results-cache-secret, and the routes send no model key), and an unsigned entry could be planted by anyone who can write the cache; set results-cache-secret to a repository secret to use it"
			a.gha.Warningf("warden: %s", msg)
			cacheNotes = append(cacheNotes, "**Results cache off:** "+strings.TrimPrefix(msg, "the results cache is off for this privileged run: ")+".")
		} else {
			cacheNotes = append(cacheNotes, a.restoreResults(ctx, st.cache, pr)...)
		}
	}
	st.narrow, st.notes = a.incremental(ctx, ev, pr)
	if st.narrow != nil && st.cache != nil && !st.cache.WriteOnly {
		// With the results cache, the whole change is planned: unchanged
		// code is answered from the cache without a model call, so the
		// report (and the check run's conclusion) still covers every
		// finding of the pull request, not only the new ones.
		st.narrow = nil
		st.notes = []string{"**Push:** the whole change is planned; only what changed since the last complete review calls the model, the rest is answered from the results cache."}
	}
	st.notes = append(cacheNotes, st.notes...)
	return st
}

// restoreResults fills the results cache with the answers of earlier runs
// of this pull request, from the workflow artifacts the domain may trust
// (ghbot.Store), and says where the Action's upload step saves this run's
// (outputs results-path and results-artifact), also when this run fails
// or is cancelled: what it finished is kept. It returns the summary's
// notes.
func (a *runner) restoreResults(ctx context.Context, cache *review.Cache, pr *PullRequest) []string {
	name := ghbot.ArtifactName(cache.Domain, pr.Number)
	a.gha.SetOutput("results-path", cache.Dir)
	a.gha.SetOutput("results-artifact", name)
	store := &ghbot.Store{Client: a.svc.GitHub, Storage: a.svc.Storage}
	got, err := store.Restore(ctx, cache.Domain, pr.Number, pr.HeadRepo, cache.Dir)
	if err != nil {
		a.gha.Warningf("warden: earlier runs' answers not read: %v; every item calls the model", err)
		return nil
	}
	for _, o := range got.From {
		fmt.Fprintf(a.svc.Stderr, "warden: results: restored from artifact %d of %s\n", o.Artifact, o)
	}
	for _, why := range got.Rejected {
		fmt.Fprintf(a.svc.Stderr, "warden: results: not used: %s\n", why)
	}
	fmt.Fprintf(a.svc.Stderr, "warden: results: %d answers of earlier runs restored from %d %s named %s\n",
		got.Entries, len(got.From), review.Plural(len(got.From), "artifact", "artifacts"), name)
	if n := len(got.Rejected); n > 0 {
		return []string{fmt.Sprintf("**Not used:** %s of earlier runs (see the log: a run that executed a fork's workflow file never feeds this one).",
			review.Counted(n, "results artifact", "results artifacts"))}
	}
	return nil
}

// incremental narrows a push's review (pull_request synchronize) to what
// changed since the head the last complete review covered, which that
// review's check run on the push's "before" commit records. It widens to
// the whole change when there is no such record, when the last review was
// not complete, or when its head is no longer an ancestor (a force-push);
// the note says which.
func (a *runner) incremental(ctx context.Context, ev Event, pr *PullRequest) (func(*hunks.Plan) *hunks.Plan, []string) {
	if (ev.Name != "pull_request" && ev.Name != "pull_request_target") || a.in.Mode != ModeFull {
		return nil, nil
	}
	var e struct {
		Action string `json:"action"`
		Before string `json:"before"`
	}
	if json.Unmarshal(ev.Data, &e) != nil || e.Action != "synchronize" || !gitrepo.IsSHA(e.Before) {
		return nil, nil
	}
	state, ok, err := ghbot.LastReviewState(ctx, a.svc.GitHub, a.in.CheckName, e.Before, a.app)
	if err != nil {
		a.gha.Warningf("warden: reading the last review's state: %v; reviewing the whole change", err)
		return nil, nil
	}
	ancestor := false
	if ok && gitrepo.IsRepo(ctx, a.svc.Workspace) {
		_, aerr := gitrepo.Output(ctx, a.svc.Workspace, "merge-base", "--is-ancestor", state.Head, pr.HeadSHA)
		ancestor = aerr == nil
	}
	since, why := review.IncrementalFrom(state.Head, ok && state.Complete, ancestor)
	if since == "" {
		return nil, []string{"**Whole change reviewed:** " + why + "."}
	}
	diff, err := gitrepo.Output(ctx, a.svc.Workspace, append(slices.Clone(gitrepo.DiffArgs), since, pr.HeadSHA, "--")...)
	if err != nil {
		return nil, []string{fmt.Sprintf("**Whole change reviewed:** the diff since %s could not be read (%v).", gitrepo.Short(since), err)}
	}
	inter, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil, []string{fmt.Sprintf("**Whole change reviewed:** the diff since %s could not be read (%v).", gitrepo.Short(since), err)}
	}
	narrow := func(hp *hunks.Plan) *hunks.Plan {
		out, _ := review.Since(hp, inter, since)
		return out
	}
	note := fmt.Sprintf("**Incremental review:** only what changed since %s, the head the last complete review covered; the findings posted on unchanged code stay as they are.", gitrepo.Short(since))
	return narrow, []string{note}
}

// followUp reads warden's threads on the pull request and its findings
// comment (the ledger): it resolves the threads of findings this run no
// longer reports on changed lines, with a reply naming the commit, marks
// such ledger entries fixed, and leaves out the findings people
// dismissed, counting them in the report. It returns the summary's notes,
// the ledger, for the review to keep the findings that do not go inline
// in (nil when it could not be read), and the findings it left out as
// dismissed (whose markers are theirs, not a new finding's).
func (a *runner) followUp(ctx context.Context, pr *PullRequest, rep *review.Report) ([]string, *ghbot.Ledger, []review.Finding) {
	gh := a.svc.GitHub
	ledger, lerr := ghbot.LoadLedger(ctx, gh, pr.Number)
	if lerr != nil {
		a.gha.Warningf("warden: reading warden's findings comment: %v; findings that are not inline comments go to the review body", lerr)
		ledger = nil
	}
	threads, err := gh.ReviewThreads(ctx, pr.Number)
	if err != nil {
		a.gha.Warningf("warden: reading review threads: %v; no thread resolved, no dismissal applied", err)
		threads = nil
	}
	// The thumbs-downs come with the threads; a comment with more than
	// the query reads is listed whole, one request each, until one fails.
	thumbs := map[int64][]string{}
	listAll := true
	for _, t := range threads {
		if t.RootID == 0 {
			continue
		}
		thumbs[t.RootID] = t.ThumbsDown
		if t.ThumbsDownAll || !listAll {
			continue
		}
		all, err := gh.ThumbsDown(ctx, t.RootID)
		if err != nil {
			a.gha.Warningf("warden: reading reactions: %v; only the thumbs-downs read with the threads (100 a comment) count", err)
			listAll = false
			continue
		}
		thumbs[t.RootID] = all
	}
	// Whose word dismisses a finding: on a public repository anyone may
	// react, so only a login with write, maintain or admin permission
	// (looked up, failing closed), and never the pull request's author
	// unless the author is trusted (a fork's author must not silence
	// findings on their own change). The same holds for whoever resolved
	// a thread.
	authorOK := authorTrusted(pr)
	writers := &ghreport.Maintainers{Client: gh, Warn: func(line string) { a.gha.Warningf("warden: %s", line) }}
	trusted := func(login string) bool {
		return (login != pr.Author || authorOK) && writers.Trusted(ctx, login)
	}
	fu := ghreport.Follow(threads, rep.Findings, nil, thumbs, trusted)
	if !rep.Complete() {
		fu.Resolve = nil // an unfinished review proves nothing fixed
	}
	if ledger != nil {
		fu.Held = append(fu.Held, ledger.Held()...)
	}
	var notes []string
	if n := writers.Unchecked; n > 0 {
		notes = append(notes, fmt.Sprintf("**Not counted:** the thumbs-down or resolution of %d %s whose repository permission was not checked (at most %d lookups a run, or GitHub did not answer); %s no finding.",
			n, review.Plural(n, "login", "logins"), ghreport.MaxPermissionLookups, review.Plural(n, "it dismisses", "they dismiss")))
	}
	dismissed := ghreport.Suppress(rep, fu.Held)
	if n := len(dismissed); n > 0 {
		notes = append(notes, fmt.Sprintf("**Suppressed:** %d %s dismissed on this pull request (a `/warden dismiss`, a thumbs-down or a thread resolved without a code change) %s not shown again.",
			n, review.Plural(n, "finding", "findings"), review.Plural(n, "is", "are")))
	}
	if ledger != nil {
		if n := ledger.Reconcile(rep.Findings, rep.Complete(), a.changedSince(ctx, ledger.Head(), pr.HeadSHA), pr.HeadSHA); n > 0 {
			notes = append(notes, fmt.Sprintf("**Fixed:** %s in warden's findings comment no longer found on changed lines in %s.",
				review.Counted(n, "finding", "findings"), gitrepo.Short(pr.HeadSHA)))
		}
	}
	if len(fu.Resolve) > 0 {
		n, note, err := gh.ResolveFixed(ctx, pr.Number, fu.Resolve, pr.HeadSHA)
		if err != nil {
			a.gha.Warningf("warden: resolving fixed findings' threads: %v", err)
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("**Resolved:** %d %s fixed in %s.", n, review.Plural(n, "finding's thread", "findings' threads"), gitrepo.Short(pr.HeadSHA)))
		}
		if note != "" {
			notes = append(notes, "**Not resolved:** "+note)
		}
	}
	return notes, ledger, dismissed
}

// changedSince says whether lines start..end of path at commit since
// changed by head (the diff between them in the workspace): a line of
// them removed or replaced, or the file gone or renamed. Nil when the
// diff cannot be read (nothing counts as changed).
func (a *runner) changedSince(ctx context.Context, since, head string) func(path string, start, end int) bool {
	if since == "" || since == head || !gitrepo.IsSHA(since) {
		return nil
	}
	diff, err := gitrepo.Output(ctx, a.svc.Workspace, append(slices.Clone(gitrepo.DiffArgs), since, head, "--")...)
	if err != nil {
		return nil
	}
	files, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		return nil
	}
	removed := map[string][]int{}
	gone := map[string]bool{}
	for _, f := range files {
		if f.OldPath == "" {
			continue
		}
		if f.NewPath != f.OldPath {
			gone[f.OldPath] = true
		}
		for _, fr := range f.Fragments {
			for _, l := range fr.Lines {
				if l.Op == hunks.Delete {
					removed[f.OldPath] = append(removed[f.OldPath], l.OldLine)
				}
			}
		}
	}
	return func(path string, start, end int) bool {
		return gone[path] || slices.ContainsFunc(removed[path], func(n int) bool { return n >= start && n <= max(start, end) })
	}
}

// stateRecords are the check run's hidden records of what this run
// reviewed (ghbot.StateRecord), which the next push's run reads from the
// check run; nil for runs that publish no check run.
func stateRecords(ctx context.Context, head string, record bool) func(*review.Report) []string {
	if !record {
		return nil
	}
	return func(r *review.Report) []string {
		return []string{ghbot.StateRecord(ghbot.ReviewState{Head: head, Complete: r.Complete() && ctx.Err() == nil})}
	}
}
