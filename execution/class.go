package execution

import "fmt"

// Class is the one classification of an attempt's result. Every decision of
// the engine (retry, failover, breaker verdict, disabling a route) reads the
// Class, never an error string.
type Class int

// The classes. The zero value is ClassUnknown.
const (
	ClassUnknown       Class = iota
	ClassSuccess             // a valid answer
	ClassRateLimited         // 429 or an in-body rate limit
	ClassOverloaded          // 503, 529, "server busy"
	ClassServerError         // 500, 502, 504, proxy error pages
	ClassConnection          // dial, DNS, refused, reset, EOF before an answer
	ClassTimeout             // our attempt, first-token or idle deadline
	ClassBadResponse         // an answer that cannot be used (invalid JSON, empty, truncated)
	ClassAuth                // 401, 403 permission
	ClassPayment             // 402
	ClassModelNotFound       // 404 model, invalid model
	ClassBadRequest          // 400/422 and other client errors: our bug or our config
	ClassCancelled           // our own context: the caller, a signal, the budget
	ClassRejected            // not sent: breaker open, bulkhead full, route cooling down or disabled
)

var classNames = [...]string{
	ClassUnknown:       "unknown",
	ClassSuccess:       "success",
	ClassRateLimited:   "rate_limited",
	ClassOverloaded:    "overloaded",
	ClassServerError:   "server_error",
	ClassConnection:    "connection",
	ClassTimeout:       "timeout",
	ClassBadResponse:   "bad_response",
	ClassAuth:          "auth",
	ClassPayment:       "payment",
	ClassModelNotFound: "model_not_found",
	ClassBadRequest:    "bad_request",
	ClassCancelled:     "cancelled",
	ClassRejected:      "rejected",
}

// String returns the class's snake_case name, as used in reports.
func (c Class) String() string {
	if c >= 0 && int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// MarshalText implements encoding.TextMarshaler.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("unknown class %q", b)
}
