package action

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/review"
)

func TestParseInputs(t *testing.T) {
	t.Parallel()
	high, three := review.SeverityHigh, 3
	got, err := ParseInputs(func(name string) string {
		return map[string]string{
			"fail-on": "high", "max-findings": " 3 ", "skip-drafts": "FALSE", "skills": "a, b,,", "budget": "2m",
			"mode": "analyze", "check-name": "", "pr-number": "7",
			"allow-self-accept": "true", "command-workflow": ".github/workflows/bot.yaml", "command-workflow-name": "bot",
		}[name]
	})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultInputs()
	want.Thresholds = review.ThresholdSettings{FailOn: &high, MaxFindings: &three}
	want.SkipDrafts, want.Skills, want.Budget, want.Mode, want.PRNumber = false, []string{"a", "b"}, 2*time.Minute, ModeAnalyze, 7
	want.AllowSelfAccept, want.CommandWorkflow, want.CommandWorkflowName = true, ".github/workflows/bot.yaml", "bot"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseInputs() (-want +got):\n%s", diff)
	}

	_, err = ParseInputs(func(name string) string {
		return map[string]string{"fail-on": "severe", "max-findings": "-1", "skip-bots": "yes", "budget": "0s", "mode": "x", "pr-number": "0",
			"allow-self-accept": "yes", "command-workflow": "warden-commands.yml"}[name]
	})
	for _, name := range []string{"fail-on", "max-findings", "skip-bots", "budget", "mode", "pr-number", "allow-self-accept", "command-workflow"} {
		if err == nil || !strings.Contains(err.Error(), "input "+name+":") {
			t.Errorf("ParseInputs(bad %s) = %v, want an error naming the input", name, err)
		}
	}
}
