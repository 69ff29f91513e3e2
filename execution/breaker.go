package execution

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// BreakerState is a circuit breaker's state.
type BreakerState int

// The breaker states. The zero value is BreakerClosed.
const (
	BreakerClosed   BreakerState = iota // calls flow; outcomes are counted
	BreakerOpen                         // no call is sent until the open period ends
	BreakerHalfOpen                     // a bounded number of probes decide: close or re-open
)

// String returns "closed", "open" or "half_open".
func (s BreakerState) String() string {
	switch s {
	case BreakerClosed:
		return "closed"
	case BreakerOpen:
		return "open"
	case BreakerHalfOpen:
		return "half_open"
	}
	return fmt.Sprintf("breaker(%d)", int(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s BreakerState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// BreakerSettings configure a route's circuit breaker (REFERENCE F.1). A
// zero field takes the default shown; set Disabled to run without a breaker.
//
// Seed 004 asks to "use rolling timeout/error rates rather than one global
// consecutive-failure count" and to "temporarily open unhealthy routes". The
// breaker counts outcomes on a rolling time window (not consecutive runs,
// so an unrelated success does not reset it). Each outcome is counted in the
// bucket of the moment it completes, so a 300-second timeout counts however
// long ago its call was admitted. An outcome is a success (an accepted
// answer), a failure (5xx, overload, connection, and every unusable answer:
// prose, a schema violation, empty or cut content, "an error of that route"
// as issue 22 says) or a timeout; cancellations, client errors (4xx), rate
// limits and timeouts our own budget clipped never count.
//
// In the closed state it opens
//
//   - at once when the window holds no success and either a timeout (the
//     route answered nothing while a request ran to its deadline: at most
//     one wave of the route's cap of timeouts) or QuickTrip failures (a
//     route that answers nothing usable: a 5xx storm, a model that ignores
//     the output contract);
//   - on a rate, and only over at least MinCalls outcomes (a smaller sample
//     is not a rate: three failures among the first five outcomes of a
//     flaky start are noise): (failures+timeouts)/calls ≥ FailureRate or
//     timeouts/calls ≥ TimeoutRate;
//   - at once when an item on its last usable route has spent its retries
//     on a failure and the window holds failures and timeouts and no
//     answer, however few (tripUnanswered; outage.go).
//
// Opened with no answer in the window, or on the timeout rate, it is
// half-open at once: the failures or the deadlines already seen were its
// cool-down, and the retries waiting for it are its trial calls, so a flaky
// start costs one backoff, not an open period. Opened on the failure rate
// (answers among the failures), or after a failed trial,
// it stays open for OpenBase, doubling with each further failed trial
// (capped at OpenMax), plus up to OpenJitter of that. Half-open, it admits HalfOpenProbes trials at a time
// (the engine's probe, or on the last usable route the waiting item's own
// request); CloseAfter trial successes in a row close it, a failed or
// timed-out trial re-opens it for longer (the cool-down re-armed) and marks
// the route unresponsive until it closes.
//
// Window defaults to max(5m, 2 × the route's longest attempt); a shorter
// configured one is an error of Policy.Validate.
type BreakerSettings struct {
	Disabled       bool
	Window         time.Duration // max(5m, 2× the longest attempt)
	Buckets        int           // 10
	MinCalls       int           // 10: outcomes in the window before a rate is judged
	QuickTrip      int           // 3: failures with no success in the window that open it at once
	FailureRate    float64       // 0.5
	TimeoutRate    float64       // 0.4
	OpenBase       time.Duration // 30s
	OpenMax        time.Duration // 120s
	OpenJitter     float64       // 0.1 (a fraction of the open period); negative: none
	HalfOpenProbes int           // 1
	CloseAfter     int           // 1 (a trial is a real request)
}

// DefaultBreakerSettings returns the documented breaker defaults.
func DefaultBreakerSettings() BreakerSettings {
	return BreakerSettings{
		Window:         5 * time.Minute,
		Buckets:        10,
		MinCalls:       10,
		QuickTrip:      3,
		FailureRate:    0.5,
		TimeoutRate:    0.4,
		OpenBase:       30 * time.Second,
		OpenMax:        120 * time.Second,
		OpenJitter:     0.1,
		HalfOpenProbes: 1,
		CloseAfter:     1,
	}
}

// withDefaults fills zero fields from DefaultBreakerSettings.
func (s BreakerSettings) withDefaults() BreakerSettings {
	d := DefaultBreakerSettings()
	if s.Window <= 0 {
		s.Window = d.Window
	}
	if s.Buckets <= 0 {
		s.Buckets = d.Buckets
	}
	if s.MinCalls <= 0 {
		s.MinCalls = d.MinCalls
	}
	if s.QuickTrip <= 0 {
		s.QuickTrip = d.QuickTrip
	}
	if s.FailureRate <= 0 {
		s.FailureRate = d.FailureRate
	}
	if s.TimeoutRate <= 0 {
		s.TimeoutRate = d.TimeoutRate
	}
	if s.OpenBase <= 0 {
		s.OpenBase = d.OpenBase
	}
	if s.OpenMax <= 0 {
		s.OpenMax = max(d.OpenMax, s.OpenBase)
	}
	switch {
	case s.OpenJitter == 0:
		s.OpenJitter = d.OpenJitter
	case s.OpenJitter < 0:
		s.OpenJitter = 0
	}
	if s.HalfOpenProbes <= 0 {
		s.HalfOpenProbes = d.HalfOpenProbes
	}
	if s.CloseAfter <= 0 {
		s.CloseAfter = d.CloseAfter
	}
	return s
}

// verdict is what an attempt's outcome says about a route's health.
type verdict int

const (
	verdictIgnore   verdict = iota // says nothing about the route: cancelled, 4xx, 429, clipped by our budget
	verdictSuccess                 // the route answered
	verdictFailure                 // 5xx, overload, connection: the server failed
	verdictTimeout                 // the route did not answer within its own deadline
	verdictUnusable                // an answer the caller cannot use: counted as a failure
)

func (v verdict) String() string {
	return [...]string{"ignore", "success", "failure", "timeout", "unusable"}[v]
}

// failed reports a verdict that counts against the route.
func (v verdict) failed() bool {
	return v == verdictFailure || v == verdictTimeout || v == verdictUnusable
}

// Errors a breaker gives instead of a permit.
var (
	errBreakerOpen  = errors.New("circuit breaker open")
	errHalfOpenBusy = errors.New("circuit breaker half-open: probe already in flight")
)

// permit is the right to send one call. It remembers the generation it was
// given in, so an outcome from before a state change is ignored (P5).
type permit struct {
	gen   uint64
	probe bool
}

// transition is one change of a breaker's state.
type transition struct {
	At       time.Time
	From, To BreakerState
}

type bucket struct {
	id                     int64
	calls, fails, timeouts int
	unusable               int // of fails: unusable answers
	succ                   int
}

// breaker is a rolling-window circuit breaker with generation-tagged
// permits. It is safe for concurrent use; the clock and the jitter source
// are injected.
type breaker struct {
	s      BreakerSettings
	now    func() time.Time
	jitter func() float64 // U[0,1)

	mu        sync.Mutex
	epoch     time.Time
	bucketDur time.Duration
	buckets   []bucket
	state     BreakerState
	gen       uint64
	openUntil time.Time
	reopens   int
	probes    int // probes in flight
	probeOK   int // probe successes in a row
	opens     int // transitions to open, ever
	// generous: this half-open admits every waiting retry as a trial (it
	// is the first after a trip with no unusable answer in the window);
	// generousNext carries it from the trip to the half-open.
	generous, generousNext bool
	// unresponsive: the last probe failed or timed out; cleared when the breaker closes.
	unresponsive bool
	// changed is closed (and replaced) on every state change and every
	// probe outcome, for callers waiting for the route.
	changed chan struct{}
}

func newBreaker(s BreakerSettings, now func() time.Time, jitter func() float64) *breaker {
	s = s.withDefaults()
	b := &breaker{s: s, now: now, jitter: jitter, epoch: now(), changed: make(chan struct{})}
	b.bucketDur = s.Window / time.Duration(s.Buckets)
	if b.bucketDur <= 0 {
		b.bucketDur = 1
	}
	b.buckets = make([]bucket, s.Buckets)
	for i := range b.buckets {
		b.buckets[i].id = -1
	}
	return b
}

func (b *breaker) bucketID(t time.Time) int64 { return int64(t.Sub(b.epoch) / b.bucketDur) }

// state returns the breaker's state at now, moving open to half-open when the
// open period is over. tr holds that transition, if any.
func (b *breaker) current() (st BreakerState, tr []transition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tr = b.advance(b.now())
	return b.state, tr
}

// peek returns the breaker's state without moving it (an open breaker
// whose open period is over reads half-open), for progress reports.
func (b *breaker) peek() BreakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.s.Disabled:
		return BreakerClosed
	case b.state == BreakerOpen && !b.now().Before(b.openUntil):
		return BreakerHalfOpen
	}
	return b.state
}

// breakerView is what a caller waiting for a route needs to know.
type breakerView struct {
	state        BreakerState
	busy         bool      // half-open with every probe slot taken
	unresponsive bool      // the last probe failed or timed out
	openUntil    time.Time // state open: when it turns half-open
	changed      <-chan struct{}
}

// view returns the breaker's state at now, as current does, with what a
// waiter needs; retry says the waiter is an item's retry (which a generous
// half-open admits however many trials are in flight).
func (b *breaker) view(retry bool) (breakerView, []transition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tr := b.advance(b.now())
	v := breakerView{state: b.state, unresponsive: b.unresponsive, openUntil: b.openUntil, changed: b.changed}
	if b.s.Disabled {
		v.state = BreakerClosed
	}
	v.busy = v.state == BreakerHalfOpen && b.probes >= b.s.HalfOpenProbes && !(b.generous && retry)
	return v, tr
}

// notify wakes every waiter; b.mu is held.
func (b *breaker) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// openFor reports how long the breaker stays open (0 when it is not open).
func (b *breaker) openFor() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != BreakerOpen {
		return 0
	}
	return max(0, b.openUntil.Sub(b.now()))
}

