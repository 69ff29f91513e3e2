package action

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/report"
	ghreport "github.com/org/warden/report/github"
	"github.com/org/warden/review"
)

// reportOrigin says which pull request and commit a report file reviewed.
// The Action writes it into the report file (additive to warden.report/v1);
// mode report checks it against its workflow_run event and the pull request
// before it publishes anything.
type reportOrigin struct {
	Repository    string `json:"repository"`   // owner/name, GITHUB_REPOSITORY of the run
	PullRequest   int    `json:"pull_request"` // the pull request's number
	HeadSHA       string `json:"head_sha"`     // the commit reviewed
	BaseSHA       string `json:"base_sha"`     // whose configuration and skills were used
	WardenVersion string `json:"warden_version"`
}

// originReport is the Action's report file: the JSON report with its
// origin.
type originReport struct {
	review.Report
	Origin *reportOrigin `json:"origin,omitempty"`
}

func originOf(pr *PullRequest, version string) *reportOrigin {
	return &reportOrigin{Repository: pr.Owner + "/" + pr.Repo, PullRequest: pr.Number, HeadSHA: pr.HeadSHA, BaseSHA: pr.BaseSHA, WardenVersion: version}
}

// writeReportFile writes the JSON report, with its origin, where later
// steps can read it: reportPath (relative to the workspace), else
// $RUNNER_TEMP/warden-report.json. The file is written whole or not at all.
func writeReportFile(workspace, runnerTemp, reportPath string, rep *review.Report, origin *reportOrigin) (string, error) {
	path := reportPath
	switch {
	case path == "":
		path = filepath.Join(cmp.Or(runnerTemp, os.TempDir()), "warden-report.json")
	case !filepath.IsAbs(path):
		path = filepath.Join(workspace, path)
	}
	var canonical bytes.Buffer
	if err := report.Write(&canonical, rep, report.FormatJSON, report.Options{ToolVersion: origin.WardenVersion}); err != nil {
		return "", err
	}
	// Through the contract's own rendering, so lists are [] and not null.
	var doc originReport
	if err := json.Unmarshal(canonical.Bytes(), &doc.Report); err != nil {
		return "", err
	}
	doc.Origin = origin
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&doc); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	if err := report.WriteFile(path, buf.Bytes()); err != nil {
		return path, fmt.Errorf("%s: %w", cmp.Or(reportPath, path), err) // as the input names it
	}
	return path, nil
}

// Bounds on a report file that mode report reads. The file comes from a
// workflow that ran on the pull request's code, so it is untrusted input:
// a report warden wrote stays far below each (review caps a title at 200
// characters, a description at 4,000 and a suggestion at 8,000; at most 4
// bytes each).
const (
	maxReportFileBytes  = 64 << 20
	MaxReportFindings   = 10_000
	maxReportItems      = 200_000
	maxReportTitle      = 1 << 10
	maxReportText       = 16 << 10 // description
	maxReportSuggestion = 32 << 10
	maxReportName       = 256 // skill, route and model names
	maxReportPath       = 4096
	maxReportLine       = 10_000_000
)

// reportError is a report file that fails validation: nothing of it is
// published.
type reportError struct{ msg string }

func (e *reportError) Error() string { return "the analysis report is not valid: " + e.msg }

func reportErrorf(format string, args ...any) error {
	return &reportError{fmt.Sprintf(format, args...)}
}

// readReportFile reads and strictly decodes a report file: one JSON
// object of schema warden.report/v1 with an origin, no unknown field, no
// trailing data, within the bounds above.
func readReportFile(path, version string) (*originReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReportFileBytes+1))
	if err != nil {
		return nil, reportErrorf("reading it: %v", err)
	}
	if len(data) > maxReportFileBytes {
		return nil, reportErrorf("larger than %d MiB", maxReportFileBytes>>20)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc originReport
	if err := dec.Decode(&doc); err != nil {
		return nil, reportErrorf("not a warden report of this version (%s; use the same warden version in both workflows): %v", version, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, reportErrorf("data after the report object")
	}
	if err := checkReport(&doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// checkReport checks what decoding cannot: the schema, the origin's form,
// the outcome, counts and lengths.
func checkReport(doc *originReport) error {
	switch {
	case doc.Schema != review.Schema:
		return reportErrorf("schema %q, want %q", clipForMessage(doc.Schema), review.Schema)
	case doc.Origin == nil:
		return reportErrorf("no origin: it was not written by 'warden action --mode analyze'")
	case doc.Origin.PullRequest <= 0:
		return reportErrorf("origin.pull_request %d is not a pull request number", doc.Origin.PullRequest)
	case !gitrepo.IsSHA(doc.Origin.HeadSHA) || !gitrepo.IsSHA(doc.Origin.BaseSHA):
		return reportErrorf("origin.head_sha and origin.base_sha must be full commit ids")
	case len(doc.Findings) > MaxReportFindings:
		return reportErrorf("%d findings, more than %d", len(doc.Findings), MaxReportFindings)
	case len(doc.Items) > maxReportItems || len(doc.Ignored) > maxReportItems:
		return reportErrorf("more than %d items", maxReportItems)
	}
	switch doc.Outcome {
	case review.OutcomeComplete, review.OutcomePartial, review.OutcomeProviderUnavailable:
	default:
		return reportErrorf("outcome %q is not complete, partial or provider-unavailable", clipForMessage(string(doc.Outcome)))
	}
	for i, f := range doc.Findings {
		switch {
		case f.Severity < review.SeverityInfo || f.Severity > review.SeverityCritical:
			return reportErrorf("findings[%d]: severity %d", i, f.Severity)
		case len(f.Title) > maxReportTitle, len(f.Description) > maxReportText, len(f.Suggestion) > maxReportSuggestion:
			return reportErrorf("findings[%d]: text longer than warden writes", i)
		case len(f.Skill) > maxReportName, len(f.Route) > maxReportName, len(f.Model) > maxReportName, len(f.Path) > maxReportPath:
			return reportErrorf("findings[%d]: a name longer than warden writes", i)
		}
	}
	for i, it := range doc.Items {
		if len(it.Skill) > maxReportName || len(it.Route) > maxReportName || len(it.Reason) > maxReportName || len(it.Path) > maxReportPath {
			return reportErrorf("items[%d]: a name longer than warden writes", i)
		}
	}
	for i, ig := range doc.Ignored {
		if len(ig.Path) > maxReportPath || len(ig.Reason) > maxReportName {
			return reportErrorf("ignored[%d]: a name longer than warden writes", i)
		}
	}
	return checkSetup(doc)
}

func clipForMessage(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// keepFindingsInChange drops the findings of rep that do not name a file
// the pull request changes (and still has) with sane lines, and returns how
// many it dropped. An end line of 0 is the start line.
func keepFindingsInChange(rep *review.Report, files []ghreport.File) int {
	changed := map[string]bool{}
	for _, f := range files {
		if f.Status != "removed" {
			changed[f.Path] = true
		}
	}
	kept := rep.Findings[:0]
	for _, f := range rep.Findings {
		if f.EndLine == 0 {
			f.EndLine = f.StartLine
		}
		if !changed[f.Path] || f.StartLine < 1 || f.EndLine < f.StartLine || f.EndLine > maxReportLine {
			continue
		}
		kept = append(kept, f)
	}
	dropped := len(rep.Findings) - len(kept)
	clear(rep.Findings[len(kept):])
	rep.Findings = kept
	return dropped
}
