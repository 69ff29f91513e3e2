package execution

import (
	"fmt"
	"time"
)

// Profile is a named set of rules that a route follows instead of the
// engine's defaults (DESIGN.md §3, "Route profiles"). The zero value,
// ProfileNone, is the review plan's rules.
type Profile int

// The profiles.
const (
	ProfileNone Profile = iota
	// ProfileLiteLLM is the LiteLLM client standard (litellm-client-timeouts
	// v1.0) for the primary slow-model path: no client timeout below 300s.
	ProfileLiteLLM
	// ProfileLiteLLMAux is the same standard for the auxiliary gpu-dense
	// class (delegation, x_search): no client timeout below 120s.
	ProfileLiteLLMAux
)

var profileNames = [...]string{ProfileNone: "", ProfileLiteLLM: "litellm", ProfileLiteLLMAux: "litellm-aux"}

// String returns the profile's configuration name ("" for none).
func (p Profile) String() string {
	if p >= 0 && int(p) < len(profileNames) {
		return profileNames[p]
	}
	return fmt.Sprintf("profile(%d)", int(p))
}

// MarshalText implements encoding.TextMarshaler.
func (p Profile) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// ParseProfile returns the profile named s: "", "litellm" or "litellm-aux".
func ParseProfile(s string) (Profile, error) {
	for i, n := range profileNames {
		if n == s {
			return Profile(i), nil
		}
	}
	return ProfileNone, fmt.Errorf("unknown profile %q (want \"litellm\" or \"litellm-aux\")", s)
}

// ProfileRules are what a profile changes on its route.
//
// On a profile route the request deadline's base is at least Floor, and no
// attempt and no streaming watchdog ever starts with less than Floor: an
// attempt that cannot get it is not sent. Each attempt has its own
// deadline (the standard's rule is per request), so Retries attempts after
// the first each get a full deadline again, after Backoff[n-1] (a
// Retry-After may lengthen the wait, never shorten it). Seed 003 §3: "On
// timeout (408) or 5xx: retry up to 2 times with exponential backoff (15s,
// 45s)": the client's own timeout too, since the incident's 408s were
// clients giving up. A 429 waits its Retry-After, else RateLimitBackoff.
// 401/403 are never retried (as everywhere). Request starts on the route
// are at least MinInterval apart. The review-wide retry budget and the
// review plan's per-item retry cap and "most of the deadline used" rule do
// not apply to a profile route's own retries: the standard bounds them.
type ProfileRules struct {
	Floor            time.Duration
	Retries          int
	Backoff          []time.Duration
	RateLimitBackoff time.Duration
	MinInterval      time.Duration
}

// Rules returns the profile's rules; ok is false for ProfileNone.
func (p Profile) Rules() (r ProfileRules, ok bool) {
	switch p {
	case ProfileLiteLLM, ProfileLiteLLMAux:
		r = ProfileRules{
			Floor:            300 * time.Second,
			Retries:          2,
			Backoff:          []time.Duration{15 * time.Second, 45 * time.Second},
			RateLimitBackoff: 60 * time.Second,
			MinInterval:      5 * time.Second,
		}
		if p == ProfileLiteLLMAux {
			r.Floor = 120 * time.Second
		}
		return r, true
	}
	return ProfileRules{}, false
}

// rules is what the engine applies on one route: the policy's defaults or
// the route's profile, resolved once.
type rules struct {
	profile    bool
	base       time.Duration // base of the adaptive deadline (≥ Floor on a profile route)
	floor      time.Duration // no attempt or watchdog below it; 0: none
	minAttempt time.Duration // no attempt starts with less than this
	retries    int           // per (item, route)
	perAttempt bool          // each attempt its own deadline (profile) rather than sharing the route request's
	minGap     time.Duration // pacing
	rateLimit  time.Duration // 429 without Retry-After
	schedule   []time.Duration
}

// rulesFor resolves route r's rules under policy p.
func rulesFor(r Route, p Policy) rules {
	base := r.RequestTimeout
	if base <= 0 {
		base = p.RequestTimeout
	}
	out := rules{
		base: base, minAttempt: p.MinAttempt, retries: p.MaxRetriesPerRoute,
		minGap: r.MinInterval, rateLimit: p.RateLimitBackoff, schedule: p.BackoffSchedule,
	}
	pr, ok := r.Profile.Rules()
	if !ok {
		return out
	}
	out.profile, out.perAttempt = true, true
	out.base = max(base, pr.Floor)
	out.floor = pr.Floor
	out.minAttempt = max(p.MinAttempt, pr.Floor)
	out.retries = pr.Retries
	out.minGap = max(r.MinInterval, pr.MinInterval)
	out.rateLimit = pr.RateLimitBackoff
	out.schedule = pr.Backoff
	return out
}

// backoffTotal is the sum of the fixed waits before retries 1..n.
func (r rules) backoffTotal(n int) time.Duration {
	var d time.Duration
	for i := 1; i <= n && len(r.schedule) > 0; i++ {
		d += r.schedule[min(i, len(r.schedule))-1]
	}
	return d
}

// failoverReserve is the part of an item's remaining time that a route
// with a fallback leaves for one failover attempt on it: the fallback's
// base deadline when the current route still gets its minimum attempt
// besides; else, for a fallback without a floor, half of what remains
// (so that under a short review budget both routes get a turn); else
// nothing. next is nil when there is no fallback.
func failoverReserve(cur rules, next *rules, remaining time.Duration) time.Duration {
	switch {
	case next == nil || remaining <= 0:
		return 0
	case remaining-next.base >= cur.minAttempt:
		return next.base
	case next.floor == 0 && remaining/2 >= max(cur.minAttempt, next.minAttempt):
		return remaining / 2
	}
	return 0
}
