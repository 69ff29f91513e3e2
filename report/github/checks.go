package github

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	gh "github.com/google/go-github/v62/github"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// MaxOutputText caps output.summary and output.text: "Maximum length: 65535
// characters" (ChecksCreateRequestOutput in github/rest-api-description);
// GitHub answers 422 "Only 65535 characters are allowed; 250684 were
// supplied" above it (reviewdog service/github/check.go). It is measured in
// bytes here, which is never less than the count of characters in any unit,
// so a cut text always fits.
const MaxOutputText = 65535

// MaxAnnotationsPerRequest: "The Checks API limits the number of
// annotations to a maximum of 50 per API request. To create more than 50
// annotations, you have to make multiple requests to the Update a check run
// endpoint. Each time you update the check run, annotations are appended"
// (REST docs, output.annotations). Above it GitHub answers 422 "No more than
// 50 items are allowed; 143 were supplied" (qiniu/reviewbot#258).
const MaxAnnotationsPerRequest = 50

// Annotation field limits, from the REST docs of the annotations object:
// message and raw_details "The maximum size is 64 KB", title "The maximum
// size is 255 characters".
const (
	maxAnnotationMessage = 64 * 1024
	maxAnnotationTitle   = 255
)

// CheckOutput is what a completed check run shows.
type CheckOutput struct {
	// Conclusion is one of Conclusions; see Conclusion.
	Conclusion string
	// Title is the one-line result; see Title. Cut to MaxTitle bytes.
	Title string
	// Summary is Markdown, cut to MaxOutputText bytes with a note when
	// longer.
	Summary string
	// Annotations become check-run annotations: the first
	// MaxAnnotationsPerRequest with the completion, the rest in follow-up
	// updates, which GitHub appends. Findings without a path are skipped
	// (they remain in the summary).
	Annotations []review.Finding
	// DetailsURL links the check run to, e.g., the workflow run.
	DetailsURL string
	// Actions are the check run's buttons (requested actions): a press
	// sends a check_run requested_action event with the identifier.
	Actions []CheckAction
	// Records are the texts of hidden records for later runs (the review's
	// state, AcceptableRecord, an acceptance): CompleteCheckRun seals each
	// (Client.Mark) and writes it on a line of its own at the very end of
	// the summary, after the summary is cut to size, where CheckRecords
	// reads them.
	Records []string
}

// CheckAction is a requested action: "label" at most 20 characters,
// "description" at most 40, "identifier" at most 20, three per check run
// (REST docs, "Create a check run", actions).
type CheckAction struct {
	Label, Description, Identifier string
}

// CreateCheckRun creates the check run name on headSHA with status
// in_progress and returns its id.
func (c *Client) CreateCheckRun(ctx context.Context, name, headSHA string) (int64, error) {
	id, _, err := c.StartCheckRun(ctx, name, headSHA, "")
	return id, err
}

// StartCheckRun is CreateCheckRun with the integrator's externalID (""
// for none), and says which GitHub App the check run belongs to: the
// token's (GitHub Actions' is "github-actions").
func (c *Client) StartCheckRun(ctx context.Context, name, headSHA, externalID string) (id int64, app string, err error) {
	const op = "create check run"
	if name == "" || headSHA == "" {
		return 0, "", fmt.Errorf("%s: name and head SHA are required", op)
	}
	opts := gh.CreateCheckRunOptions{Name: name, HeadSHA: headSHA, Status: gh.String("in_progress")}
	if externalID != "" {
		opts.ExternalID = gh.String(externalID)
	}
	// GitHub API docs: https://docs.github.com/rest/checks/runs#create-a-check-run
	run, _, err := c.gh.Checks.CreateCheckRun(ctx, c.owner, c.repo, opts)
	if err != nil {
		return 0, "", c.fail(op, true, err)
	}
	return run.GetID(), run.GetApp().GetSlug(), nil
}

