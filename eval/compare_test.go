package eval

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func f(v float64) *float64 { return &v }

// TestCompare: a drop of exactly the threshold passes, a little more
// fails; a ratio that lost its value, a score gone and an incomplete one
// are regressions; a better run is not.
func TestCompare(t *testing.T) {
	t.Parallel()
	base := &Result{Header: Header{Schema: Schema, Mode: ModeReplayed}, Scores: []Score{
		{Skill: "s", Route: "r", Model: "m", Recall: f(0.5), Precision: f(0.8), Localisation: f(1), NoisePer100: f(2)},
		{Skill: "gone", Route: "r", Model: "m", Recall: f(0.5)},
	}}
	tests := []struct {
		name string
		cur  Score
		want []string
	}{
		{"same", Score{Recall: f(0.5), Precision: f(0.8), Localisation: f(1), NoisePer100: f(2)}, nil},
		{"at the threshold", Score{Recall: f(0.45), Precision: f(0.75), Localisation: f(0.95), NoisePer100: f(3)}, nil},
		{"better", Score{Recall: f(0.9), Precision: f(1), Localisation: f(1), NoisePer100: f(0)}, nil},
		{"over the threshold", Score{Recall: f(0.44), Precision: f(0.7), Localisation: f(1), NoisePer100: f(3.5)}, []string{"recall", "precision", "noise_per_100_lines"}},
		{"lost a value", Score{Recall: f(0.5), Localisation: f(1), NoisePer100: f(2)}, []string{"precision"}},
		{"incomplete", Score{Items: 4, Failed: 1, Recall: f(0.5), Precision: f(0.8), Localisation: f(1), NoisePer100: f(2)}, []string{"items"}},
	}
	for _, tt := range tests {
		cur := tt.cur
		cur.Skill, cur.Route, cur.Model = "s", "r", "m"
		c := Compare(base, &Result{Header: Header{Schema: Schema}, Scores: []Score{cur}}, DefaultThresholds)
		got := []string{}
		for _, g := range c.Regressions {
			if g.Skill == "s" {
				got = append(got, g.Metric)
			}
		}
		if diff := cmp.Diff(append([]string{}, tt.want...), got); diff != "" {
			t.Errorf("%s: regressions (-want +got):\n%s", tt.name, diff)
		}
		if n := len(c.Regressions) - len(got); n != 1 {
			t.Errorf("%s: the score that is gone gave %d regressions, want 1", tt.name, n)
		}
	}
}
