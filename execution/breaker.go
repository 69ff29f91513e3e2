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
// The breaker counts outcomes on a rolling time window (not consecutive
// runs, so an unrelated success does not reset it). Each outcome is counted
// in the bucket of the moment it completes, so a 300-second timeout counts
// however long ago its call was admitted. In the closed state it opens when
// the window holds a timeout and nothing but failures and timeouts (the
// route answered nothing while a request ran to its deadline: at most one
// wave of the route's cap of timeouts), or when at least MinCalls outcomes
// are in the window and either (failures+timeouts)/calls ≥ FailureRate or
// timeouts/calls ≥ TimeoutRate. Opened by timeouts, it probes at once (the
// deadline already waited was its cool-down); opened by failures, or after
// a failed probe, it stays open for OpenBase·2^reopens (capped at OpenMax)
// plus up to OpenJitter of that. Then it admits HalfOpenProbes probes at a
// time; CloseAfter probe successes in a row close it, a probe failure or
// timeout re-opens it for longer and marks the route unresponsive until it
// closes (the engine's items stop waiting for it). Cancellations, client errors (4xx) and
// rate limits never count.
//
// Window defaults to max(5m, 2 × the route's longest attempt); a shorter
// configured one is an error of Policy.Validate.
type BreakerSettings struct {
	Disabled       bool
	Window         time.Duration // max(5m, 2× the longest attempt)
	Buckets        int           // 10
	MinCalls       int           // 5
	FailureRate    float64       // 0.5
	TimeoutRate    float64       // 0.4
	OpenBase       time.Duration // 30s
	OpenMax        time.Duration // 120s
	OpenJitter     float64       // 0.1 (a fraction of the open period); negative: none
	HalfOpenProbes int           // 1
	CloseAfter     int           // 1 (the engine's probe is a real request)
}

// DefaultBreakerSettings returns the documented breaker defaults.
func DefaultBreakerSettings() BreakerSettings {
	return BreakerSettings{
		Window:         5 * time.Minute,
		Buckets:        10,
		MinCalls:       5,
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
	verdictIgnore  verdict = iota // says nothing about the route: cancelled, 4xx, 429, clipped by our budget
	verdictSuccess                // the route answered
	verdictFailure                // 5xx, overload, connection, empty answer
	verdictTimeout                // the route did not answer within its own deadline
)

func (v verdict) String() string {
	return [...]string{"ignore", "success", "failure", "timeout"}[v]
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

// breakerView is what a caller waiting for a route needs to know.
type breakerView struct {
	state        BreakerState
	busy         bool      // half-open with every probe slot taken
	unresponsive bool      // the last probe failed or timed out
	openUntil    time.Time // state open: when it turns half-open
	changed      <-chan struct{}
}

// view returns the breaker's state at now, as current does, with what a
// waiter needs.
func (b *breaker) view() (breakerView, []transition) {
	b.mu.Lock()
	defer b.mu.Unlock()
	tr := b.advance(b.now())
	v := breakerView{state: b.state, unresponsive: b.unresponsive, openUntil: b.openUntil, changed: b.changed}
	if b.s.Disabled {
		v.state = BreakerClosed
	}
	v.busy = v.state == BreakerHalfOpen && b.probes >= b.s.HalfOpenProbes
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
	b.notify()
	switch to {
	case BreakerOpen:
		d := b.s.OpenBase
		for i := 0; i < b.reopens && d < b.s.OpenMax; i++ {
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

// allow asks for a permit to send one call now. It fails with errBreakerOpen
// or errHalfOpenBusy. st is the state the permit was given in.
func (b *breaker) allow() (p permit, st BreakerState, tr []transition, err error) {
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
		if b.probes >= b.s.HalfOpenProbes {
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
		case verdictFailure, verdictTimeout:
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
		case verdictTimeout:
			bk.timeouts++
		}
		if trip, byTimeouts := b.tripped(cur); trip {
			tr := b.set(now, BreakerOpen)
			if byTimeouts {
				b.openUntil = now // probe at once: the deadline waited was the cool-down
			}
			return []transition{tr}
		}
	}
	return nil
}

// window sums the buckets inside the window that ends in bucket cur.
func (b *breaker) window(cur int64) (calls, fails, timeouts int) {
	for _, bk := range b.buckets {
		if bk.id >= 0 && bk.id > cur-int64(len(b.buckets)) && bk.id <= cur {
			calls += bk.calls
			fails += bk.fails
			timeouts += bk.timeouts
		}
	}
	return calls, fails, timeouts
}

// tripped reports whether the window ending in bucket cur opens the
// breaker, and whether timeouts did it.
func (b *breaker) tripped(cur int64) (trip, byTimeouts bool) {
	calls, fails, timeouts := b.window(cur)
	if timeouts > 0 && fails+timeouts == calls {
		return true, true // not one answer while a request ran to its deadline
	}
	if calls < b.s.MinCalls {
		return false, false
	}
	if float64(timeouts) >= b.s.TimeoutRate*float64(calls) {
		return true, true
	}
	return float64(fails+timeouts) >= b.s.FailureRate*float64(calls), false
}

// openCount returns how many times the breaker has opened.
func (b *breaker) openCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opens
}
