package review

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/skills"
)

// answerOf is an answer with n findings of severity sev on line 10, each
// also claiming another file (which validate ignores).
func answerOf(n int, sev string) string {
	fs := make([]map[string]any, n)
	for i := range fs {
		fs[i] = map[string]any{"severity": sev, "title": fmt.Sprint("t", i), "description": "d",
			"path": "/etc/passwd", "file": "other.go", "start_line": 10, "end_line": 10}
	}
	b, _ := json.Marshal(map[string]any{"findings": fs})
	return string(b)
}

// TestRunCountsDroppedFindings checks that every bound that leaves
// findings out of the report counts them in Summary.FindingsDropped: the
// per-answer cap, report_on, max_findings, findings without text.
func TestRunCountsDroppedFindings(t *testing.T) {
	t.Parallel()
	plan := &hunks.Plan{Chunks: []hunks.Chunk{
		{Path: "svc/a.go", Language: "Go", StartLine: 10, EndLine: 12, Priority: 2, Lines: []hunks.Line{{Op: hunks.Add, Text: "x", NewLine: 10}}},
		{Path: "svc/b.go", Language: "Go", StartLine: 10, EndLine: 12, Priority: 1, Lines: []hunks.Line{{Op: hunks.Add, Text: "y", NewLine: 10}}},
	}}
	m := &fakeModel{script: func(req *execution.Request) fakeopenai.Answer {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "svc/a.go") {
			// 60 high: 10 over the answer cap; plus two with no text.
			a := answerOf(MaxFindingsPerAnswer+10, "high")
			return fakeopenai.Answer{Content: strings.Replace(a, `[{`, `[{"title":"","description":" "},{"severity":"low"},{`, 1)}
		}
		return fakeopenai.Answer{Content: answerOf(5, "low")} // below report_on
	}}
	eng := newEngine(t, m, nil, nil)
	opts := Options{Skills: []*skills.Skill{{Name: "code-review", Instructions: "Find bugs."}}, ReportOn: SeverityMedium, MaxFindings: 20}
	p, err := NewPlan(plan, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(t.Context(), p, eng, opts)
	want := FindingsDropped{AnswerCap: 10, BelowReportOn: 5, MaxFindings: MaxFindingsPerAnswer - 20, NoText: 2}
	if diff := cmp.Diff(want, r.Summary.FindingsDropped); diff != "" {
		t.Errorf("Run() findings_dropped (-want +got):\n%s", diff)
	}
	if len(r.Findings) != 20 || r.Summary.Findings != 20 {
		t.Errorf("Run() kept %d findings (summary %d), want max_findings 20", len(r.Findings), r.Summary.Findings)
	}
	for _, f := range r.Findings {
		if f.Path != "svc/a.go" {
			t.Errorf("finding on %q, want the item's own file svc/a.go", f.Path)
		}
	}
}

// A batched answer is untrusted like any other: its findings land on the
// chunk's own file and lines whatever path or lines they claim, and
// findings naming no skill of the batch are counted, not kept.
func TestBatchFindingsStayOnTheItem(t *testing.T) {
	t.Parallel()
	answer := `{"findings":[` +
		`{"skill":"code-review","severity":"high","title":"a","description":"d","path":"/etc/passwd","file":"x.go","start_line":500,"end_line":900},` +
		`{"skill":"security-review","severity":"high","title":"b","description":"d","path":"../other.go","start_line":11,"end_line":11},` +
		`{"skill":"evil-review","severity":"critical","title":"c","description":"d","start_line":11,"end_line":11}]}`
	m := &fakeModel{script: always(fakeopenai.Answer{Content: answer})}
	eng := newEngine(t, m, nil, nil)
	opts := Options{Skills: threeSkills(), BatchSkills: true}
	p, err := NewPlan(oneChunk(), eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(t.Context(), p, eng, opts)
	type loc struct {
		Skill, Path string
		Start, End  int
		Clamped     bool
	}
	var got []loc
	for _, f := range r.Findings {
		got = append(got, loc{f.Skill, f.Path, f.StartLine, f.EndLine, f.Clamped})
	}
	want := []loc{{"security-review", "svc/a.go", 11, 11, false}, {"code-review", "svc/a.go", 12, 12, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Run(batch) findings (-want +got):\n%s", diff)
	}
	if d := r.Summary.FindingsDropped; d.UnknownSkill != 1 {
		t.Errorf("findings_dropped = %+v, want unknown_skill 1", d)
	}
}

// An answer over MaxAnswerBytes is not read: through the real engine the
// item fails bad_response, and its attempts say why.
func TestRunAnswerOverCapFailsBadResponse(t *testing.T) {
	t.Parallel()
	huge := `{"findings":[]}` + strings.Repeat(" ", MaxAnswerBytes)
	m := &fakeModel{script: always(fakeopenai.Answer{Content: huge})}
	eng := newEngine(t, m, nil, func(p *execution.Policy) { p.Backoff = 1 })
	opts := Options{Skills: []*skills.Skill{{Name: "code-review", Instructions: "Find bugs."}}}
	p, err := NewPlan(oneChunk(), eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := Run(t.Context(), p, eng, opts)
	it := r.Items[0]
	if it.Status != StatusFailed || it.Reason != "bad_response" || r.Outcome != OutcomeProviderUnavailable {
		t.Fatalf("item %s/%s, outcome %s; want failed/bad_response, provider-unavailable", it.Status, it.Reason, r.Outcome)
	}
	if len(it.Attempts) == 0 || it.Attempts[0].Class != "bad_response" {
		t.Fatalf("attempts = %+v, want bad_response", it.Attempts)
	}
}
