package execution

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testClock is a manual clock for breaker table tests.
type testClock struct{ t time.Time }

func (c *testClock) now() time.Time      { return c.t }
func (c *testClock) set(d time.Duration) { c.t = time.Unix(1_000_000, 0).Add(d) }
func newTestClock() *testClock           { c := &testClock{}; c.set(0); return c }
func zeroJitter() float64                { return 0 }
func verdictOfRune(r rune) verdict {
	return map[rune]verdict{'S': verdictSuccess, 'F': verdictFailure, 'T': verdictTimeout, 'I': verdictIgnore}[r]
}
func newTestBreaker(c *testClock) *breaker { return newBreaker(BreakerSettings{}, c.now, zeroJitter) }

// call takes a permit and reports its outcome at once.
func call(t *testing.T, b *breaker, outcome rune) {
	t.Helper()
	p, _, _, err := b.allow(false)
	if err != nil {
		t.Fatalf("allow() error %v, want a permit", err)
	}
	b.done(p, verdictOfRune(outcome))
}

func TestBreakerRates(t *testing.T) {
	t.Parallel()
	type step struct {
		at       time.Duration
		outcomes string
	}
	tests := []struct {
		name  string
		steps []step
		want  BreakerState
	}{
		// Issue 22: a rate is judged only over MinCalls (10) outcomes: a
		// flaky start's failures among its first answers are noise.
		{"F1 nine outcomes, 56% failures, stay closed (min calls)", []step{{0, "SFSFSFSFF"}}, BreakerClosed},
		{"F1 the tenth outcome makes a rate: 60% opens", []step{{0, "SFSFSFSFFF"}}, BreakerOpen},
		{"a flaky start: 3 failures among the first 6 outcomes stay closed", []step{{0, "FSFSFS"}}, BreakerClosed},
		{"F2 50% of 10 opens", []step{{0, "SSFSFSFFSF"}}, BreakerOpen},
		{"F2 40% of 10 stays closed", []step{{0, "SFSSFSSFSF"}}, BreakerClosed},
		{"F3 interleaved successes do not mask", []step{{0, "SFSFSFSFS"}, {time.Second, "F"}}, BreakerOpen},
		{"F3 before the tenth outcome", []step{{0, "SFSFSFSFS"}}, BreakerClosed},
		// With no answer at all, QuickTrip (3) failures open it at once.
		{"two failures and no answer stay closed", []step{{0, "FF"}}, BreakerClosed},
		{"three failures and no answer: half-open at once", []step{{0, "FFF"}}, BreakerHalfOpen},
		{"an answer in the window holds the quick trip", []step{{0, "SFFF"}}, BreakerClosed},
		{"F4 expired bucket is not counted", []step{{0, "F"}, {5 * time.Second, "F"}, {305 * time.Second, "F"}}, BreakerClosed},
		{"F4 failure at 0 still counted at 299.999s", []step{{0, "FF"}, {299999 * time.Millisecond, "F"}}, BreakerHalfOpen},
		{"F4 failure at 0 dropped at 300s", []step{{0, "FF"}, {300 * time.Second, "F"}}, BreakerClosed},
		{"F4 slow outage opens at the third failure", []step{{0, "F"}, {19 * time.Second, "F"}, {38 * time.Second, "F"}}, BreakerHalfOpen},
		{"F8 ignored outcomes never count", []step{{0, "IIIIIIIIIIIIIIIIIIIIIIIIIIIIII"}}, BreakerClosed},
		{"F8 ignored outcomes do not dilute", []step{{0, "IIIIIIIIIIFFF"}}, BreakerHalfOpen},
		// Opened by timeouts, the breaker is half-open at once.
		{"F9 timeout rate 40% of 10 opens", []step{{0, "SSTSTSTSTS"}}, BreakerHalfOpen},
		{"F9 timeout rate below 40% stays closed", []step{{0, "STSSSSSSSFSS"}}, BreakerClosed},
		{"mixed failures and timeouts add up", []step{{0, "SSFTSFTSFS"}}, BreakerOpen},
		// Issue 11: a route that answered nothing while a request ran to
		// its deadline opens at once (at most one wave of its cap).
		{"a timeout with no answer in the window opens", []step{{0, "T"}}, BreakerHalfOpen},
		{"failures then a timeout, no answer, opens", []step{{0, "FT"}}, BreakerHalfOpen},
		{"a timeout after an answer does not open alone", []step{{0, "ST"}}, BreakerClosed},
		{"an answer outside the window does not hold it", []step{{0, "S"}, {301 * time.Second, "T"}}, BreakerHalfOpen},
		{"successes alone", []step{{0, "SSSSSSSSSS"}}, BreakerClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newTestClock()
			b := newTestBreaker(c)
			for _, s := range tt.steps {
				c.set(s.at)
				for _, o := range s.outcomes {
					if st, _ := b.current(); st != BreakerClosed {
						t.Fatalf("breaker %s before outcome %c at %v, want closed", st, o, s.at)
					}
					call(t, b, o)
				}
			}
			if got, _ := b.current(); got != tt.want {
				t.Errorf("state after %v = %s, want %s", tt.steps, got, tt.want)
			}
		})
	}
}

