package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/hunks"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// Anchors maps a path to the new-side (RIGHT) line ranges of its hunks in
// the diff warden reviewed: the lines GitHub accepts review comments on.
// hunks owns the diff format, and so the anchors.
type Anchors = hunks.Anchors

// LineRange is an inclusive range of new-side lines.
type LineRange = hunks.LineRange

// The review events warden uses. It never approves.
const (
	EventComment        = "COMMENT"
	EventRequestChanges = "REQUEST_CHANGES"
)

// MaxCommentBody caps a review's body and each comment's body: "Body is too
// long (maximum is 65536 characters)" is GitHub's 422 above it
// (telia-oss/github-pr-resource#259; pr-agent clips at 65,000, PR #1119).
// Measured in bytes, never less than GitHub's count.
const MaxCommentBody = 65536

// The largest suggestion an inline comment carries. GitHub takes 65,536
// characters in a comment (MaxCommentBody), but a suggestion is committed
// with one click, so it belongs in the comment only while a reviewer can
// read all of it there: GitHub shows it as a diff of every line it
// replaces. 100 lines is about two screens of that diff; 8,000 bytes is
// the most review keeps of a model's suggestion (100 lines of 80
// columns), so by size only a report file (mode report, up to 32 KiB)
// reaches it. A longer one, such as a whole file rewritten, is left out
// with one line saying why; the finding is posted, and the JSON report
// keeps the suggestion.
const (
	MaxSuggestionLines = 100
	MaxSuggestionBytes = 8000
)

// DefaultMaxComments is the cap on inline comments per review when
// ReviewOptions.MaxComments is not positive. The rest go to the review body.
const DefaultMaxComments = 50

// ReviewOptions shapes the one review PostReview posts.
type ReviewOptions struct {
	// Event is EventComment (also when empty) or EventRequestChanges, which
	// is used only when a finding reaches FailOn.
	Event  string
	FailOn review.Severity
	// ReportOn is the lowest severity posted; SeverityNone posts all.
	ReportOn review.Severity
	// MaxComments caps the inline comments; <= 0 means DefaultMaxComments.
	MaxComments int
	// Body opens the review body, e.g. the outcome line and a link to the
	// check run (Markdown, trusted).
	Body string
	// Posted are the marks (report.Mark) of findings already on the pull
	// request outside review comments and review bodies (warden's
	// findings comment): those findings are not posted again.
	Posted []report.Mark
	// Dismissed are the findings this run left out as dismissed
	// (Suppress): they take their marks first, so that a dismissed
	// finding's marker never passes for a new twin's (report.Match).
	Dismissed []review.Finding
	// Overflow, when set, keeps the findings that do not go inline (past
	// MaxComments, off the diff, refused by GitHub) in one place instead
	// of the review body: it returns the line the review body shows
	// instead (a link). With no inline comment left, no review is posted.
	// An error keeps them in the review body.
	Overflow func(ctx context.Context, fs []review.Finding) (string, error)
}

// ReviewResult says where each finding went.
type ReviewResult struct {
	Posted     int   // inline comments posted
	Duplicates int   // findings already on the pull request (fingerprint), not posted again
	InBody     int   // findings written into the review body instead of a comment
	Below      int   // findings below ReportOn, not posted
	Rejected   int   // of InBody: comments GitHub answered 422 to, moved to the body
	Omitted    int   // of InBody: left out because the body reached MaxCommentBody
	Overflow   int   // findings given to ReviewOptions.Overflow instead of the body
	ReviewID   int64 // 0 when nothing new was posted
}

// markerRE finds warden's hidden fingerprint markers: a finding's mark
// (report.Mark: "v3:", its fingerprint and its twin), or, in comments of
// earlier versions, "v2:" and the fingerprint of its code and neighbours,
// or the legacy fingerprint alone (its title), sealed or not. Model text
// cannot forge one (neutralize escapes every "<"), and a marker counts
// only in a comment warden's own login wrote (Identity): a copied marker
// anywhere else is text. Unsealed, it only keeps a finding from being
// posted twice; a thread whose first comment's marker is sealed is
// warden's for dismissals (Thread.Sealed).
var markerRE = regexp.MustCompile(`<!-- warden:fp:(v3:[0-9a-f]{32}:[0-9a-f]{16}|(?:v2:)?[0-9a-f]{32})(?: sig=[0-9a-f]{32})? -->`)

