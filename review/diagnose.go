package review

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/org/warden/execution"
)

// DiagnosisKind names a known cause of failed model calls.
type DiagnosisKind string

// The diagnosis kinds, in the order Diagnose lists them for a route.
const (
	// DiagnosisProviderWide: calls timed out on two or more routes at
	// once (see Diagnose).
	DiagnosisProviderWide DiagnosisKind = "provider_wide"
	// DiagnosisAuth: a 401 or 403; the key or its permissions, not the
	// model, are the problem.
	DiagnosisAuth DiagnosisKind = "auth"
	// DiagnosisPayment: a 402; the account is out of credits.
	DiagnosisPayment DiagnosisKind = "payment"
	// DiagnosisModelNotFound: the route does not serve the configured model.
	DiagnosisModelNotFound DiagnosisKind = "model_not_found"
	// DiagnosisOutputContract: the model answered, but not with the JSON
	// findings object the prompt asks for (prose, another shape): the
	// route works, the model does not follow the output contract.
	DiagnosisOutputContract DiagnosisKind = "output_contract"
	// DiagnosisBadAnswer: the route answered, but answers could not be
	// used for another reason than the output contract: a 200 whose body
	// was cut short or is not JSON, an empty answer, one cut off at
	// max_tokens (issue 22: not "cannot connect" to a server that
	// answered).
	DiagnosisBadAnswer DiagnosisKind = "bad_answer"
	// DiagnosisServerErrors: calls answered 5xx (500, 502, 503, 504, 529).
	DiagnosisServerErrors DiagnosisKind = "server_errors"
	// DiagnosisUnreachable: calls could not connect (refused, reset, DNS).
	DiagnosisUnreachable DiagnosisKind = "unreachable"
	// DiagnosisDeadlineTooShort: timeouts on a route whose successful calls
	// ran close to the deadline.
	DiagnosisDeadlineTooShort DiagnosisKind = "deadline_too_short"
	// DiagnosisStalled: timeouts on a route where no call succeeded.
	DiagnosisStalled DiagnosisKind = "backend_stalled"
	// DiagnosisIntermittent: timeouts on a route whose successful calls
	// finished well inside the deadline.
	DiagnosisIntermittent DiagnosisKind = "intermittent_stalls"
	// DiagnosisRateLimited: 429s; the route cooled down as asked.
	DiagnosisRateLimited DiagnosisKind = "rate_limited"
)

// CloseToDeadline is the fraction of a route's effective deadline at or
// above which its successful calls' p95 counts as close to the deadline.
const CloseToDeadline = 0.75

// Diagnosis is one probable cause of failed calls, with its evidence.
type Diagnosis struct {
	Kind   DiagnosisKind `json:"kind"`
	Routes []string      `json:"routes"` // the routes concerned, in failover order
	Calls  int           `json:"calls"`  // the calls (attempts sent) that show it
	// Message is the diagnosis in one line, as every format prints it:
	// "primary: deadline likely too short: successes p95 110 s against a
	// 120 s deadline (3 of 40 calls timed out)".
	Message string `json:"message"`
	// Excerpt is, for output_contract, the start of what the model
	// answered (Item.Answer of the first such item), sanitised; the
	// sinks show it as untrusted text.
	Excerpt string `json:"excerpt,omitempty"`
}

// routeEvidence is what the attempts say about one route.
type routeEvidence struct {
	name      string
	classes   map[string]int
	successes []int64 // durations of successful calls, ms
	deadlines []int64 // effective deadlines of timed-out calls, ms
	calls     int     // attempts sent
	retryMS   int64   // the longest Retry-After of a rate-limited call
	// Of the items whose last call was on the route:
	notContract int            // failed because the answer was not the output contract
	excerpt     string         // the first such item's Answer
	badAnswer   int            // failed because the answer was unusable otherwise (cut short, empty, ...)
	badProblem  string         // the first such item's AnswerProblem
	stopped     map[string]int // failed items by the stop reason that ended them (circuit_open, ...)
	failed      map[string]int // failed items by the class of their last call
}

// timedOut is one timed-out call, for the provider-wide rule.
type timedOut struct {
	route      string
	item       int
	start, end int64
	timed      bool // start is known
}

