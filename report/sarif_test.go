package report

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

// sarifCheck is the part of SARIF 2.1.0 that GitHub code scanning reads.
type sarifCheck struct {
	Schema  *string `json:"$schema"`
	Version *string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Name           *string `json:"name"`
				Version        string  `json:"version"`
				InformationURI *string `json:"informationUri"`
				Rules          []struct {
					ID               *string `json:"id"`
					ShortDescription struct{ Text *string }
					FullDescription  struct{ Text *string }
					Help             struct{ Text *string }
				} `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		Invocations []struct {
			ExecutionSuccessful        *bool `json:"executionSuccessful"`
			ToolExecutionNotifications []struct {
				Level   string `json:"level"`
				Message struct {
					Text *string `json:"text"`
				} `json:"message"`
			} `json:"toolExecutionNotifications"`
		} `json:"invocations"`
		Results *[]struct {
			RuleID    *string `json:"ruleId"`
			RuleIndex *int    `json:"ruleIndex"`
			Level     string  `json:"level"`
			Message   struct {
				Text *string `json:"text"`
			} `json:"message"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       *string `json:"uri"`
						URIBaseID string  `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct {
						StartLine int `json:"startLine"`
						EndLine   int `json:"endLine"`
					} `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			PartialFingerprints map[string]string `json:"partialFingerprints"`
			Properties          struct {
				Severity   string `json:"severity"`
				Suggestion string `json:"suggestion"`
			} `json:"properties"`
		} `json:"results"`
	} `json:"runs"`
}

func decodeSARIF(t *testing.T, r *review.Report) sarifCheck {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, r, FormatSARIF, Options{ToolVersion: "v1.2.3"}); err != nil {
		t.Fatalf("Write(sarif) = %v", err)
	}
	var got sarifCheck
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("Write(sarif) is not JSON: %v", err)
	}
	return got
}

// TestSARIFStructure checks, for every golden case, the fields code scanning
// requires and the rules this package promises.
func TestSARIFStructure(t *testing.T) {
	t.Parallel()
	levels := map[string]bool{"error": true, "warning": true, "note": true}
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := decodeSARIF(t, tc.report)
			if got.Schema == nil || *got.Schema != "https://json.schemastore.org/sarif-2.1.0.json" {
				t.Errorf("$schema = %v, want the 2.1.0 schema", got.Schema)
			}
			if got.Version == nil || *got.Version != "2.1.0" {
				t.Errorf("version = %v, want 2.1.0", got.Version)
			}
			if len(got.Runs) != 1 {
				t.Fatalf("len(runs) = %d, want 1", len(got.Runs))
			}
			run := got.Runs[0]
			d := run.Tool.Driver
			if d.Name == nil || *d.Name != "warden" || d.Version != "v1.2.3" || d.InformationURI == nil {
				t.Errorf("tool.driver = %+v, want name warden, version v1.2.3 and an informationUri", d)
			}
			ruleIDs := map[string]int{}
			for i, rule := range d.Rules {
				if rule.ID == nil || rule.ShortDescription.Text == nil || rule.FullDescription.Text == nil || rule.Help.Text == nil {
					t.Errorf("rules[%d] lacks id, shortDescription, fullDescription or help", i)
					continue
				}
				ruleIDs[*rule.ID] = i
			}
			skills := map[string]bool{}
			for _, f := range tc.report.Findings {
				skills[f.Skill] = true
			}
			for _, it := range tc.report.Items {
				skills[it.Skill] = true
			}
			if len(ruleIDs) != len(skills) || len(d.Rules) != len(skills) {
				t.Errorf("rules = %v, want one per skill %v", ruleIDs, skills)
			}
			if run.Results == nil {
				t.Fatalf("results is missing, want an array")
			}
			if got, want := len(*run.Results), len(tc.report.Findings); got != want {
				t.Errorf("len(results) = %d, want %d (one per finding, whatever ReportOn)", got, want)
			}
			fps := map[string]bool{}
			for i, res := range *run.Results {
				if res.RuleID == nil || res.RuleIndex == nil || ruleIDs[*res.RuleID] != *res.RuleIndex {
					t.Errorf("results[%d] ruleId/ruleIndex = %v/%v, want a rule of the driver", i, res.RuleID, res.RuleIndex)
				}
				if !levels[res.Level] {
					t.Errorf("results[%d].level = %q, want error, warning or note", i, res.Level)
				}
				if res.Message.Text == nil || *res.Message.Text == "" {
					t.Errorf("results[%d].message.text is empty", i)
				}
				if len(res.Locations) != 1 {
					t.Fatalf("results[%d] has %d locations, want 1", i, len(res.Locations))
				}
				pl := res.Locations[0].PhysicalLocation
				if pl.ArtifactLocation.URI == nil || *pl.ArtifactLocation.URI == "" || pl.ArtifactLocation.URIBaseID != "%SRCROOT%" {
					t.Errorf("results[%d] artifactLocation = %+v, want a uri relative to %%SRCROOT%%", i, pl.ArtifactLocation)
				}
				if pl.Region.StartLine < 1 || pl.Region.EndLine < pl.Region.StartLine {
					t.Errorf("results[%d] region = %+v, want 1 <= startLine <= endLine", i, pl.Region)
				}
				fp := res.PartialFingerprints[FingerprintKey]
				if fp == "" || fps[fp] {
					t.Errorf("results[%d] fingerprint %q is empty or repeated", i, fp)
				}
				fps[fp] = true
				if res.Properties.Severity == "" {
					t.Errorf("results[%d].properties.severity is empty", i)
				}
			}
			if len(run.Invocations) != 1 || run.Invocations[0].ExecutionSuccessful == nil {
				t.Fatalf("invocations = %+v, want one with executionSuccessful", run.Invocations)
			}
			inv := run.Invocations[0]
			c := countItems(tc.report)
			complete := tc.report.Outcome == review.OutcomeComplete
			if *inv.ExecutionSuccessful != complete {
				t.Errorf("executionSuccessful = %v, want %v for outcome %s", *inv.ExecutionSuccessful, complete, tc.report.Outcome)
			}
			wantNotes := len(tc.report.Injections) // one per place addressed to the reviewer, first
			switch {
			case tc.report.Outcome == review.OutcomeDryRun:
				wantNotes++
			case !complete:
				// The headline, one per limit that left code unreviewed,
				// then one per item.
				wantNotes += 1 + c.notReviewed
				for _, g := range tc.report.Coverage.NotReviewed {
					if g.Reason == review.LimitMaxFiles || g.Reason == review.LimitMaxChangedLines {
						wantNotes++
					}
				}
			}
			if got := len(inv.ToolExecutionNotifications); got != wantNotes {
				t.Errorf("len(toolExecutionNotifications) = %d, want %d", got, wantNotes)
			}
		})
	}
}