func TestBreakerOpenHalfOpen(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newTestBreaker(c)
	var trs []transition
	rec := func(tr []transition) {
		for _, x := range tr {
			x.At = time.Unix(0, 0).Add(x.At.Sub(time.Unix(1_000_000, 0)))
			trs = append(trs, x)
		}
	}
	for _, o := range "SFSFSFSFSF" { // 50% of 10: open on the rate for 30s
		p, _, tr, _ := b.allow(false)
		rec(tr)
		rec(b.done(p, verdictOfRune(o)))
	}
	c.set(29999 * time.Millisecond)
	if _, _, _, err := b.allow(false); !errors.Is(err, errBreakerOpen) {
		t.Fatalf("allow() at 29.999s = %v, want errBreakerOpen", err)
	}
	// F5: after 30s exactly one probe.
	c.set(30 * time.Second)
	p1, st, tr, err := b.allow(false)
	rec(tr)
	if err != nil || st != BreakerHalfOpen || !p1.probe {
		t.Fatalf("allow() at 30s = %+v, %s, %v; want a half-open probe", p1, st, err)
	}
	if _, _, _, err := b.allow(false); !errors.Is(err, errHalfOpenBusy) {
		t.Fatalf("second allow() in half-open = %v, want errHalfOpenBusy", err)
	}
	// F7: a cancelled probe frees the slot without a verdict.
	rec(b.done(p1, verdictIgnore))
	p2, _, _, err := b.allow(false)
	if err != nil {
		t.Fatalf("allow() after an ignored probe = %v, want a probe", err)
	}
	rec(b.done(p2, verdictSuccess))
	if st, _ := b.current(); st != BreakerClosed {
		t.Fatalf("after one probe success state = %s, want closed (CloseAfter 1: the probe is a real request)", st)
	}
	// Old failures do not re-open it right away: buckets were cleared.
	c.set(31 * time.Second)
	call(t, b, 'F')
	if st, _ := b.current(); st != BreakerClosed {
		t.Fatalf("one failure after closing: state = %s, want closed", st)
	}
	want := []transition{
		{time.Unix(0, 0), BreakerClosed, BreakerOpen},
		{time.Unix(30, 0), BreakerOpen, BreakerHalfOpen},
		{time.Unix(30, 0), BreakerHalfOpen, BreakerClosed},
	}
	if diff := cmp.Diff(want, trs); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
	if got := b.openCount(); got != 1 {
		t.Errorf("openCount() = %d, want 1", got)
	}
}