// marker is f's fingerprint marker unsealed: as a Client without a state
// key writes it (Client.marker seals it).
func marker(f review.Finding) string { return "<!-- warden:fp:" + report.MarkOf(f).String() + " -->" }

// marker is f's fingerprint marker, sealed with the state key.
func (c *Client) marker(f review.Finding) string { return c.Mark("fp:" + report.MarkOf(f).String()) }

// markOf is the mark of a markerRE match.
func markOf(m []string) report.Mark {
	mk, _ := report.ParseMark(m[1]) // markerRE admits only marks
	return mk
}

// PostReview posts one review on pull request pr at headSHA with an inline
// comment for every new finding at or above opts.ReportOn that can be
// anchored, and the others in the review body. Nothing is posted (ReviewID
// 0) when every finding is already on the pull request.
//
// Before posting:
//   - each finding's mark (report.MarkOf, as a hidden marker in every
//     comment and body entry) is looked up in the pull request's review
//     comments and review bodies; a finding already there is a duplicate
//     (report.Match: one marker stands for one finding, so two findings on
//     identical code need two markers);
//   - each anchor is checked against anchors: the path must be there, and
//     start_line..line inside one hunk on the RIGHT side. A finding whose
//     range is only partly inside a hunk is commented on that part, without
//     a suggestion; one with no line in the diff goes to the body;
//   - a suggestion block is added only when the comment covers exactly the
//     finding's lines, and only up to MaxSuggestionLines and
//     MaxSuggestionBytes.
//
// GitHub rejects the whole review with 422 when one comment does not fit its
// diff, without saying which ("Pull request review thread line must be part
// of the diff"). The strategy, in order, so that no finding is lost:
//  1. post as planned;
//  2. on 422, re-validate every comment against GitHub's own diff (the files
//     API's patches, AnchorsFromFiles), move those that do not fit into the
//     body (Rejected) and post again;
//  3. on 422 again, post every finding in the body and no comment;
//  4. on 422 with REQUEST_CHANGES, the same as COMMENT.
//
// A 5xx on the post is not retried blindly, since the review may have been
// created: the markers are listed again and only what is still missing is
// posted, once.
func (c *Client) PostReview(ctx context.Context, pr int, headSHA string, findings []review.Finding, anchors Anchors, opts ReviewOptions) (ReviewResult, error) {
	op := fmt.Sprintf("post review on pull request #%d", pr)
	var res ReviewResult
	event := strings.ToUpper(strings.TrimSpace(opts.Event))
	switch event {
	case "":
		event = EventComment
	case EventComment, EventRequestChanges:
	default:
		return res, fmt.Errorf("%s: review event %q: want %s or %s", op, opts.Event, EventComment, EventRequestChanges)
	}
	if headSHA == "" {
		return res, fmt.Errorf("%s: no head SHA", op)
	}
	if event == EventRequestChanges && !review.Blocking(findings, opts.FailOn) {
		event = EventComment
	}
	var shown []review.Finding
	for _, f := range findings {
		if f.Severity.ShownAt(opts.ReportOn) {
			shown = append(shown, f)
		}
	}
	res.Below = len(findings) - len(shown)

	prevDup := -1
	for try := 1; ; try++ {
		seen, err := c.postedMarks(ctx, pr)
		if err != nil {
			return res, err
		}
		fresh, dup := dedup(shown, opts.Dismissed, append(seen, opts.Posted...))
		if prevDup >= 0 {
			// Findings that appeared since the failed post were posted by
			// it.
			res.Posted += max(0, dup-prevDup)
		}
		res.Duplicates = dup
		if len(fresh) == 0 {
			return res, nil
		}
		r, err := c.postPlanned(ctx, pr, headSHA, event, fresh, anchors, opts)
		var er *gh.ErrorResponse
		if err != nil && try == 1 && errors.As(err, &er) && er.Response != nil && er.Response.StatusCode >= 500 {
			c.log.Warn("GitHub server error posting the review; checking what arrived before posting again",
				"status", er.Response.StatusCode, "attempt", try)
			prevDup = dup
			continue
		}
		if err != nil {
			return res, c.fail(op, true, err)
		}
		res.Posted += r.Posted
		res.InBody, res.Rejected, res.Omitted, res.Overflow, res.ReviewID = r.InBody, r.Rejected, r.Omitted, r.Overflow, r.ReviewID
		return res, nil
	}
}

