package bot

import "testing"

// TestSupersedes: which later command does all an earlier one would.
func TestSupersedes(t *testing.T) {
	t.Parallel()
	review := func(skills ...string) Command { return Command{Kind: Review, Skills: skills} }
	resume, help, dismiss := Command{Kind: Resume}, Command{Kind: Help}, Command{Kind: Dismiss, Target: "w1234567"}
	for _, tt := range []struct {
		name         string
		newer, older Command
		want         bool
	}{
		{"review after review", review(), review(), true},
		{"review after resume", review(), resume, true},
		{"review after a skill's review", review(), review("security"), true},
		{"resume after resume", resume, resume, true},
		{"resume after review: a fresh review is not a resume", resume, review(), false},
		{"a skill's review after review", review("security"), review(), false},
		{"a skill's review after a subset", review("security", "code-review"), review("security"), true},
		{"a skill's review after another skill's", review("security"), review("code-review"), false},
		{"a skill's review after resume", review("security"), resume, false},
		{"review after help", review(), help, false},
		{"review after dismiss", review(), dismiss, false},
		{"help after review", help, review(), false},
	} {
		if got := Supersedes(tt.newer, tt.older); got != tt.want {
			t.Errorf("%s: Supersedes(%v %v, %v %v) = %v, want %v", tt.name, tt.newer.Kind, tt.newer.Skills, tt.older.Kind, tt.older.Skills, got, tt.want)
		}
	}
}
