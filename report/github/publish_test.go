package github

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/review"
)

// newPublisher is a Publisher of testPR at testHead on c, collecting its
// warnings, workflow commands and log.
func newPublisher(c testClient, th review.Thresholds) (*Publisher, *[]string, *bytes.Buffer) {
	var warnings []string
	var commands bytes.Buffer
	p := &Publisher{
		Client: c.Client, CheckName: "warden", HeadSHA: testHead, PullRequest: testPR,
		Anchors: AnchorsFromFiles(toFiles(testFiles)), Thresholds: th, IncompleteConclusion: ConclusionNeutral,
		Summary: func(r *review.Report) (string, error) { return "summary of " + string(r.Outcome), nil },
		Budget:  time.Minute, Started: time.Now(),
		ReadOnlyHint: "read-only", Commands: &commands, Log: &bytes.Buffer{},
		Warn: func(f string, a ...any) { warnings = append(warnings, fmt.Sprintf(f, a...)) },
	}
	return p, &warnings, &commands
}

func completeReport(fs ...review.Finding) *review.Report {
	return &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete, Findings: fs,
		Summary: review.Summary{Planned: 1, Reviewed: 1, Findings: len(fs)}}
}

// TestPublisherPublishes: one check run, completed once with the report's
// conclusion, title, summary and the annotations at report-on; one review
// whose event follows the one rule (REQUEST_CHANGES only when a finding
// blocks).
func TestPublisherPublishes(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	th := review.Thresholds{FailOn: review.SeverityHigh, ReportOn: review.SeverityMedium, MaxFindings: 50}
	p, warnings, commands := newPublisher(c, th)
	p.RequestChanges = true
	p.Begin(t.Context())
	rep := completeReport(findingsOf(review.SeverityHigh, review.SeverityLow)...)
	if err := p.Publish(t.Context(), rep); err != nil {
		t.Fatal(err)
	}
	p.Complete(t.Context(), ErrorOutput(fmt.Errorf("late"), "x", "y")) // completed once: ignored
	runs := c.fake.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("%d check runs, want 1", len(runs))
	}
	cr := runs[0]
	if cr.Conclusion != ConclusionFailure || cr.Title != Title(rep, false) || cr.Summary != "summary of complete" || len(cr.Annotations) != 1 {
		t.Errorf("check run = %s %q %q with %d annotations; want failure, %q, the summary, 1 annotation (low is below report-on)",
			cr.Conclusion, cr.Title, cr.Summary, len(cr.Annotations), Title(rep, false))
	}
	reviews := c.fake.Reviews(testPR)
	if len(reviews) != 1 || reviews[0].Event != EventRequestChanges {
		t.Errorf("reviews = %+v, want one REQUEST_CHANGES", reviews)
	}
	if len(*warnings) != 0 || commands.Len() != 0 {
		t.Errorf("warnings %q, workflow commands %q; want none with a write token", *warnings, commands.String())
	}
}

// TestPublisherReadOnly: a token that cannot write makes the publisher
// fall back to workflow-command annotations, and say so.
func TestPublisherReadOnly(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultReadOnlyToken)
	p, warnings, commands := newPublisher(c, review.Thresholds{FailOn: review.SeverityHigh})
	p.Begin(t.Context())
	if err := p.Publish(t.Context(), completeReport(findingsOf(review.SeverityMedium)...)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(commands.String(), "::warning ") {
		t.Errorf("workflow commands = %q, want the finding as a warning", commands.String())
	}
	if len(*warnings) != 1 || !strings.Contains((*warnings)[0], "read-only") {
		t.Errorf("warnings = %q, want the read-only hint", *warnings)
	}
	if len(c.fake.Reviews(testPR)) != 0 {
		t.Errorf("a review was posted with a read-only token")
	}
}

// TestPublisherCancelledAndStale: a cancelled review's check run says
// cancelled, and still completes (publishing has its own deadline); a stale
// report gets a Stale: title and no review.
func TestPublisherCancelledAndStale(t *testing.T) {
	t.Parallel()
	c := start(t, newFake(t), fakegithub.DefaultToken)
	p, _, _ := newPublisher(c, review.Thresholds{FailOn: review.SeverityHigh})
	p.Stale, p.NoReview = true, true
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	rep := completeReport(findingsOf(review.SeverityHigh)...)
	if err := p.Publish(ctx, rep); err != nil {
		t.Fatal(err)
	}
	runs := c.fake.CheckRuns()
	if len(runs) != 1 || runs[0].Conclusion != ConclusionCancelled || !strings.HasPrefix(runs[0].Title, "Stale: Cancelled: ") {
		t.Errorf("check runs = %+v, want one cancelled, titled Stale: Cancelled:", runs)
	}
	if len(c.fake.Reviews(testPR)) != 0 {
		t.Errorf("a stale report posted a review")
	}
}
