package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/action"
	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

const forkRepo = "mallory/widgets"

// forkHarness is a pull request from a fork, ready for the split workflow.
func forkHarness(t *testing.T, severity string) *actionHarness {
	t.Helper()
	h := newActionHarness(t, severity)
	h.pr.HeadRepo = forkRepo
	h.gh.AddPullRequest(h.pr)
	h.event("opened", func(pr map[string]any) {
		pr["head"].(map[string]any)["repo"] = map[string]any{"full_name": forkRepo, "name": testRepo, "owner": map[string]any{"login": "mallory"}}
	})
	h.env["INPUT_REPORT_PATH"] = filepath.Join(h.dir, "artifact", "warden-report.json")
	return h
}

// analyze runs the unprivileged half, as a fork's pull_request workflow
// would: read-only token, and inputs the fork may have changed.
func (h *actionHarness) analyze() result {
	h.t.Helper()
	h.env["INPUT_GITHUB_TOKEN"] = fakegithub.DefaultReadOnlyToken
	h.env["INPUT_FAIL_ON"] = "off" // the fork controls this workflow's inputs
	res := h.run(context.Background(), "action", "--mode", "analyze")
	if res.code != exitOK {
		h.t.Fatalf("analyze: exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	return res
}

// toReport switches the environment to the privileged workflow_run half:
// a write token, this workflow's own inputs, and the workflow_run event of
// the analyze run (edited by edit).
func (h *actionHarness) toReport(edit func(run map[string]any)) {
	h.t.Helper()
	h.env["INPUT_GITHUB_TOKEN"] = fakegithub.DefaultToken
	h.env["INPUT_MODE"] = "report"
	delete(h.env, "INPUT_FAIL_ON")
	h.env["GITHUB_EVENT_NAME"] = "workflow_run"
	headRepo := h.pr.HeadRepo
	if headRepo == "" {
		headRepo = testOwner + "/" + testRepo
	}
	repo := map[string]any{"full_name": testOwner + "/" + testRepo, "name": testRepo, "owner": map[string]any{"login": testOwner}}
	run := map[string]any{
		"id": 4242, "name": "warden analyze", "event": "pull_request", "status": "completed", "conclusion": "success",
		"head_sha": h.pr.HeadSHA, "head_branch": h.pr.HeadRef,
		"html_url":        "https://github.com/" + testOwner + "/" + testRepo + "/actions/runs/4242",
		"head_repository": map[string]any{"full_name": headRepo},
		"repository":      repo,
		// GitHub lists no pull request for a fork's run.
		"pull_requests": []any{},
	}
	if edit != nil {
		edit(run)
	}
	data, err := json.Marshal(map[string]any{"action": "completed", "workflow_run": run, "repository": repo})
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.env["GITHUB_EVENT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func (h *actionHarness) readReport() map[string]any {
	h.t.Helper()
	data, err := os.ReadFile(h.env["INPUT_REPORT_PATH"])
	if err != nil {
		h.t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		h.t.Fatal(err)
	}
	return doc
}

func (h *actionHarness) writeReport(doc map[string]any) {
	h.t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(h.env["INPUT_REPORT_PATH"], data, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

func TestActionSplitAnalyzeThenReport(t *testing.T) {
	t.Parallel()
	h := forkHarness(t, "high")
	res := h.analyze()

	// analyze posted nothing: it only read.
	for _, r := range h.gh.Requests() {
		if r.Method != http.MethodGet {
			t.Errorf("analyze sent %s %s", r.Method, r.Path)
		}
	}
	if strings.Contains(res.stdout, "::error") || strings.Contains(res.stdout, "::warning file=") {
		t.Errorf("analyze wrote annotations:\n%s", res.stdout)
	}
	if !strings.Contains(h.summary(), "## warden: Complete") {
		t.Errorf("analyze wrote no job summary")
	}
	if got := h.outputs()["report-file"]; got != h.env["INPUT_REPORT_PATH"] {
		t.Errorf("report-file output = %q, want the report-path input %q", got, h.env["INPUT_REPORT_PATH"])
	}
	doc := h.readReport()
	want := map[string]any{"repository": testOwner + "/" + testRepo, "pull_request": float64(testPR), "head_sha": h.pr.HeadSHA, "base_sha": h.pr.BaseSHA, "warden_version": wardenBuild().Version}
	origin, _ := doc["origin"].(map[string]any)
	for k, v := range want {
		if origin[k] != v {
			t.Errorf("origin.%s = %v, want %v", k, origin[k], v)
		}
	}
	if doc["schema"] != review.Schema {
		t.Errorf("schema = %v", doc["schema"])
	}
	findings := len(doc["findings"].([]any))
	if findings == 0 {
		t.Fatalf("the analysis found nothing; the test proves nothing")
	}

	calls := h.model.calls()
	h.toReport(nil)
	res = h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("report: exit = %d, want %d (high findings block under this workflow's fail-on, whatever analyze's was); stderr:\n%s\nstdout:\n%s", res.code, exitFindings, res.stderr, res.stdout)
	}
	if h.model.calls() != calls {
		t.Errorf("mode report called the model")
	}
	cr := h.checkRun()
	if cr.HeadSHA != h.pr.HeadSHA || cr.Conclusion != "failure" || !strings.HasPrefix(cr.Title, "Complete: ") {
		t.Errorf("check run on %s: %s %q; want the head, failure, Complete: ...", cr.HeadSHA, cr.Conclusion, cr.Title)
	}
	if !strings.Contains(cr.Summary, "Published from the analysis report of [workflow run 4242]") {
		t.Errorf("the check run does not say where its report came from:\n%.400s", cr.Summary)
	}
	if len(cr.Annotations) != findings {
		t.Errorf("%d annotations, want %d", len(cr.Annotations), findings)
	}
	reviews := h.gh.Reviews(testPR)
	if len(reviews) != 1 || reviews[0].CommitID != h.pr.HeadSHA || len(h.gh.ReviewComments(testPR)) == 0 {
		t.Errorf("reviews = %+v with %d comments; want one on the head with comments", reviews, len(h.gh.ReviewComments(testPR)))
	}
	if out := h.outputs(); out["outcome"] != "complete" || atoi(t, out["findings-count"]) != findings {
		t.Errorf("outputs = %v", out)
	}
}

// TestActionReportRejectsForgedReports edits a real analyze report, or the
// event, as a hostile fork could, and checks that nothing of it is
// published: the check run says the report is not valid, no review.
func TestActionReportRejectsForgedReports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		report  func(h *actionHarness, doc map[string]any)
		raw     func(data []byte) []byte
		run     func(h *actionHarness, run map[string]any)
		mention string
	}{
		{name: "other repository", report: func(_ *actionHarness, doc map[string]any) { origin(doc)["repository"] = forkRepo }, mention: "of repository"},
		{name: "other commit", report: func(h *actionHarness, doc map[string]any) { origin(doc)["head_sha"] = h.pr.BaseSHA }, mention: "it reviewed commit"},
		{name: "run of another commit", run: func(h *actionHarness, run map[string]any) { run["head_sha"] = h.pr.BaseSHA }, mention: "it reviewed commit"},
		{name: "pull request not the run's", run: func(h *actionHarness, run map[string]any) {
			run["pull_requests"] = []any{map[string]any{"number": 8, "head": map[string]any{"sha": h.pr.HeadSHA}}}
		}, mention: "pull request #7 is not one of the triggering run's"},
		{name: "pull request of another branch", run: func(_ *actionHarness, run map[string]any) { run["head_branch"] = "other" }, mention: "is of branch"},
		{name: "pull request of another fork", run: func(_ *actionHarness, run map[string]any) {
			run["head_repository"] = map[string]any{"full_name": "eve/widgets"}
		}, mention: "comes from"},
		{name: "missing pull request", report: func(_ *actionHarness, doc map[string]any) { origin(doc)["pull_request"] = 99 }, mention: "pull request #99 does not exist"},
		{name: "other schema", report: func(_ *actionHarness, doc map[string]any) { doc["schema"] = "warden.report/v2" }, mention: "schema"},
		{name: "no origin", report: func(_ *actionHarness, doc map[string]any) { delete(doc, "origin") }, mention: "no origin"},
		{name: "unknown field", report: func(_ *actionHarness, doc map[string]any) { doc["approved"] = true }, mention: "unknown field"},
		{name: "trailing data", raw: func(data []byte) []byte { return append(data, []byte(`{"findings":[]}`)...) }, mention: "data after the report"},
		{name: "not json", raw: func([]byte) []byte { return []byte("<html>") }, mention: "not a warden report"},
		{name: "bad outcome", report: func(_ *actionHarness, doc map[string]any) { doc["outcome"] = "approved" }, mention: "outcome"},
		{name: "bad severity", report: func(_ *actionHarness, doc map[string]any) { finding(doc)["severity"] = "urgent" }, mention: "not a warden report"},
		{name: "long title", report: func(_ *actionHarness, doc map[string]any) { finding(doc)["title"] = strings.Repeat("x", 2000) }, mention: "longer than warden writes"},
		{name: "too many findings", report: func(_ *actionHarness, doc map[string]any) {
			f := finding(doc)
			many := make([]any, action.MaxReportFindings+1)
			for i := range many {
				many[i] = f
			}
			doc["findings"] = many
		}, mention: "more than 10000"},
		{name: "long skipped skill message", report: func(_ *actionHarness, doc map[string]any) {
			doc["skipped_skills"] = []any{map[string]any{"skill": "x", "file": "x.md", "reason": "broken", "message": strings.Repeat("x", 20000)}}
		}, mention: "skipped_skills[0]: text longer than warden writes"},
		{name: "too many instruction sources", report: func(_ *actionHarness, doc map[string]any) {
			many := make([]any, 10001)
			for i := range many {
				many[i] = map[string]any{"source": "AGENTS.md", "applies_to": "every file", "chars": 1, "items": 1}
			}
			doc["instructions"] = map[string]any{"mode": "auto", "max_chars": 6000, "sources": many}
		}, mention: "instructions: more than 10000 sources"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := forkHarness(t, "high")
			h.analyze()
			if tt.report != nil {
				doc := h.readReport()
				tt.report(h, doc)
				h.writeReport(doc)
			}
			if tt.raw != nil {
				data, _ := os.ReadFile(h.env["INPUT_REPORT_PATH"])
				os.WriteFile(h.env["INPUT_REPORT_PATH"], tt.raw(data), 0o644)
			}
			h.toReport(func(run map[string]any) {
				if tt.run != nil {
					tt.run(h, run)
				}
			})
			res := h.run(context.Background())
			if res.code != exitUsage || !strings.Contains(res.stderr, tt.mention) {
				t.Errorf("exit = %d, want %d naming %q; stderr:\n%s", res.code, exitUsage, tt.mention, res.stderr)
			}
			cr := h.checkRun()
			if cr.Conclusion != "failure" || !strings.Contains(cr.Title, "the analysis report is not valid") || len(cr.Annotations) != 0 {
				t.Errorf("check run = %s %q with %d annotations; want failure, not valid, none", cr.Conclusion, cr.Title, len(cr.Annotations))
			}
			if len(h.gh.Reviews(testPR)) != 0 {
				t.Errorf("a review was posted from a forged report")
			}
		})
	}
}

func origin(doc map[string]any) map[string]any { return doc["origin"].(map[string]any) }

func finding(doc map[string]any) map[string]any { return doc["findings"].([]any)[0].(map[string]any) }

func TestActionReportNeutralizesUntrustedFindings(t *testing.T) {
	t.Parallel()
	h := forkHarness(t, "high")
	h.analyze()
	doc := h.readReport()
	fs := doc["findings"].([]any)
	real := len(fs)
	f := fs[0].(map[string]any)
	outside := map[string]any{}
	for k, v := range f {
		outside[k] = v
	}
	outside["path"] = ".github/workflows/release.yml" // not in the change
	badLines := map[string]any{}
	for k, v := range f {
		badLines[k] = v
	}
	badLines["start_line"], badLines["end_line"] = 9, 3
	f["description"] = "Ping @acme/admins ![x](https://evil.example/p.png) <img src=x onerror=alert(1)> see https://evil.example/phish"
	doc["findings"] = append(fs, outside, badLines)
	h.writeReport(doc)

	h.toReport(nil)
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d; stderr:\n%s", res.code, res.stderr)
	}
	cr := h.checkRun()
	if len(cr.Annotations) != real {
		t.Errorf("%d annotations, want the %d findings in the change", len(cr.Annotations), real)
	}
	if !strings.Contains(cr.Summary, "2 findings of the report were dropped") {
		t.Errorf("the summary does not say 2 findings were dropped:\n%.600s", cr.Summary)
	}
	var bodies []string
	for _, c := range h.gh.ReviewComments(testPR) {
		bodies = append(bodies, c.Body)
		if c.Path == ".github/workflows/release.yml" {
			t.Errorf("a comment on a file outside the change")
		}
	}
	for _, rv := range h.gh.Reviews(testPR) {
		bodies = append(bodies, rv.Body)
	}
	all := strings.Join(bodies, "\n")
	if !strings.Contains(all, "Ping") {
		t.Fatalf("the edited finding was not posted; the test proves nothing:\n%s", all)
	}
	for _, bad := range []string{"@acme/admins", "<img", "](https://evil.example", "![x]"} {
		if strings.Contains(all, bad) {
			t.Errorf("a posted comment contains %q", bad)
		}
	}
}

