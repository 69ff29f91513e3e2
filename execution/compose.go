package execution

import (
	"fmt"
	"time"
)

// The settings a CompositionError can name (CompositionError.Key, With).
const (
	KeyItemBudget        = "item_budget"
	KeyBudget            = "budget"
	KeyBreakerWindow     = "breaker_window"
	KeyFirstTokenTimeout = "first_token_timeout"
	KeyIdleTimeout       = "idle_timeout"
	KeyMinAttempt        = "min_attempt"
	KeyRequestTimeout    = "request_timeout"
)

// CompositionError is a combination of budgets and route settings that
// cannot work, found by Policy.Validate. Key names the setting that cannot
// hold the rest (a Key* constant), With the other setting it cannot
// compose with when there is one, Route the route ("" for the policy), and
// Msg says why with the numbers, starting with the setting's value.
type CompositionError struct {
	Key   string
	With  string
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
//     longest attempt (the adaptive ceiling held by the item budget);
//   - on a route whose retries share their request's deadline (no
//     profile), MinAttempt plus the first retry's shortest wait (0 under
//     full jitter, else the schedule's first step) must be less than the
//     route's base deadline: else no retry could ever start, however fast
//     the failure (issue 22: request_timeout = "5s" with the default 20s
//     min_attempt silently disabled every retry).
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
			return bad(KeyItemBudget, "%s cannot hold %s: %s", p.ItemBudget, routeName(r), why)
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
		if err := p.retryFits(r, ru); err != nil {
			return err
		}
	}
	return nil
}

// retryFits is Validate's check that a retry can start on route r (rules
// ru) at all: a retry shares its request's deadline, so even after an
// instant failure it needs its shortest wait (0 under full jitter, else the
// schedule's first step) plus MinAttempt inside the route's base deadline.
func (p Policy) retryFits(r Route, ru rules) error {
	if ru.perAttempt || ru.retries <= 0 || p.MaxRetriesPerItem < 0 {
		return nil // no retry, or each retry its own deadline (profile)
	}
	var wait time.Duration // full jitter: U[0, Backoff)
	if len(ru.schedule) > 0 {
		wait = ru.schedule[0]
	}
	if ru.minAttempt+wait < ru.base {
		return nil
	}
	what := fmt.Sprint(ru.minAttempt)
	if wait > 0 {
		what += fmt.Sprintf(" plus a retry's wait (%s)", wait)
	}
	advice := "raise the request timeout"
	if ru.base > wait {
		advice = fmt.Sprintf("lower it below %s or %s", ru.base-wait, advice)
	}
	return &CompositionError{Key: KeyMinAttempt, With: KeyRequestTimeout, Route: r.Name, Msg: fmt.Sprintf(
		"%s does not fit inside %s's %s request deadline, which its retries share: no retry could ever start; %s",
		what, routeName(r), ru.base, advice)}
}

// routeName names route r in a message: `route "name"`, or for an unnamed
// route (the one a configuration without [[routes]] takes from the
// environment) "the environment's route".
func routeName(r Route) string {
	if r.Name == "" {
		return "the environment's route"
	}
	return fmt.Sprintf("route %q", r.Name)
}