// postPlanned runs the 422 strategy of PostReview for the fresh findings.
func (c *Client) postPlanned(ctx context.Context, pr int, headSHA, event string, fresh []review.Finding, anchors Anchors, opts ReviewOptions) (ReviewResult, error) {
	maxComments := opts.MaxComments
	if maxComments <= 0 {
		maxComments = DefaultMaxComments
	}
	p := c.plan(fresh, anchors, maxComments)
	header, moved := c.overflow(ctx, &p, opts, opts.Body)
	if len(p.comments) == 0 && len(p.body) == 0 {
		return ReviewResult{Overflow: moved}, nil // all kept in the findings comment
	}
	id, err := c.createReview(ctx, pr, headSHA, event, header, p)
	if err == nil {
		r := p.result(id)
		r.Overflow = moved
		return r, nil
	}
	if !isUnprocessable(err) {
		return ReviewResult{}, err
	}
	c.log.Warn("GitHub rejected the review (422); re-validating the comments against GitHub's diff",
		"comments", len(p.comments))

	// Step 2: GitHub's own diff decides.
	if files, _, ferr := c.PullRequestFiles(ctx, pr); ferr == nil && len(p.comments) > 0 {
		theirs := AnchorsFromFiles(files)
		var keep []comment
		q := p
		q.body = slices.Clone(p.body)
		for _, cm := range p.comments {
			if within(theirs[cm.path], cm.start, cm.end) {
				keep = append(keep, cm)
			} else {
				q.body = append(q.body, bodyEntry{f: cm.f, why: "GitHub did not accept a comment on these lines"})
				q.rejected++
			}
		}
		q.comments = keep
		if q.rejected > 0 {
			h, more := c.overflow(ctx, &q, opts, header)
			id, err = c.createReview(ctx, pr, headSHA, event, h, q)
			if err == nil {
				r := q.result(id)
				r.Overflow = moved + more
				return r, nil
			}
			if !isUnprocessable(err) {
				return ReviewResult{}, err
			}
		}
	} else if ferr != nil {
		c.log.Warn("could not read the pull request's files to re-validate comments", "error", ferr)
	}

	// Step 3 (and 4): everything in the body.
	all := plan{repoURL: p.repoURL, mark: p.mark, rejected: len(p.comments)}
	all.body = slices.Clone(p.body)
	for _, cm := range p.comments {
		all.body = append(all.body, bodyEntry{f: cm.f, why: "GitHub did not accept a comment on these lines"})
	}
	c.log.Warn("posting every finding in the review body", "findings", len(all.body))
	h, more := c.overflow(ctx, &all, opts, header)
	for _, ev := range slices.Compact([]string{event, EventComment}) {
		id, err = c.createReview(ctx, pr, headSHA, ev, h, all)
		if err == nil {
			r := all.result(id)
			r.Overflow = moved + more
			return r, nil
		}
		if !isUnprocessable(err) {
			return ReviewResult{}, err
		}
	}
	return ReviewResult{}, err
}

// overflow hands p's body findings to opts.Overflow, when set, and
// returns the review body's header with the line it gives, and how many
// it took; on its error they stay in the body.
func (c *Client) overflow(ctx context.Context, p *plan, opts ReviewOptions, header string) (string, int) {
	if opts.Overflow == nil || len(p.body) == 0 {
		return header, 0
	}
	fs := make([]review.Finding, len(p.body))
	for i, e := range p.body {
		fs[i] = e.f
	}
	line, err := opts.Overflow(ctx, fs)
	if err != nil {
		c.log.Warn("keeping the findings not posted inline in the review body", "error", err)
		return header, 0
	}
	p.body = nil
	return strings.TrimSpace(header + "\n\n" + line), len(fs)
}