func (b *breaker) advance(now time.Time) []transition {
	if b.state == BreakerOpen && !now.Before(b.openUntil) {
		return []transition{b.set(now, BreakerHalfOpen)}
	}
	return nil
}

func (b *breaker) set(now time.Time, to BreakerState) transition {
	tr := transition{At: now, From: b.state, To: to}
	b.state = to
	b.gen++
	b.probes, b.probeOK = 0, 0
	b.generous, b.generousNext = to == BreakerHalfOpen && b.generousNext, false
	b.notify()
	switch to {
	case BreakerOpen:
		// OpenBase after a trip on the failure rate and after the first
		// failed trial, then doubling with each failed trial: 30 s, 30 s,
		// 60 s, 120 s, 120 s.
		d := b.s.OpenBase
		for i := 1; i < b.reopens && d < b.s.OpenMax; i++ {
			d *= 2
		}
		d = min(d, b.s.OpenMax)
		if b.s.OpenJitter > 0 && b.jitter != nil {
			d += time.Duration(float64(d) * b.s.OpenJitter * b.jitter())
		}
		b.openUntil = now.Add(d)
		b.opens++
	case BreakerClosed:
		b.reopens = 0
		b.unresponsive = false
		for i := range b.buckets {
			b.buckets[i] = bucket{id: -1}
		}
	}
	return tr
}