// checkRunUpdate is the body of "Update a check run". go-github's
// UpdateCheckRunOptions always sends "name", which would rename the run
// when empty; this sends only what is set.
type checkRunUpdate struct {
	Status     string               `json:"status,omitempty"`
	Conclusion string               `json:"conclusion,omitempty"`
	DetailsURL string               `json:"details_url,omitempty"`
	Output     *checkRunOutput      `json:"output,omitempty"`
	Actions    []*gh.CheckRunAction `json:"actions,omitempty"`
}

type checkRunOutput struct {
	Title       string                   `json:"title"`
	Summary     string                   `json:"summary"`
	Annotations []*gh.CheckRunAnnotation `json:"annotations,omitempty"`
}

// CompleteCheckRun completes check run id with out: the conclusion, title,
// summary and the first MaxAnnotationsPerRequest annotations in one update,
// then the remaining annotations in follow-up updates of at most
// MaxAnnotationsPerRequest each. An error in a follow-up leaves the run
// completed; the error says how many annotations were sent.
func (c *Client) CompleteCheckRun(ctx context.Context, id int64, out CheckOutput) error {
	const op = "complete check run"
	if !slices.Contains(Conclusions, out.Conclusion) {
		return fmt.Errorf("%s: conclusion %q is not one of %s", op, out.Conclusion, strings.Join(Conclusions, ", "))
	}
	title := clipTitle(out.Title)
	if title == "" {
		title = out.Conclusion
	}
	summary := clipText(stripRecords(out.Summary), MaxOutputText-recordsLen(out.Records),
		"\n\n_(summary cut: GitHub allows at most 65,535 characters)_\n")
	if len(out.Records) > 0 {
		summary = strings.TrimRight(summary, "\n") + "\n"
		for _, r := range out.Records {
			summary += "\n" + c.Mark(r)
		}
		summary += "\n"
	}
	anns := annotations(out.Annotations, c.repoURL())
	if n := len(out.Annotations) - len(anns); n > 0 {
		c.log.Warn("findings without a path are not annotated", "count", n)
	}
	first, rest := anns, [][]*gh.CheckRunAnnotation(nil)
	if len(anns) > MaxAnnotationsPerRequest {
		first = anns[:MaxAnnotationsPerRequest]
		rest = slices.Collect(slices.Chunk(anns[MaxAnnotationsPerRequest:], MaxAnnotationsPerRequest))
	}
	body := checkRunUpdate{
		Status:     "completed",
		Conclusion: out.Conclusion,
		DetailsURL: out.DetailsURL,
		Output:     &checkRunOutput{Title: title, Summary: summary, Annotations: first},
	}
	for _, a := range out.Actions {
		body.Actions = append(body.Actions, &gh.CheckRunAction{Label: a.Label, Description: a.Description, Identifier: a.Identifier})
	}
	// GitHub API docs: https://docs.github.com/rest/checks/runs#update-a-check-run
	if err := c.updateCheckRun(ctx, id, body); err != nil {
		return c.fail(op, true, err)
	}
	sent := len(first)
	for _, chunk := range rest {
		// Follow-ups repeat title and summary, which output requires, and
		// add annotations, which GitHub appends.
		// GitHub API docs: https://docs.github.com/rest/checks/runs#update-a-check-run
		err := c.updateCheckRun(ctx, id, checkRunUpdate{
			Output: &checkRunOutput{Title: title, Summary: summary, Annotations: chunk},
		})
		if err != nil {
			return c.fail(fmt.Sprintf("%s: add annotations (%d of %d sent)", op, sent, len(anns)), true, err)
		}
		sent += len(chunk)
	}
	return nil
}

func (c *Client) updateCheckRun(ctx context.Context, id int64, body checkRunUpdate) error {
	u := fmt.Sprintf("repos/%s/%s/check-runs/%d", c.owner, c.repo, id)
	req, err := c.gh.NewRequest(http.MethodPatch, u, body)
	if err != nil {
		return err
	}
	_, err = c.gh.Do(ctx, req, nil)
	return err
}