func isUnprocessable(err error) bool {
	var er *gh.ErrorResponse
	return errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity
}

func (c *Client) createReview(ctx context.Context, pr int, headSHA, event, header string, p plan) (int64, error) {
	req := &gh.PullRequestReviewRequest{
		CommitID: gh.String(headSHA),
		Event:    gh.String(event),
		Body:     gh.String(p.reviewBody(header)),
	}
	for _, cm := range p.comments {
		d := &gh.DraftReviewComment{
			Path: gh.String(cm.path),
			Body: gh.String(cm.body),
			Line: gh.Int(cm.end),
			Side: gh.String("RIGHT"),
		}
		if cm.start < cm.end {
			d.StartLine = gh.Int(cm.start)
			d.StartSide = gh.String("RIGHT")
		}
		req.Comments = append(req.Comments, d)
	}
	// The transport must not retry a 5xx here: PostReview checks what
	// arrived first.
	ctx = context.WithValue(ctx, noServerErrorRetry, true)
	// GitHub API docs: https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request
	rv, _, err := c.gh.PullRequests.CreateReview(ctx, c.owner, c.repo, pr, req)
	if err != nil {
		return 0, err
	}
	return rv.GetID(), nil
}

// postedMarks are warden's markers, one mark each, in the review
// comments and review bodies of the pull request that warden's own login
// wrote (Identity): a stranger's comment carrying a copied marker counts
// for nothing.
func (c *Client) postedMarks(ctx context.Context, pr int) ([]report.Mark, error) {
	self, err := c.Identity(ctx)
	if err != nil {
		return nil, err
	}
	var seen []report.Mark
	add := func(author, body string) {
		if !sameLogin(author, self) {
			return
		}
		for _, m := range markerRE.FindAllStringSubmatch(body, -1) {
			seen = append(seen, markOf(m))
		}
	}
	copts := &gh.PullRequestListCommentsOptions{ListOptions: gh.ListOptions{PerPage: 100}}
	for {
		// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
		cs, resp, err := c.gh.PullRequests.ListComments(ctx, c.owner, c.repo, pr, copts)
		if err != nil {
			return nil, c.fail(fmt.Sprintf("list review comments of pull request #%d", pr), false, err)
		}
		for _, cm := range cs {
			add(cm.GetUser().GetLogin(), cm.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		copts.Page = resp.NextPage
	}
	ropts := &gh.ListOptions{PerPage: 100}
	for {
		// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request
		rs, resp, err := c.gh.PullRequests.ListReviews(ctx, c.owner, c.repo, pr, ropts)
		if err != nil {
			return nil, c.fail(fmt.Sprintf("list reviews of pull request #%d", pr), false, err)
		}
		for _, r := range rs {
			add(r.GetUser().GetLogin(), r.GetBody())
		}
		if resp.NextPage == 0 {
			break
		}
		ropts.Page = resp.NextPage
	}
	return seen, nil
}

// dedup drops the findings of fs already posted: those a mark of seen
// stands for (report.Match), the dismissed findings taking theirs first.
func dedup(fs, dismissed []review.Finding, seen []report.Mark) (fresh []review.Finding, dup int) {
	all := append(slices.Clone(fs), dismissed...)
	posted := make([]bool, len(all))
	for _, i := range report.Match(seen, all) {
		if i >= 0 {
			posted[i] = true
		}
	}
	for i, f := range fs {
		if posted[i] {
			dup++
			continue
		}
		fresh = append(fresh, f)
	}
	return fresh, dup
}

type comment struct {
	f          review.Finding
	path       string
	start, end int
	body       string
}

type bodyEntry struct {
	f   review.Finding
	why string
}

type plan struct {
	repoURL  string
	mark     func(review.Finding) string // the fingerprint marker (Client.marker)
	comments []comment
	body     []bodyEntry
	rejected int
}

func (p plan) result(id int64) ReviewResult {
	_, omitted := p.renderBody("")
	return ReviewResult{Posted: len(p.comments), InBody: len(p.body), Rejected: p.rejected, Omitted: omitted, ReviewID: id}
}

func (c *Client) repoURL() string { return c.serverURL + "/" + c.owner + "/" + c.repo }

// plan anchors each finding, most severe first, up to maxComments inline.
func (c *Client) plan(fs []review.Finding, anchors Anchors, maxComments int) plan {
	p := plan{repoURL: c.repoURL(), mark: c.marker}
	for _, f := range sortedForReview(fs) {
		path := normPath(f.Path)
		start, end, exact, ok := anchor(anchors[path], f)
		switch {
		case !ok:
			p.body = append(p.body, bodyEntry{f: f, why: "not on a line of the diff"})
		case len(p.comments) >= maxComments:
			p.body = append(p.body, bodyEntry{f: f, why: fmt.Sprintf("more than %d inline comments", maxComments)})
		default:
			p.comments = append(p.comments, comment{
				f: f, path: path, start: start, end: end,
				body: markedCommentBody(f, exact, p.repoURL, p.mark(f)),
			})
		}
	}
	return p
}

// normPath is a finding's path as the diff names it: exactly, less a
// leading "./". White space is part of a path (a file may be named " a.go"),
// so it is never trimmed: a trimmed path would miss its anchors and send the
// finding, path and all, to the findings comment.
func normPath(p string) string { return strings.TrimPrefix(p, "./") }

func sortedForReview(fs []review.Finding) []review.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b review.Finding) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), strings.Compare(normPath(a.Path), normPath(b.Path)), cmp.Compare(a.StartLine, b.StartLine))
	})
	return out
}

