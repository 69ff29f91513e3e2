package execution

import (
	"fmt"
	"time"
)

// The settings a CompositionError can name (CompositionError.Key).
const (
	KeyItemBudget        = "item_budget"
	KeyBudget            = "budget"
	KeyBreakerWindow     = "breaker_window"
	KeyFirstTokenTimeout = "first_token_timeout"
	KeyIdleTimeout       = "idle_timeout"
)

// CompositionError is a combination of budgets and route settings that
// cannot work, found by Policy.Validate. Key names the setting that cannot
// hold the rest (a Key* constant), Route the route ("" for the policy),
// and Msg says why with the numbers, starting with the setting's value.
type CompositionError struct {
	Key   string
	Route string
	Msg   string
}

func (e *CompositionError) Error() string { return e.Key + " " + e.Msg }

// longestAttempt is the longest deadline any attempt on route r can get:
// its base at the largest multiplier, held by the adaptive rule's ceiling
// and by the item budget.
func (p Policy) longestAttempt(r Route) time.Duration {
	base := rulesFor(r, p).base
	longest := TimeoutCeiling
	if base < TimeoutCeiling/MaxMultiplier {
		longest = base * MaxMultiplier
	}
	return min(longest, p.ItemBudget)
}

// breakerWindow is the default breaker window of route r: 5 minutes, or
// twice the route's longest attempt when that is longer.
func (p Policy) breakerWindow(r Route) time.Duration {
	return max(DefaultBreakerSettings().Window, 2*p.longestAttempt(r))
}

// BreakerWindow returns the window route r's breaker counts outcomes over:
// its configured Breaker.Window, else the default (breakerWindow).
func (p Policy) BreakerWindow(r Route) time.Duration {
	if r.Breaker.Window > 0 {
		return r.Breaker.Window
	}
	return p.breakerWindow(r)
}

// Validate composes the time scales of routes under p, as they are
// configured, and returns a *CompositionError for the first combination
// that cannot work (nil when all can):
//
//   - every route's schedule for a request at every baseline must fit the
//     item budget: under the review plan's rules one deadline (its retries
//     share it); on a profile route (1 + retries) attempts of the route's
//     deadline plus the backoff schedule; in both cases plus one failover
//     attempt of the next route's deadline when there is a next route;
//   - a profile route's floor must fit the review's work time
//     (Budget − Reserve) and the item budget;
//   - a profile route's streaming watchdogs, when configured, must not be
//     below its floor;
//   - a configured breaker window must be at least twice the route's
//     longest attempt (the adaptive ceiling held by the item budget).
//
// New does not call Validate: the engine clips at run time whatever it is
// given. Callers that load a configuration call it to refuse an
// impossible one with a message naming the numbers.
func (p Policy) Validate(routes []Route) error {
	for i, r := range routes {
		ru := rulesFor(r, p)
		bad := func(key, format string, args ...any) error {
			return &CompositionError{Key: key, Route: r.Name, Msg: fmt.Sprintf(format, args...)}
		}
		attempt := min(ru.base, TimeoutCeiling)
		need, why := attempt, fmt.Sprintf("1 attempt × %s (its retries share it)", attempt)
		if ru.perAttempt {
			n := 1 + ru.retries
			back := ru.backoffTotal(ru.retries)
			need = time.Duration(n)*attempt + back
			why = fmt.Sprintf("%d attempts × %s + %s backoff", n, attempt, back)
		}
		if i+1 < len(routes) {
			next := routes[i+1]
			na := min(rulesFor(next, p).base, TimeoutCeiling)
			need += na
			why += fmt.Sprintf(" + %s failover to %q", na, next.Name)
		}
		if need > p.ItemBudget {
			return bad(KeyItemBudget, "%s cannot hold route %q: %s", p.ItemBudget, r.Name, why)
		}
		if ru.floor > 0 {
			if work := p.Budget - p.Reserve; work < ru.floor {
				return bad(KeyBudget, "%s leaves %s to work (less the %s reserve), less than route %q's %s floor (profile %s)",
					p.Budget, work, p.Reserve, r.Name, ru.floor, r.Profile)
			}
			if r.FirstTokenTimeout > 0 && r.FirstTokenTimeout < ru.floor {
				return bad(KeyFirstTokenTimeout, "%s is below route %q's %s floor (profile %s): no client timeout may be shorter",
					r.FirstTokenTimeout, r.Name, ru.floor, r.Profile)
			}
			if r.IdleTimeout > 0 && r.IdleTimeout < ru.floor {
				return bad(KeyIdleTimeout, "%s is below route %q's %s floor (profile %s): no client timeout may be shorter",
					r.IdleTimeout, r.Name, ru.floor, r.Profile)
			}
		}
		if w, long := r.Breaker.Window, p.longestAttempt(r); w > 0 && w < 2*long {
			return bad(KeyBreakerWindow, "%s is shorter than twice route %q's longest attempt (%s)", w, r.Name, long)
		}
	}
	return nil
}