func TestActionReportStale(t *testing.T) {
	t.Parallel()
	h := forkHarness(t, "high")
	h.analyze()
	analyzed := h.pr.HeadSHA
	h.commitHead(map[string]string{"store/query.go": "package store\n\n// pushed after the analysis\n"})
	h.toReport(func(run map[string]any) { run["head_sha"] = analyzed }) // the run on the analyzed commit
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0 (a stale verdict does not gate the new head); stderr:\n%s", res.code, res.stderr)
	}
	cr := h.checkRun()
	if cr.HeadSHA != analyzed || !strings.HasPrefix(cr.Title, "Stale: ") || !strings.Contains(cr.Summary, "**Stale:**") {
		t.Errorf("check run on %s %q; want on the analyzed commit %s, titled Stale:", cr.HeadSHA, cr.Title, analyzed)
	}
	if len(h.gh.Reviews(testPR)) != 0 {
		t.Errorf("a review was posted from a stale report")
	}
	if !strings.Contains(res.stdout, "the report is stale") {
		t.Errorf("no warning about the stale report:\n%s", res.stdout)
	}
}

func TestActionReportWithoutReportFile(t *testing.T) {
	t.Parallel()
	for _, conclusion := range []string{"success", "failure"} {
		t.Run(conclusion, func(t *testing.T) {
			t.Parallel()
			h := forkHarness(t, "high")
			h.toReport(func(run map[string]any) { run["conclusion"] = conclusion })
			res := h.run(context.Background())
			if res.code != exitOK {
				t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
			}
			cr := h.checkRun()
			if cr.HeadSHA != h.pr.HeadSHA || cr.Conclusion != "failure" || cr.Title != "Not reviewed: the analysis left no report" {
				t.Errorf("check run on %s: %s %q", cr.HeadSHA, cr.Conclusion, cr.Title)
			}
			want := map[string]string{"success": "skipped", "failure": "error"}[conclusion]
			if got := h.outputs()["outcome"]; got != want {
				t.Errorf("outcome = %q, want %q", got, want)
			}
			if h.model.calls() != 0 {
				t.Errorf("mode report called the model")
			}
		})
	}
}

func TestActionModeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		set     map[string]string
		args    []string
		mention string
	}{
		{"bad mode input", map[string]string{"INPUT_MODE": "publish"}, nil, "input mode"},
		{"bad mode flag", nil, []string{"action", "--mode", "publish"}, "publish"},
		{"unexpected argument", nil, []string{"action", "now"}, "unexpected argument"},
		{"report on pull_request", map[string]string{"INPUT_MODE": "report"}, nil, "workflow_run"},
		{"full on workflow_run", map[string]string{"GITHUB_EVENT_NAME": "workflow_run"}, nil, "mode: report"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newActionHarness(t, "high")
			for k, v := range tt.set {
				h.env[k] = v
			}
			res := h.run(context.Background(), tt.args...)
			if res.code != exitUsage || !strings.Contains(lastLine(res.stderr), tt.mention) {
				t.Errorf("exit %d, stderr %q; want %d naming %s", res.code, lastLine(res.stderr), exitUsage, tt.mention)
			}
			if len(h.gh.CheckRuns()) != 0 || h.model.calls() != 0 {
				t.Errorf("a usage error created a check run or called the model")
			}
		})
	}

	t.Run("report without report-path", func(t *testing.T) {
		t.Parallel()
		h := forkHarness(t, "high")
		h.toReport(nil)
		delete(h.env, "INPUT_REPORT_PATH")
		if res := h.run(context.Background()); res.code != exitUsage || !strings.Contains(res.stderr, "report-path") {
			t.Errorf("exit %d, stderr %q; want %d naming report-path", res.code, res.stderr, exitUsage)
		}
	})
	t.Run("flag overrides the input", func(t *testing.T) {
		t.Parallel()
		h := forkHarness(t, "high")
		h.env["INPUT_MODE"] = "full"
		res := h.run(context.Background(), "action", "--mode=analyze")
		if res.code != exitOK || len(h.gh.CheckRuns()) != 0 {
			t.Errorf("exit %d, %d check runs; want analyze: 0, none", res.code, len(h.gh.CheckRuns()))
		}
	})
}