func TestSARIFResult(t *testing.T) {
	t.Parallel()
	r := &review.Report{Outcome: review.OutcomeComplete, Findings: []review.Finding{
		{Skill: "sec", Severity: review.SeverityCritical, Title: "A", Description: "why", Path: "./dir/a b.go", StartLine: 0, EndLine: -3, Suggestion: "fix()\n"},
		{Skill: "sec", Severity: review.SeverityLow, Title: "A", Path: "dir/a b.go", StartLine: 9, EndLine: 7},
		{Skill: "", Severity: review.SeverityMedium, Title: "", Path: "/c.go", StartLine: 4, EndLine: 6},
	}}
	got := decodeSARIF(t, r)
	type res struct {
		Rule, Level, Text, URI string
		Start, End             int
		Severity, Suggestion   string
		FP                     string
	}
	var rs []res
	for _, x := range *got.Runs[0].Results {
		pl := x.Locations[0].PhysicalLocation
		rs = append(rs, res{*x.RuleID, x.Level, *x.Message.Text, *pl.ArtifactLocation.URI, pl.Region.StartLine, pl.Region.EndLine,
			x.Properties.Severity, x.Properties.Suggestion, x.PartialFingerprints[FingerprintKey]})
	}
	fpA := Fingerprint(review.Finding{Skill: "sec", Path: "dir/a b.go", Title: "A"})
	fpDot := Fingerprint(r.Findings[0])
	want := []res{
		{"sec", "error", "A\n\nwhy", "dir/a%20b.go", 1, 1, "critical", "fix()", fpDot + ":1"},
		{"warden", "warning", "warden finding", "c.go", 4, 6, "medium", "", Fingerprint(r.Findings[2]) + ":1"},
		{"sec", "warning", "A", "dir/a%20b.go", 9, 9, "low", "", fpA + ":1"},
	}
	if diff := cmp.Diff(want, rs); diff != "" {
		t.Errorf("Write(sarif) results (-want +got):\n%s", diff)
	}
}