// Diagnose derives the diagnoses of r from its items' attempt records. It is
// the one place these rules live; every format renders its result, which
// Run stores in Report.Diagnoses. The rules, per route (attempts of one
// request that several items share are counted once):
//
//   - provider_wide: timed-out calls on two or more routes at once: in the
//     same item (one item budget), or, when the attempts carry their start
//     times, with overlapping [start, start+duration] intervals.
//   - auth: a call of class auth (HTTP 401, 403): "key or permission
//     problem, not model quality".
//   - payment: a call of class payment (HTTP 402).
//   - model_not_found: a call of class model_not_found: "model name not
//     served by this route".
//   - output_contract: items failed because the model answered, but not
//     with the JSON findings object (Item.AnswerProblem is
//     ProblemNotContract): "model ignores the output contract", with an
//     excerpt of what it said.
//   - bad_answer: items failed bad_response for another problem (a 200
//     whose body was cut short or is not JSON, an empty answer, one cut
//     off at max_tokens): "bad answers, not a connection problem", with
//     the first item's problem.
//   - server_errors: calls of class server_error or overloaded (5xx):
//     "server failing" when none succeeded, else "server errors" when an
//     item failed on it (a 500 that a retry cured is no diagnosis), with
//     how many items the breaker (circuit_open) and the retry budget
//     stopped.
//   - unreachable: calls of class connection: "cannot connect" when none
//     succeeded, else "connection failures" when an item failed on it.
//   - timeouts (one of three): with no successful call on the route,
//     backend_stalled ("backend stalled or unreachable"); else, with the
//     successes' p95 duration (nearest rank) at or above CloseToDeadline of
//     the route's effective deadline (the median effective timeout of its
//     timed-out calls), deadline_too_short ("deadline likely too short:
//     successes p95 110 s against a 120 s deadline"); else
//     intermittent_stalls.
//   - rate_limited: a call of class rate_limited (HTTP 429): "rate limited;
//     honoured Retry-After N s" with the longest Retry-After the server
//     sent, or the review's rate_limit_backoff when it sent none; and
//     when 429s cut the route's concurrency, to how many.
//
// Provider-wide comes first, then each route in the report's route order
// (routes only the attempts name follow, by name), in the order above.
func Diagnose(r *Report) []Diagnosis {
	out := []Diagnosis{}
	if r == nil {
		return out
	}
	var order []string
	for _, rt := range r.Routes {
		order = append(order, rt.Name)
	}
	ev := map[string]*routeEvidence{}
	var timeouts []timedOut
	timed := false
	seen := map[int]bool{} // requests already counted (batched items share one)
	evidence := func(route string) *routeEvidence {
		e := ev[route]
		if e == nil {
			e = &routeEvidence{name: route, classes: map[string]int{}, stopped: map[string]int{}, failed: map[string]int{}}
			ev[route] = e
			if !slices.Contains(order, route) {
				order = append(order, route)
			}
		}
		return e
	}
	for i, it := range r.Items {
		if it.Status == StatusFailed && it.Route != "" {
			evidence(it.Route).failedItem(it)
		}
		if req := it.Request; req > 0 {
			if seen[req] {
				continue
			}
			seen[req] = true
		}
		for _, a := range it.Attempts {
			if a.Class == "rejected" || a.Class == "" {
				continue
			}
			e := evidence(a.Route)
			e.calls++
			e.classes[a.Class]++
			switch a.Class {
			case "success":
				e.successes = append(e.successes, a.DurationMS)
			case "timeout":
				e.deadlines = append(e.deadlines, a.TimeoutEffectiveMS)
				timeouts = append(timeouts, timedOut{route: a.Route, item: i, start: a.StartMS, end: a.StartMS + a.DurationMS})
			case "rate_limited":
				e.retryMS = max(e.retryMS, a.RetryAfterMS)
			}
			timed = timed || a.StartMS > 0
		}
	}
	known := len(r.Routes)
	slices.SortStableFunc(order[known:], strings.Compare)

	if d, ok := providerWide(timeouts, timed, order); ok {
		out = append(out, d)
	}
	for _, name := range order {
		if e := ev[name]; e != nil {
			out = append(out, e.diagnoses(r)...)
		}
	}
	return out
}

// failedItem notes what a failed item whose last call was on the route
// says: an answer that was not the output contract, another unusable
// answer, what stopped it, or its class.
func (e *routeEvidence) failedItem(it Item) {
	switch {
	case it.AnswerProblem == ProblemNotContract:
		e.notContract++
		if e.excerpt == "" {
			e.excerpt = it.Answer
		}
	case it.AnswerProblem != "" && it.Reason == execution.ClassBadResponse.String():
		e.badAnswer++
		if e.badProblem == "" {
			e.badProblem = it.AnswerProblem
		}
	case slices.Contains(stopReasons, it.Reason):
		e.stopped[it.Reason]++
	default:
		e.failed[it.Reason]++
	}
}

