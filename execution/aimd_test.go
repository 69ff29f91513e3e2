package execution

import (
	"testing"
	"time"
)

// TestConcurrencyCutAndRegrowth: a 429 halves the limit, once per
// cool-down; when answers are also coming it cuts only to the calls still
// in flight beside it (at least by one) and the limit that drew it becomes
// a ceiling for ceilingHold. Free slots are parked at once, busy ones as
// they finish; the limit grows back one slot per `limit` accepted answers
// after the cool-down, below the ceiling while it holds and to the cap
// after.
func TestConcurrencyCutAndRegrowth(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	r := &routeState{sem: make(chan struct{}, 8)}
	limit := func() int { r.mu.Lock(); defer r.mu.Unlock(); return r.limitNow() }
	for range 8 { // a burst of eight calls in flight
		r.sem <- struct{}{}
	}
	r.inflight = 7 // beside the one that got the 429, none answered yet
	r.rateLimited(t0, 2*time.Second)
	if got := limit(); got != 4 || r.owed != 4 || r.parked != 0 || r.ceiling != 0 || r.stats.ConcurrencyCuts != 1 || r.stats.MinConcurrency != 4 {
		t.Fatalf("a burst's 429 at limit 8: limit %d, owed %d, parked %d, ceiling %d, stats %+v; want half (4), owed from busy slots, no ceiling",
			got, r.owed, r.parked, r.ceiling, r.stats)
	}
	r.rateLimited(t0.Add(time.Second), 2*time.Second) // the same burst
	if got := limit(); got != 4 {
		t.Errorf("a second 429 within the cool-down cut again: limit %d", got)
	}
	for range 5 { // five calls finish: four tokens park, one frees
		r.release()
	}
	if r.owed != 0 || r.parked != 4 || len(r.sem) != 7 {
		t.Fatalf("after five calls ended: owed %d parked %d held %d, want 0, 4, 7", r.owed, r.parked, len(r.sem))
	}
	// An answer during the cool-down grows nothing but shows the provider
	// serving: the next 429, with 3 calls in flight beside it, cuts to 3,
	// not to half, and makes 4 a ceiling.
	r.accepted(t0.Add(1500 * time.Millisecond))
	if got := limit(); got != 4 {
		t.Errorf("grew during the cool-down: limit %d", got)
	}
	r.inflight = 3
	cut := t0.Add(3 * time.Second)
	r.rateLimited(cut, time.Second)
	if got := limit(); got != 3 || r.ceiling != 4 || r.parked != 5 {
		t.Fatalf("a 429 while answering, 3 beside it, at limit 4: limit %d, ceiling %d, parked %d; want 3, 4, 5 (a free slot parked at once)", got, r.ceiling, r.parked)
	}
	for range 2 {
		r.release()
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
	if got := limit(); got != 8 || r.parked != 0 || len(r.sem) != 1 {
		t.Errorf("after the hold: limit %d, %d parked, %d tokens held; want the cap, 8, none parked, the one call still in flight", got, r.parked, len(r.sem))
	}
}
