package execution

import (
	"testing"
	"time"
)

// TestRunStatsAreThisRuns: RunStats returns the stats of its own run; a
// later Run on the same engine does not change them, and a run's stats
// are only its own calls.
func TestRunStatsAreThisRuns(t *testing.T) {
	t.Parallel()
	f := newFake("a", time.Now(), always(step{Content: "ok"}))
	e, err := New([]Route{route("a", f)}, policy(nil), Options{})
	if err != nil {
		t.Fatal(err)
	}
	items := func(n int) []Item {
		out := make([]Item, n)
		for i := range out {
			out[i] = Item{Request: &Request{Messages: []Message{{Role: "user", Content: "review this"}}}}
		}
		return out
	}
	_, first := e.RunStats(t.Context(), items(3), nil)
	_, second := e.RunStats(t.Context(), items(5), nil)
	if len(first) != 1 || first[0].Calls != 3 {
		t.Errorf("RunStats(3 items) = %+v, want 3 calls on route a", first)
	}
	if len(second) != 1 || second[0].Calls != 5 {
		t.Errorf("RunStats(5 items) after a run of 3 = %+v, want 5 calls", second)
	}
}