// providerWide finds timed-out calls on different routes at once.
func providerWide(ts []timedOut, timed bool, order []string) (Diagnosis, bool) {
	involved := make([]bool, len(ts))
	for i := range ts {
		for j := i + 1; j < len(ts); j++ {
			a, b := ts[i], ts[j]
			if a.route == b.route {
				continue
			}
			if a.item == b.item || (timed && a.start < b.end && b.start < a.end) {
				involved[i], involved[j] = true, true
			}
		}
	}
	var routes []string
	n := 0
	for i, t := range ts {
		if involved[i] {
			n++
			if !slices.Contains(routes, t.route) {
				routes = append(routes, t.route)
			}
		}
	}
	if len(routes) < 2 {
		return Diagnosis{}, false
	}
	slices.SortStableFunc(routes, func(a, b string) int {
		return cmp.Compare(slices.Index(order, a), slices.Index(order, b))
	})
	return Diagnosis{
		Kind: DiagnosisProviderWide, Routes: routes, Calls: n,
		Message: fmt.Sprintf("%s: provider-wide event: calls timed out on %d routes at once (%s)",
			strings.Join(routes, ", "), len(routes), Counted(n, "timeout", "timeouts")),
	}, true
}

// diagnoses applies the per-route rules to e.
func (e *routeEvidence) diagnoses(r *Report) []Diagnosis {
	out := e.setupDiagnoses(r)
	out = append(out, e.serverDiagnoses()...)
	return append(out, e.waitDiagnoses(r)...)
}

// diagnosis is a diagnosis of route e alone.
func (e *routeEvidence) diagnosis(kind DiagnosisKind, calls int, format string, args ...any) Diagnosis {
	return Diagnosis{Kind: kind, Routes: []string{e.name}, Calls: calls,
		Message: e.name + ": " + fmt.Sprintf(format, args...)}
}

// setupDiagnoses are the rules for problems of the route's setup, not of
// the model's quality: its key, its credits, its model name, a model that
// ignores the output contract.
func (e *routeEvidence) setupDiagnoses(r *Report) []Diagnosis {
	var out []Diagnosis
	add := func(kind DiagnosisKind, calls int, format string, args ...any) {
		out = append(out, e.diagnosis(kind, calls, format, args...))
	}
	rp := routePolicy(r, e.name)
	if n := e.classes["auth"]; n > 0 {
		check := "check the route's API key and its permissions"
		if rp.APIKeyEnv != "" {
			check = "check the key in " + rp.APIKeyEnv + " and its permissions"
		}
		add(DiagnosisAuth, n, "key or permission problem, not model quality: %s answered 401/403; %s",
			Counted(n, "call", "calls"), check)
	}
	if n := e.classes["payment"]; n > 0 {
		add(DiagnosisPayment, n, "payment required, not model quality: %s answered 402 (out of credits)",
			Counted(n, "call", "calls"))
	}
	if n := e.classes["model_not_found"]; n > 0 {
		model := ""
		if rp.Model != "" {
			model = " (" + strconv.Quote(rp.Model) + ")"
		}
		add(DiagnosisModelNotFound, n, "model name not served by this route%s: %s answered model not found",
			model, Counted(n, "call", "calls"))
	}
	if n := e.badAnswer; n > 0 {
		calls := e.classes["bad_response"]
		add(DiagnosisBadAnswer, calls, "bad answers, not a connection problem: %d of %s answered but could not be used (%s) for %s",
			calls, Counted(e.calls, "call", "calls"), e.badProblem, Counted(n, "item", "items"))
	}
	if n := e.notContract; n > 0 {
		said := ""
		if e.excerpt != "" {
			said = "; it said: " + strconv.Quote(e.excerpt)
		}
		out = append(out, Diagnosis{Kind: DiagnosisOutputContract, Routes: []string{e.name}, Calls: e.classes["bad_response"],
			Excerpt: e.excerpt,
			Message: fmt.Sprintf("%s: model ignores the output contract: it answered, but not with the JSON findings object the prompt asks for (%s for %s%s)",
				e.name, Counted(e.classes["bad_response"], "answer", "answers"), Counted(n, "item", "items"), said)})
	}
	return out
}