// allow asks for a permit to send one call now; retry says the caller is
// an item's retry. It fails with errBreakerOpen or errHalfOpenBusy. st is
// the state the permit was given in.
func (b *breaker) allow(retry bool) (p permit, st BreakerState, tr []transition, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	tr = b.advance(now)
	if b.s.Disabled {
		return permit{gen: b.gen}, BreakerClosed, tr, nil
	}
	switch b.state {
	case BreakerOpen:
		return permit{}, b.state, tr, errBreakerOpen
	case BreakerHalfOpen:
		if b.probes >= b.s.HalfOpenProbes && !(b.generous && retry) {
			return permit{}, b.state, tr, errHalfOpenBusy
		}
		b.probes++
		return permit{gen: b.gen, probe: true}, b.state, tr, nil
	}
	return permit{gen: b.gen}, b.state, tr, nil
}

// done records a permit's outcome. An outcome from an older generation is
// dropped; verdictIgnore frees a probe slot without a verdict.
func (b *breaker) done(p permit, v verdict) []transition {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.s.Disabled || p.gen != b.gen {
		return nil
	}
	now := b.now()
	switch b.state {
	case BreakerHalfOpen:
		if !p.probe {
			return nil
		}
		b.probes--
		switch v {
		case verdictSuccess:
			b.probeOK++
			if b.probeOK >= b.s.CloseAfter {
				return []transition{b.set(now, BreakerClosed)}
			}
		case verdictFailure, verdictTimeout, verdictUnusable:
			b.reopens++
			tr := b.set(now, BreakerOpen)
			b.unresponsive = true // until a probe succeeds: waiters fail now
			return []transition{tr}
		}
		b.notify()
		return nil
	case BreakerClosed:
		if v == verdictIgnore {
			return nil
		}
		cur := b.bucketID(now) // counted when it completes, however long it ran
		bk := &b.buckets[int(cur%int64(len(b.buckets)))]
		if bk.id != cur {
			*bk = bucket{id: cur}
		}
		bk.calls++
		switch v {
		case verdictSuccess:
			bk.succ++
		case verdictFailure:
			bk.fails++
		case verdictUnusable:
			bk.fails++
			bk.unusable++
		case verdictTimeout:
			bk.timeouts++
		}
		if trip, atOnce, generous := b.tripped(cur); trip {
			return []transition{b.open(now, atOnce, generous)}
		}
	}
	return nil
}

