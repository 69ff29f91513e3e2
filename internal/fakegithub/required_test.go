package fakegithub

import "testing"

func TestPassesRequiredCheck(t *testing.T) {
	t.Parallel()
	want := map[string]bool{"success": true, "neutral": true, "skipped": true,
		"failure": false, "action_required": false, "cancelled": false, "timed_out": false, "stale": false, "": false}
	for _, c := range Conclusions {
		if _, ok := want[c]; !ok {
			t.Errorf("conclusion %q GitHub accepts is not in the table", c)
		}
	}
	for c, w := range want {
		if got := PassesRequiredCheck(c); got != w {
			t.Errorf("PassesRequiredCheck(%q) = %v, want %v", c, got, w)
		}
	}
}