// serverDiagnoses are the rules for a backend that answers 5xx or cannot
// be reached.
func (e *routeEvidence) serverDiagnoses() []Diagnosis {
	var out []Diagnosis
	add := func(kind DiagnosisKind, calls int, format string, args ...any) {
		out = append(out, e.diagnosis(kind, calls, format, args...))
	}
	failed5xx := e.failed["server_error"] + e.failed["overloaded"] + len(e.stopped)
	if n := e.classes["server_error"] + e.classes["overloaded"]; n > 0 && (len(e.successes) == 0 || failed5xx > 0) {
		of := fmt.Sprintf("%d of %s", n, Counted(e.calls, "call", "calls"))
		stopped := ""
		if c, b := e.stopped[execution.ReasonCircuitOpen]+e.stopped[execution.ReasonHalfOpenBusy]+e.stopped[execution.ReasonUnresponsive], e.stopped[execution.ReasonRetryBudget]; c+b > 0 {
			var parts []string
			if c > 0 {
				parts = append(parts, "the circuit breaker stopped "+Counted(c, "item", "items"))
			}
			if b > 0 {
				parts = append(parts, "the retry budget stopped "+Counted(b, "item", "items"))
			}
			stopped = "; then " + strings.Join(parts, " and ")
		}
		if len(e.successes) == 0 {
			add(DiagnosisServerErrors, n, "server failing: %s answered 5xx and none succeeded%s", of, stopped)
		} else {
			add(DiagnosisServerErrors, n, "server errors: %s answered 5xx%s", of, stopped)
		}
	}
	if n := e.classes["connection"]; n > 0 && (len(e.successes) == 0 || e.failed["connection"] > 0) {
		of := fmt.Sprintf("%d of %s", n, Counted(e.calls, "call", "calls"))
		if len(e.successes) == 0 {
			add(DiagnosisUnreachable, n, "cannot connect: %s failed to connect (refused, reset or DNS) and none succeeded", of)
		} else {
			add(DiagnosisUnreachable, n, "connection failures: %s failed to connect (refused, reset or DNS)", of)
		}
	}
	return out
}

// waitDiagnoses are the rules for calls that timed out or were rate
// limited.
func (e *routeEvidence) waitDiagnoses(r *Report) []Diagnosis {
	var out []Diagnosis
	add := func(kind DiagnosisKind, calls int, format string, args ...any) {
		out = append(out, e.diagnosis(kind, calls, format, args...))
	}
	if n := e.classes["timeout"]; n > 0 {
		of := fmt.Sprintf("%d of %s", n, Counted(e.calls, "call", "calls"))
		switch {
		case len(e.successes) == 0:
			add(DiagnosisStalled, n, "backend stalled or unreachable: %s timed out and none succeeded", of)
		default:
			p95 := nearestRankMS(e.successes, 95)
			deadline := nearestRankMS(e.deadlines, 50)
			if float64(p95) >= CloseToDeadline*float64(deadline) {
				add(DiagnosisDeadlineTooShort, n, "deadline likely too short: successes p95 %s against a %s deadline (%s timed out)",
					seconds(p95), seconds(deadline), of)
			} else {
				add(DiagnosisIntermittent, n, "backend stalls intermittently: %s timed out although successes p95 was %s against a %s deadline",
					of, seconds(p95), seconds(deadline))
			}
		}
	}
	if n := e.classes["rate_limited"]; n > 0 {
		cut := ""
		for _, rt := range r.Routes {
			if rt.Name == e.name && rt.ConcurrencyCuts > 0 {
				cut = fmt.Sprintf("; concurrent calls cut to %d (of %d) after 429s", rt.MinConcurrency, routePolicy(r, e.name).MaxConcurrency)
			}
		}
		if e.retryMS > 0 {
			add(DiagnosisRateLimited, n, "rate limited; honoured Retry-After %s (%s answered 429)%s",
				seconds(e.retryMS), Counted(n, "call", "calls"), cut)
		} else {
			add(DiagnosisRateLimited, n, "rate limited; no Retry-After given, the route cooled down %s (%s answered 429)%s",
				seconds(r.Policy.RateLimitBackoffMS), Counted(n, "call", "calls"), cut)
		}
	}
	return out
}

// routePolicy is the configured route named name, or the zero value.
func routePolicy(r *Report, name string) RoutePolicy {
	for _, rp := range r.Policy.Routes {
		if rp.Name == name {
			return rp
		}
	}
	return RoutePolicy{}
}

// nearestRankMS is the p-th percentile of values by the nearest rank
// method, as execution computes route percentiles; 0 for no values.
func nearestRankMS(values []int64, p int) int64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// seconds is a duration in milliseconds for a diagnosis: "110 s", "2.5 s".
func seconds(ms int64) string {
	return strconv.FormatFloat(float64((ms+50)/100)/10, 'f', -1, 64) + " s"
}
