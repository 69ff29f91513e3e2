package execution

import (
	"testing"
	"time"
)

// TestConcurrencyCutAndRegrowth: a 429 cuts the limit to half or to the
// calls still in flight beside it (whichever is more, at least one less),
// once per cool-down; free slots are parked at once and busy ones as they
// finish; the limit grows back one slot per `limit` accepted answers after
// the cool-down, to one below the limit that drew the 429 while the
// provider was also answering (for ceilingHold), and to the cap after a
// storm with no answer in between.
func TestConcurrencyCutAndRegrowth(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	r := &routeState{sem: make(chan struct{}, 8)}
	limit := func() int { r.mu.Lock(); defer r.mu.Unlock(); return r.limitNow() }
	for range 3 { // three calls in flight
		r.sem <- struct{}{}
	}
	r.inflight = 2 // beside the one that got the 429
	r.rateLimited(t0, 2*time.Second)
	if got := limit(); got != 4 || len(r.sem) != 7 || r.owed != 0 || r.stats.ConcurrencyCuts != 1 || r.stats.MinConcurrency != 4 {
		t.Fatalf("after a 429 at limit 8: limit %d, %d tokens held, %d owed, stats %+v; want 4, 3 calls + 4 parked", got, len(r.sem), r.owed, r.stats)
	}
	r.rateLimited(t0.Add(time.Second), 2*time.Second) // the same burst
	if got := limit(); got != 4 {
		t.Errorf("a second 429 within the cool-down cut again: limit %d", got)
	}
	r.inflight = 3 // three of four in flight: the cut is by one at least
	r.rateLimited(t0.Add(3*time.Second), 0)
	if got := limit(); got != 3 || r.stats.ConcurrencyCuts != 2 {
		t.Fatalf("limit %d after a 429 with 3 others in flight at 4, want 3", got)
	}
	// No answer yet: no ceiling. The one slot to take was free: parked at
	// once; the three calls still hold theirs.
	if r.ceiling != 0 {
		t.Errorf("ceiling %d with no answer seen, want none", r.ceiling)
	}
	r.release()
	if r.owed != 0 || r.parked != 5 || len(r.sem) != 7 {
		t.Errorf("a finished call's token: owed %d parked %d held %d, want 0, 5, 7", r.owed, r.parked, len(r.sem))
	}
	for range 2 {
		r.release()
	}
	// Regrowth: nothing during the cool-down, then one slot per limit answers.
	at := t0.Add(3 * time.Second)
	r.accepted(at)
	if got := limit(); got != 3 {
		t.Errorf("grew during the cool-down: limit %d", got)
	}
	at = at.Add(2 * time.Second)
	for i := range 3 {
		r.accepted(at.Add(time.Duration(i) * time.Millisecond))
	}
	if got := limit(); got != 4 {
		t.Errorf("after 3 answers at limit 3: limit %d, want 4", got)
	}
	// A 429 now, with answers coming: 4 is a ceiling for ceilingHold.
	r.inflight = 1
	cut := at.Add(time.Second)
	r.rateLimited(cut, time.Second)
	if got := limit(); got != 2 || r.ceiling != 4 {
		t.Fatalf("limit %d ceiling %d after a 429 at 4 with answers seen, want 2 and 4", got, r.ceiling)
	}
	grow := func(from time.Time, n int) {
		for i := range n {
			r.accepted(from.Add(time.Duration(i) * time.Millisecond))
		}
	}
	grow(cut.Add(2*time.Second), 50)
	if got := limit(); got != 3 {
		t.Errorf("within the hold: limit %d, want 3 (one below the ceiling)", got)
	}
	grow(cut.Add(ceilingHold+time.Second), 100)
	if got := limit(); got != 8 || len(r.sem) != 0 {
		t.Errorf("after the hold: limit %d with %d tokens held, want the cap, 8, and none", got, len(r.sem))
	}
}