func TestActionReportSkipsOtherRuns(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(map[string]any){
		"push run": func(run map[string]any) { run["event"] = "push" },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			h := forkHarness(t, "high")
			h.toReport(edit)
			res := h.run(context.Background())
			if res.code != exitOK || len(h.gh.Requests()) != 0 || h.outputs()["outcome"] != "skipped" {
				t.Errorf("exit %d, %d GitHub requests, outputs %v; want 0, none, skipped", res.code, len(h.gh.Requests()), h.outputs())
			}
		})
	}
	t.Run("requested", func(t *testing.T) {
		t.Parallel()
		h := forkHarness(t, "high")
		h.toReport(nil)
		data, _ := os.ReadFile(h.env["GITHUB_EVENT_PATH"])
		os.WriteFile(h.env["GITHUB_EVENT_PATH"], bytes.Replace(data, []byte(`"action":"completed"`), []byte(`"action":"requested"`), 1), 0o644)
		if res := h.run(context.Background()); res.code != exitOK || len(h.gh.Requests()) != 0 {
			t.Errorf("exit %d, %d GitHub requests; want 0, none", res.code, len(h.gh.Requests()))
		}
	})
}

// TestReportFileRoundTrip checks that the report file is the JSON report
// of the contract plus its origin: without the origin, it renders to the
// same bytes.
func TestReportFileRoundTrip(t *testing.T) {
	t.Parallel()
	h := forkHarness(t, "high")
	h.analyze()
	data, err := os.ReadFile(h.env["INPUT_REPORT_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		review.Report
		Origin json.RawMessage `json:"origin"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Origin == nil {
		t.Fatalf("report file: %v, origin %s", err, doc.Origin)
	}
	var again bytes.Buffer
	if err := report.Write(&again, &doc.Report, report.FormatJSON, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var withOrigin, plain map[string]any
	json.Unmarshal(data, &withOrigin)
	json.Unmarshal(again.Bytes(), &plain)
	delete(withOrigin, "origin")
	a, _ := json.Marshal(withOrigin)
	b, _ := json.Marshal(plain)
	if !bytes.Equal(a, b) {
		t.Errorf("the report file without its origin differs from the contract's JSON:\n%s\n%s", a, b)
	}
}
