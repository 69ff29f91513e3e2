package eval

import (
	"testing"

	"github.com/org/warden/review"
)

// TestJudgeOutcome: an outcome is wrong when it claims what the routes'
// endpoints did not do: complete with an item no route answered (or one
// not reviewed), provider-unavailable with one answered and reviewed.
func TestJudgeOutcome(t *testing.T) {
	t.Parallel()
	reviewed, failed := review.Item{Status: review.StatusReviewed}, review.Item{Status: review.StatusFailed}
	tests := []struct {
		name     string
		outcome  review.Outcome
		items    []review.Item
		answered []bool
		want     string
	}{
		{"complete and true", review.OutcomeComplete, []review.Item{reviewed, reviewed}, []bool{true, true}, ""},
		{"complete, one never answered", review.OutcomeComplete, []review.Item{reviewed, reviewed}, []bool{true, false}, "complete, but 1 of 2 items got no answer from any route"},
		{"complete, one failed", review.OutcomeComplete, []review.Item{reviewed, failed}, []bool{true, true}, "complete, but 1 of 2 items got no answer from any route"},
		{"partial is never a false claim here", review.OutcomePartial, []review.Item{reviewed, failed}, []bool{true, false}, ""},
		{"provider-unavailable and true", review.OutcomeProviderUnavailable, []review.Item{failed, failed}, []bool{false, false}, ""},
		{"provider-unavailable, one answered", review.OutcomeProviderUnavailable, []review.Item{reviewed, failed}, []bool{true, false}, "provider-unavailable, but 1 of 2 items were answered and reviewed"},
		{"answered but not accepted is not reviewed", review.OutcomeProviderUnavailable, []review.Item{failed}, []bool{true}, ""},
	}
	for _, tt := range tests {
		got := judgeOutcome(&review.Report{Outcome: tt.outcome, Items: tt.items}, func(i int) bool { return tt.answered[i] })
		if got != tt.want {
			t.Errorf("%s: judgeOutcome = %q, want %q", tt.name, got, tt.want)
		}
	}
}