// anchor places a finding on the diff: exactly its lines when they lie in
// one hunk, else the part of its lines inside the first hunk they overlap.
func anchor(ranges []LineRange, f review.Finding) (start, end int, exact, ok bool) {
	s, e := lines(f)
	if s == 0 {
		return 0, 0, false, false
	}
	if within(ranges, s, e) {
		return s, e, true, true
	}
	for _, r := range ranges {
		if r.Start <= 0 || r.End < r.Start {
			continue
		}
		if lo, hi := max(s, r.Start), min(e, r.End); lo <= hi {
			return lo, hi, false, true
		}
	}
	return 0, 0, false, false
}

// within reports whether start..end lies inside one range.
func within(ranges []LineRange, start, end int) bool {
	for _, r := range ranges {
		if r.Start > 0 && r.Start <= start && end <= r.End {
			return true
		}
	}
	return false
}

// commentBody renders one inline comment: severity and title, the
// description, a suggestion block when the comment covers exactly the
// finding's lines (a line saying why instead, for one over
// MaxSuggestionLines or MaxSuggestionBytes), and the hidden fingerprint
// marker. Model text is
// neutralized; the suggestion sits in a fence it cannot close.
//
// A finding whose lines were guessed (Clamped) says so, and its suggestion
// is never an applicable block: it might replace the wrong lines.
func commentBody(f review.Finding, exact bool, repoURL string) string {
	return markedCommentBody(f, exact, repoURL, marker(f))
}