func TestBreakerOpenPeriodGrows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		jitter float64
		want   []time.Duration // open periods after the trip and each failed probe
	}{
		{"no jitter: 30s, 30s, 60s, 120s, 120s (cap)", 0, []time.Duration{30 * time.Second, 30 * time.Second, 60 * time.Second, 120 * time.Second, 120 * time.Second}},
		{"jitter adds up to 10%", 0.999, []time.Duration{32997 * time.Millisecond, 32997 * time.Millisecond, 65994 * time.Millisecond, 131988 * time.Millisecond, 131988 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newTestClock()
			b := newBreaker(BreakerSettings{}, c.now, func() float64 { return tt.jitter })
			for _, o := range "SFSFSFSFSF" { // open on the failure rate
				call(t, b, o)
			}
			var got []time.Duration
			elapsed := time.Duration(0)
			for range tt.want {
				d := b.openFor()
				got = append(got, d.Round(time.Millisecond))
				elapsed += d
				c.set(elapsed)
				call(t, b, 'F') // the trial fails: re-open
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("open periods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBreakerCountsAtCompletion: an outcome counts in the bucket of the
// moment it completes, so calls admitted long before the window (a wedged
// route's 300-second and longer timeouts) still open the breaker. On main
// they were dropped as "admitted before the window" and the breaker never
// opened on 300 s timeouts.
func TestBreakerCountsAtCompletion(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newTestBreaker(c)
	call(t, b, 'S') // an answer at 0: the zero-answer rule does not apply at first
	var ps []permit
	for range 5 {
		p, _, _, err := b.allow(false)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	c.set(10 * time.Minute) // admitted at 0, each times out after 10 minutes
	for i, p := range ps {
		b.done(p, verdictTimeout)
		if st, _ := b.current(); st != BreakerClosed {
			if i != 0 { // the answer at 0 is out of the window: the first timeout opens it
				t.Errorf("opened after %d timeouts, want 1", i+1)
			}
			return
		}
	}
	t.Fatalf("state after five 10-minute timeouts = %s, want open", func() BreakerState { s, _ := b.current(); return s }())
}

// TestBreakerProbesAtOnceAfterTimeouts: opened by timeouts, or by failures
// with no answer, the breaker is half-open at once (what was waited was its
// cool-down; the waiting retries are its trials); opened on the failure
// rate, it waits its open period. A failed trial re-arms the cool-down and
// marks it unresponsive until it closes.
func TestBreakerProbesAtOnceAfterTimeouts(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newTestBreaker(c)
	call(t, b, 'T')
	if st, _ := b.current(); st != BreakerHalfOpen {
		t.Fatalf("after a timeout-opened trip: state %s, want half_open at once", st)
	}
	p, _, _, err := b.allow(false)
	if err != nil || !p.probe {
		t.Fatalf("allow() = %+v, %v; want the trial permit", p, err)
	}
	b.done(p, verdictTimeout)
	v, _ := b.view(false)
	if v.state != BreakerOpen || !v.unresponsive || v.openUntil.Sub(c.now()) != 30*time.Second {
		t.Fatalf("after a timed-out trial: %+v, want open 30s (the cool-down re-armed) and unresponsive", v)
	}
	c.set(30 * time.Second)
	p, _, _, _ = b.allow(false)
	b.done(p, verdictSuccess)
	if v, _ := b.view(false); v.state != BreakerClosed || v.unresponsive {
		t.Fatalf("after a good trial: %+v, want closed and responsive", v)
	}

	quick := newTestBreaker(c)
	for range 3 {
		call(t, quick, 'F')
	}
	if v, _ := quick.view(false); v.state != BreakerHalfOpen {
		t.Fatalf("after three failures and no answer: %+v, want half_open at once", v)
	}
	rate := newTestBreaker(c)
	for _, o := range "SFSFSFSFSF" {
		call(t, rate, o)
	}
	if v, _ := rate.view(false); v.state != BreakerOpen || v.openUntil.Sub(c.now()) != 30*time.Second {
		t.Fatalf("after 50%% failures among answers: %+v, want open for 30s", v)
	}
}

// F6: a permit taken before a state change is ignored (failsafe-go P5).
func TestBreakerStaleGeneration(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newTestBreaker(c)
	stale, _, _, _ := b.allow(false) // admitted while closed
	for _, o := range "SFSFSFSFSF" {
		call(t, b, o)
	}
	c.set(30 * time.Second)
	if st, _ := b.current(); st != BreakerHalfOpen {
		t.Fatalf("state at 30s = %s, want half_open", st)
	}
	for range 3 {
		b.done(stale, verdictSuccess)
	}
	if st, _ := b.current(); st != BreakerHalfOpen {
		t.Fatalf("state after stale successes = %s, want half_open", st)
	}
	// The probe slot is not inflated or consumed by the stale results.
	p, _, _, err := b.allow(false)
	if err != nil || !p.probe {
		t.Fatalf("allow() = %+v, %v; want the one probe", p, err)
	}
	if _, _, _, err := b.allow(false); !errors.Is(err, errHalfOpenBusy) {
		t.Fatalf("second allow() = %v, want errHalfOpenBusy", err)
	}
	// A stale failure cannot re-open a closed breaker either.
	b.done(p, verdictSuccess)
	p, _, _, _ = b.allow(false)
	b.done(p, verdictSuccess)
	for range 10 {
		b.done(stale, verdictFailure)
	}
	if st, _ := b.current(); st != BreakerClosed {
		t.Fatalf("state after stale failures = %s, want closed", st)
	}
}

// F10 is structural: each route has its own breaker. Disabled never opens.
func TestBreakerDisabled(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newBreaker(BreakerSettings{Disabled: true}, c.now, zeroJitter)
	for range 50 {
		call(t, b, 'F')
	}
	if st, _ := b.current(); st != BreakerClosed {
		t.Errorf("disabled breaker state = %s, want closed", st)
	}
}

// A consecutive-failure breaker (the naive policy's) never opens on F3's
// traffic; ours does.
func TestBreakerDiffersFromConsecutive(t *testing.T) {
	t.Parallel()
	c := newTestClock()
	b := newTestBreaker(c)
	run, maxRun := 0, 0
	for _, o := range "SFSFSFSFSF" {
		call(t, b, o)
		if o == 'F' {
			run++
			maxRun = max(maxRun, run)
		} else {
			run = 0
		}
	}
	if st, _ := b.current(); st != BreakerOpen || maxRun != 1 {
		t.Errorf("SFSFSFSFSF: state %s, longest failure run %d; want open and 1", st, maxRun)
	}
}

// tripUnanswered opens a closed breaker, half-open at once, only when its
// window holds failures or timeouts and nothing else: not with an answer
// in it, not with an unusable answer, not when empty, not when disabled,
// not again when already open.
func TestBreakerTripUnanswered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		outcomes []verdict
		disabled bool
		wantOpen bool
	}{
		{"one failure", []verdict{verdictFailure}, false, true},
		{"two failures", []verdict{verdictFailure, verdictFailure}, false, true},
		{"nothing yet", nil, false, false},
		{"an answer among them", []verdict{verdictSuccess, verdictFailure, verdictFailure}, false, false},
		{"an unusable answer", []verdict{verdictFailure, verdictUnusable}, false, false},
		{"already open (three failures)", []verdict{verdictFailure, verdictFailure, verdictFailure}, false, false},
		{"disabled", []verdict{verdictFailure}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := newTestClock()
			b := newBreaker(BreakerSettings{Disabled: tt.disabled}, c.now, zeroJitter)
			for _, v := range tt.outcomes {
				p, _, _, err := b.allow(false)
				if err != nil {
					t.Fatalf("allow() error %v, want a permit", err)
				}
				b.done(p, v)
			}
			opens := b.openCount()
			open, tr := b.tripUnanswered()
			if open != tt.wantOpen {
				t.Fatalf("tripUnanswered() = %v, want %v", open, tt.wantOpen)
			}
			if !open {
				if b.openCount() != opens {
					t.Errorf("no trip, but %d opens (was %d)", b.openCount(), opens)
				}
				return
			}
			if diff := cmp.Diff([]BreakerState{BreakerClosed, BreakerOpen}, []BreakerState{tr[0].From, tr[0].To}); diff != "" {
				t.Errorf("transition (-want +got):\n%s", diff)
			}
			if st, _ := b.current(); st != BreakerHalfOpen {
				t.Errorf("state after the trip %s, want half_open at once", st)
			}
			if _, _, _, err := b.allow(false); err != nil {
				t.Errorf("allow() after the trip: %v, want the trial's permit", err)
			}
		})
	}
}