// open opens the breaker at now: half-open at once when atOnce (what was
// waited, failures or deadlines, was the cool-down), its first half-open
// generous or not (tripped).
func (b *breaker) open(now time.Time, atOnce, generous bool) transition {
	tr := b.set(now, BreakerOpen)
	if atOnce {
		b.openUntil = now
	}
	b.generousNext = generous
	return tr
}

// unanswered reports whether a window of calls holds not one answer:
// every call failed or timed out.
func unanswered(calls, fails, timeouts int) bool { return calls > 0 && fails+timeouts == calls }

// window sums the buckets inside the window that ends in bucket cur.
func (b *breaker) window(cur int64) (calls, fails, timeouts, unusable int) {
	for _, bk := range b.buckets {
		if bk.id >= 0 && bk.id > cur-int64(len(b.buckets)) && bk.id <= cur {
			calls += bk.calls
			fails += bk.fails
			timeouts += bk.timeouts
			unusable += bk.unusable
		}
	}
	return calls, fails, timeouts, unusable
}

// tripped reports whether the window ending in bucket cur opens the
// breaker; whether it is half-open at once (no answer in the window, or a
// timeout rate: what was waited was the cool-down, and the waiting retries
// are its trial calls) rather than open for its open period (a failure
// rate among answers); and whether its first half-open is generous,
// admitting every waiting retry as a trial call: the retries the items
// would send with no breaker (each at most its own), so a flaky start's go
// out together and a route that recovers gets them all at once, while new
// work waits for their verdict. Not when the window holds an unusable
// answer: a model that ignores the output contract answers every trial the
// same, so its trials go one at a time.
func (b *breaker) tripped(cur int64) (trip, atOnce, generous bool) {
	calls, fails, timeouts, unusable := b.window(cur)
	generous = unusable == 0
	if unanswered(calls, fails, timeouts) && (timeouts > 0 || fails >= b.s.QuickTrip) {
		return true, true, generous // not one answer: a deadline ran out, or a storm of failures
	}
	if calls < b.s.MinCalls {
		return false, false, false
	}
	if float64(timeouts) >= b.s.TimeoutRate*float64(calls) {
		return true, true, generous // the deadline already waited was the cool-down
	}
	return float64(fails+timeouts) >= b.s.FailureRate*float64(calls), false, generous
}

// tripUnanswered opens the breaker, half-open at once, when it is closed
// and its window holds failures and timeouts and not one answer, none of
// them unusable: the rule that opens it at once on QuickTrip failures,
// applied when an item whose last usable route this is has spent its
// retries there (outage.go). Fewer than QuickTrip failures are then not a
// smaller sample but every call the route has seen: a one-item review's
// two calls into a blip are its whole storm. A window with an unusable
// answer is left to its rules: a model that ignores the output contract
// is not an outage that waiting cures. It reports whether the breaker is
// open now, with the transition.
func (b *breaker) tripUnanswered() (bool, []transition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	tr := b.advance(now)
	if b.s.Disabled || b.state != BreakerClosed {
		return false, tr
	}
	calls, fails, timeouts, unusable := b.window(b.bucketID(now))
	if unusable > 0 || !unanswered(calls, fails, timeouts) {
		return false, tr
	}
	return true, append(tr, b.open(now, true, true))
}

// unusableOnly reports whether the breaker's window holds at least
// QuickTrip unusable answers and no success: a model that answers, but
// never in the output contract.
func (b *breaker) unusableOnly() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	calls, fails, timeouts, unusable := b.window(b.bucketID(b.now()))
	return unusable >= b.s.QuickTrip && fails+timeouts == calls
}

// openCount returns how many times the breaker has opened.
func (b *breaker) openCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opens
}