// annotations turns findings into check-run annotations, most severe first:
// critical and high are failures, medium and low warnings, info notices.
// Model text is defanged (report.Defang): mentions, markup and links to
// anywhere but repoURL are made inert.
func annotations(fs []review.Finding, repoURL string) []*gh.CheckRunAnnotation {
	var out []*gh.CheckRunAnnotation
	for _, f := range sortedBySeverity(fs) {
		path := strings.TrimPrefix(strings.TrimSpace(f.Path), "./")
		if path == "" {
			continue
		}
		start, end := lines(f)
		if start == 0 {
			start, end = 1, 1 // a finding about the whole file
		}
		title := clipBytes(fmt.Sprintf("[%s] %s", f.Severity, report.OneLine(report.Defang(f.Title, repoURL)))+approximate(f), maxAnnotationTitle, "…")
		msg := report.Defang(f.Description, repoURL)
		if msg == "" {
			msg = report.OneLine(report.Defang(f.Title, repoURL))
		}
		a := &gh.CheckRunAnnotation{
			Path:            gh.String(path),
			StartLine:       gh.Int(start),
			EndLine:         gh.Int(end),
			AnnotationLevel: gh.String(report.LevelOf(f.Severity).CheckRun()),
			Title:           gh.String(title),
			Message:         gh.String(clipBytes(msg, maxAnnotationMessage, "…")),
		}
		if f.Suggestion != "" {
			a.RawDetails = gh.String(clipBytes("Suggested replacement:\n"+report.Defang(f.Suggestion, repoURL), maxAnnotationMessage, "…"))
		}
		out = append(out, a)
	}
	return out
}

// lines normalizes a finding's line range: start 0 means "no line"; end is
// at least start.
func lines(f review.Finding) (start, end int) {
	if f.StartLine <= 0 {
		return 0, 0
	}
	return f.StartLine, max(f.StartLine, f.EndLine)
}

func sortedBySeverity(fs []review.Finding) []review.Finding {
	out := slices.Clone(fs)
	slices.SortStableFunc(out, func(a, b review.Finding) int { return int(b.Severity - a.Severity) })
	return out
}

// clipText cuts s to at most n bytes, ending with note, on a rune boundary
// and, when possible, at a line end.
func clipText(s string, n int, note string) string {
	if len(s) <= n {
		return s
	}
	cut := clipBytes(s, max(0, n-len(note)), "")
	if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
		cut = cut[:i]
	}
	for len(closeFences(cut))+len(note) > n && cut != "" {
		cut = clipBytes(cut, max(0, len(cut)-64), "")
	}
	return closeFences(cut) + note
}

// approximate is " (approximate lines)" for a finding whose lines were
// guessed (review.Finding.Clamped), else "".
func approximate(f review.Finding) string {
	if f.Clamped {
		return " (" + report.ApproximateLines + ")"
	}
	return ""
}

// CheckRunInfo is a check run as GitHub lists it.
type CheckRunInfo struct {
	ID                 int64
	HeadSHA            string
	Status, Conclusion string
	Title, Summary     string
	App                string // the slug of the app that created it
}

// LatestCheckRun returns the newest check run named name on commit sha:
// the one GitHub shows and branch protection gates on ("latest" is the
// listing's default filter). ok is false when there is none.
func (c *Client) LatestCheckRun(ctx context.Context, name, sha string) (CheckRunInfo, bool, error) {
	op := fmt.Sprintf("list check runs of %.7s", sha)
	opts := &gh.ListCheckRunsOptions{CheckName: gh.String(name), ListOptions: gh.ListOptions{PerPage: 100}}
	// GitHub API docs: https://docs.github.com/rest/checks/runs#list-check-runs-for-a-git-reference
	res, _, err := c.gh.Checks.ListCheckRunsForRef(ctx, c.owner, c.repo, sha, opts)
	if err != nil {
		return CheckRunInfo{}, false, c.fail(op, false, err)
	}
	for _, run := range res.CheckRuns {
		if run.GetName() != name {
			continue
		}
		return CheckRunInfo{
			ID: run.GetID(), HeadSHA: run.GetHeadSHA(), Status: run.GetStatus(), Conclusion: run.GetConclusion(),
			Title: run.GetOutput().GetTitle(), Summary: run.GetOutput().GetSummary(), App: run.GetApp().GetSlug(),
		}, true, nil
	}
	return CheckRunInfo{}, false, nil
}