func TestFingerprint(t *testing.T) {
	t.Parallel()
	base := review.Finding{Skill: "sec", Path: "a.go", Title: "SQL  injection", StartLine: 3, EndLine: 4, Description: "x"}
	moved := base
	moved.StartLine, moved.EndLine, moved.Description, moved.Severity = 30, 40, "other words", review.SeverityHigh
	spaced := base
	spaced.Title = " SQL injection "
	if Fingerprint(base) != Fingerprint(moved) || Fingerprint(base) != Fingerprint(spaced) {
		t.Errorf("Fingerprint changes with lines, description, severity or spacing; want it stable")
	}
	for _, other := range []review.Finding{
		{Skill: "style", Path: "a.go", Title: "SQL injection"},
		{Skill: "sec", Path: "b.go", Title: "SQL injection"},
		{Skill: "sec", Path: "a.go", Title: "XSS"},
		{Skill: "sec", Path: "a.goSQL injection"},
	} {
		if Fingerprint(other) == Fingerprint(base) {
			t.Errorf("Fingerprint(%+v) = Fingerprint(%+v), want different", other, base)
		}
	}
	if got := len(Fingerprint(base)); got != 32 {
		t.Errorf("len(Fingerprint) = %d, want 32", got)
	}
	// Two findings with the same identity in one run get distinct
	// occurrence numbers.
	r := &review.Report{Outcome: review.OutcomeComplete, Findings: []review.Finding{base, moved}}
	var fps []string
	for _, x := range *decodeSARIF(t, r).Runs[0].Results {
		fps = append(fps, x.PartialFingerprints[FingerprintKey])
	}
	if want := []string{Fingerprint(base) + ":1", Fingerprint(base) + ":2"}; !cmp.Equal(want, fps) {
		t.Errorf("fingerprints = %v, want %v", fps, want)
	}
}

func TestSARIFLevel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   review.Severity
		want string
	}{
		{review.SeverityCritical, "error"},
		{review.SeverityHigh, "error"},
		{review.SeverityMedium, "warning"},
		{review.SeverityLow, "warning"},
		{review.SeverityInfo, "note"},
		{review.SeverityNone, "note"},
	}
	for _, tt := range tests {
		if got := LevelOf(tt.in).SARIF(); got != tt.want {
			t.Errorf("LevelOf(%v).SARIF() = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSARIFURINamesTheFile: a location's URI percent-encodes the path byte
// for byte (SARIF 2.1.0 §3.10, RFC 3986): decoded, it is the path git
// named, whatever bytes it holds: Latin-1 (not UTF-8), a newline, a tab,
// bidi controls, URI delimiters, a colon that would read as a scheme.
// Only unreserved characters and "/" are left as they are.
func TestSARIFURINamesTheFile(t *testing.T) {
	t.Parallel()
	cases := []struct{ path, uri string }{
		{"caf\xe9.go", "caf%E9.go"},
		{"dir/new\nline.go", "dir/new%0Aline.go"},
		{"tab\there.go", "tab%09here.go"},
		{"caf\u00e9/\u202eevil.go", "caf%C3%A9/%E2%80%AEevil.go"},
		{"a b#c?d%e&f+g;h=i[j].go", "a%20b%23c%3Fd%25e%26f%2Bg%3Bh%3Di%5Bj%5D.go"},
		{"c:/x.go", "c%3A/x.go"},
		{"./src/a-b_c.d~e.go", "src/a-b_c.d~e.go"},
		{"\x00\xff", "%00%FF"},
	}
	for _, c := range cases {
		r := &review.Report{Outcome: review.OutcomeComplete, Findings: []review.Finding{
			{Skill: "sec", Severity: review.SeverityHigh, Title: "A", Path: c.path, StartLine: 1, EndLine: 1}}}
		got := *(*decodeSARIF(t, r).Runs[0].Results)[0].Locations[0].PhysicalLocation.ArtifactLocation.URI
		if got != c.uri {
			t.Errorf("the URI of %q = %q, want %q", c.path, got, c.uri)
		}
		want := strings.TrimPrefix(c.path, "./")
		if dec, err := url.PathUnescape(got); err != nil || dec != want {
			t.Errorf("the URI of %q decodes to %q (%v), not the path", c.path, dec, err)
		}
	}
}