// markedCommentBody is commentBody ending with the marker given.
func markedCommentBody(f review.Finding, exact bool, repoURL, fpMarker string) string {
	head := fmt.Sprintf("**[%s] %s**", f.Severity, report.Neutralize(report.OneLine(f.Title), repoURL))
	if f.Skill != "" {
		head += " · " + report.InlineCode(report.OneLine(f.Skill))
	}
	if f.Clamped {
		exact = false
		head += "\n\n_Approximate lines: the model named lines outside the reviewed change, so this comment sits on the nearest reviewed lines._"
	}
	var tail strings.Builder
	start, end := lines(f)
	if sug := strings.TrimSuffix(report.Sanitize(f.Suggestion), "\n"); f.Suggestion != "" {
		fence := strings.Repeat("`", report.FenceLength(sug))
		n := strings.Count(sug, "\n") + 1
		switch {
		case n > MaxSuggestionLines || len(sug) > MaxSuggestionBytes:
			fmt.Fprintf(&tail, "\n\n_Suggested change of %s left out: an inline suggestion holds at most %d lines (%d bytes), to be read whole before it is committed; the JSON report has it._",
				review.Counted(n, "line", "lines"), MaxSuggestionLines, MaxSuggestionBytes)
		case exact:
			fmt.Fprintf(&tail, "\n\n%ssuggestion\n%s\n%s", fence, sug, fence)
		default:
			fmt.Fprintf(&tail, "\n\nSuggested replacement for lines %s (not applicable here: the diff shows only part of them):\n\n%s\n%s\n%s",
				lineSpan(start, end), fence, sug, fence)
		}
	}
	if !exact {
		head += fmt.Sprintf("\n\n_Finding on lines %s; this comment is placed on the part the diff shows._", lineSpan(start, end))
	}
	mark := "\n\n" + fpMarker
	desc := closeFences(report.Neutralize(f.Description, repoURL))
	if desc != "" {
		desc = "\n\n" + desc
	}
	if len(head)+len(desc)+tail.Len()+len(mark) > MaxCommentBody {
		if len(head)+tail.Len()+len(mark)+200 > MaxCommentBody {
			tail.Reset()
			tail.WriteString("\n\n_(suggestion too long to show)_")
		}
		desc = clipText(desc, MaxCommentBody-len(head)-tail.Len()-len(mark), "\n\n_(description cut)_")
	}
	return head + desc + tail.String() + mark
}

func lineSpan(start, end int) string {
	if end <= start {
		return strconv.Itoa(start)
	}
	return strconv.Itoa(start) + "–" + strconv.Itoa(end)
}

// reviewBody is the header followed by the findings that are not inline
// comments, cut to MaxCommentBody.
func (p plan) reviewBody(header string) string {
	s, _ := p.renderBody(header)
	return s
}

// renderBody returns the body and how many entries were left out for
// length.
func (p plan) renderBody(header string) (string, int) {
	const maxEntry = 4000
	var b strings.Builder
	b.WriteString(strings.TrimSpace(header))
	if len(p.body) == 0 {
		if b.Len() == 0 {
			b.WriteString("warden review")
		}
		return clipText(b.String(), MaxCommentBody, "\n\n_(cut)_"), 0
	}
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, "**Findings not posted as inline comments (%d)**\n", len(p.body))
	s := clipText(b.String(), MaxCommentBody/2, "\n\n_(cut)_\n")
	const reserve = 200 // for the "N more" line
	for i, e := range p.body {
		entry := bodyEntryText(e, p.repoURL, maxEntry, p.markOf(e.f))
		if len(s)+len(entry)+reserve > MaxCommentBody {
			n := len(p.body) - i
			return s + fmt.Sprintf("\n_…and %d more %s not shown here for length; every finding is in the check run._\n",
				n, map[bool]string{true: "finding", false: "findings"}[n == 1]), n
		}
		s += entry
	}
	return s, 0
}

// markOf is f's marker: p.mark, or unsealed for a plan made without one.
func (p plan) markOf(f review.Finding) string {
	if p.mark == nil {
		return marker(f)
	}
	return p.mark(f)
}

func bodyEntryText(e bodyEntry, repoURL string, maxLen int, fpMarker string) string {
	f := e.f
	loc := report.InlineCode(report.OneLine(normPath(f.Path)))
	if s, end := lines(f); s > 0 {
		loc += " line " + lineSpan(s, end)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n- **[%s] %s** — %s", f.Severity, report.Neutralize(report.OneLine(f.Title), repoURL), loc)
	if f.Skill != "" {
		b.WriteString(" · " + report.InlineCode(report.OneLine(f.Skill)))
	}
	fmt.Fprintf(&b, " _(%s)_", e.why)
	if d := report.OneLine(report.Neutralize(f.Description, repoURL)); d != "" {
		b.WriteString("\n  " + clipBytes(d, maxLen, "…"))
	}
	b.WriteString(" " + fpMarker + "\n")
	return b.String()
}
