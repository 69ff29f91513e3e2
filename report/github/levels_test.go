package github

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/org/warden/report"
	"github.com/org/warden/review"
)

// TestOneLevelPerSeverity renders one finding of every severity to each
// sink that has levels (check-run annotations, workflow commands, SARIF)
// and checks that each severity has the same rank in all three: low is a
// warning everywhere, not a warning in one and a note in another.
func TestOneLevelPerSeverity(t *testing.T) {
	t.Parallel()
	rank := map[string]int{"notice": 0, "note": 0, "warning": 1, "failure": 2, "error": 2}
	for s := review.SeverityInfo; s <= review.SeverityCritical; s++ {
		f := review.Finding{Skill: "k", Path: "a.go", StartLine: 1, EndLine: 1, Severity: s, Title: "t"}
		anns := annotations([]review.Finding{f}, "")
		if len(anns) != 1 {
			t.Fatalf("annotations(%s) = %d, want 1", s, len(anns))
		}
		check := anns[0].GetAnnotationLevel()
		var cmds bytes.Buffer
		WriteAnnotations(&cmds, []review.Finding{f}, review.SeverityNone)
		command, _, _ := strings.Cut(strings.TrimPrefix(cmds.String(), "::"), " ")
		var sarif bytes.Buffer
		rep := &review.Report{Schema: review.Schema, Outcome: review.OutcomeComplete, Findings: []review.Finding{f}}
		if err := report.Write(&sarif, rep, report.FormatSARIF, report.Options{}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Runs []struct {
				Results []struct {
					Level string `json:"level"`
				} `json:"results"`
			} `json:"runs"`
		}
		if err := json.Unmarshal(sarif.Bytes(), &doc); err != nil || len(doc.Runs) != 1 || len(doc.Runs[0].Results) != 1 {
			t.Fatalf("SARIF of %s: %v\n%s", s, err, sarif.String())
		}
		level := doc.Runs[0].Results[0].Level
		want := int(report.LevelOf(s))
		for sink, got := range map[string]string{"check run": check, "workflow command": command, "SARIF": level} {
			if r, ok := rank[got]; !ok || r != want {
				t.Errorf("%s severity %s: level %q, want rank %d like every sink", sink, s, got, want)
			}
		}
	}
}
