package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// This file derives what the check-run summary states beyond the report's
// own fields: coverage per skill, the unreviewed work grouped by reason and
// file, and the items a fallback route served. Everything is computed from
// the items, so a stale summary cannot hide a gap.

// Headline is the outcome of r in one plain line, without Markdown or a
// "warden:" prefix, for example "Partial — 37 of 40 items reviewed; 3 not
// reviewed (timeout 3); 2 findings (2 medium)". It names the outcome first
// and, when items were not reviewed, how many and why. Text from the report
// is sanitized to one line but not escaped: Markdown callers escape it.
//
// Headline states facts only; choosing a check run's title or conclusion
// belongs to the caller.
func Headline(r *review.Report) string {
	if r == nil {
		return "No report"
	}
	return headline(r, headlineStyle{label: outcomeLabel, gapLabel: outcomeLabel, count: review.Count})
}

// outcomeLabel is the outcome for people: "Partial", "Provider unavailable".
func outcomeLabel(o review.Outcome) string {
	switch o {
	case review.OutcomeComplete:
		return "Complete"
	case review.OutcomePartial:
		return "Partial"
	case review.OutcomeProviderUnavailable:
		return "Provider unavailable"
	case review.OutcomeDryRun:
		return "Dry run"
	}
	if s := OneLine(string(o)); s != "" {
		return "Outcome " + strconv.Quote(clip(s, 40))
	}
	return "Unknown outcome"
}

// reasonMeanings explain every item reason a review can produce
// (review.ItemReasons: the failure classes and skip reasons of DESIGN.md
// §4) in a few words, keyed by execution's own names.
var reasonMeanings = map[string]string{
	execution.ClassUnknown.String():       "the failure could not be classified",
	execution.ClassTimeout.String():       "the model did not answer within the deadline",
	execution.ClassRateLimited.String():   "the provider kept rate-limiting the requests",
	execution.ClassOverloaded.String():    "the provider was overloaded",
	execution.ClassServerError.String():   "the provider answered with a server error",
	execution.ClassConnection.String():    "the provider could not be reached",
	execution.ClassBadResponse.String():   fmt.Sprintf("the model's answer could not be used (no JSON findings object, cut off at max_tokens, or over the %d MiB answer cap)", review.MaxAnswerBytes>>20),
	execution.ClassAuth.String():          "the provider rejected the credentials (HTTP 401/403); check the route's API key",
	execution.ClassPayment.String():       "the provider asked for payment (credits exhausted)",
	execution.ClassModelNotFound.String(): "the provider does not know the configured model",
	execution.ClassBadRequest.String():    "the provider rejected the request",
	execution.ClassCancelled.String():     "the review was cancelled before these items finished",
	execution.ClassRejected.String():      "the route was not tried: its circuit breaker was open, its probe slot taken, or it was disabled",
	review.ReasonPromptTruncated:          "the provider cut the prompt short, so the model did not see the whole change",
	execution.ReasonBudget:                "the review's time budget ran out first",
	execution.ReasonBudgetCost:            "the review's cost cap was reached first",
	execution.ReasonBudgetTokens:          "the review's token cap was reached first",
	execution.ReasonCircuitOpen:           "the route was not tried: its circuit breaker was open (after failures on it)",
	execution.ReasonHalfOpenBusy:          "the route was not tried: its circuit breaker was testing it with another request",
	execution.ReasonUnresponsive:          "stopped by the route's circuit breaker: its trial call of the route failed or got no answer in time, or (on the last route) the route answered nothing for the whole outage patience (the item's own calls, if any, are in its attempts)",
	execution.ReasonRetryBudget:           "the call failed and the review's retry budget was spent, so it was not retried",
	execution.ReasonBulkheadFull:          "the route's concurrency cap stayed full until the item's time ran out",
}

// reasonMeaning explains an item reason; "" for one it does not know.
func reasonMeaning(reason string) string { return reasonMeanings[reason] }

// skillCoverage is one row of the coverage table.
type skillCoverage struct {
	skill                              string
	planned, reviewed, failed, skipped int
}

// coverageBySkill counts items per skill, by skill name.
func coverageBySkill(items []review.Item) []skillCoverage {
	idx := map[string]int{}
	var out []skillCoverage
	for _, it := range items {
		name := OneLine(it.Skill)
		i, ok := idx[name]
		if !ok {
			i = len(out)
			idx[name] = i
			out = append(out, skillCoverage{skill: name})
		}
		c := &out[i]
		c.planned++
		switch it.Status {
		case review.StatusReviewed:
			c.reviewed++
		case review.StatusFailed:
			c.failed++
		case review.StatusSkipped:
			c.skipped++
		}
	}
	slices.SortFunc(out, func(a, b skillCoverage) int { return strings.Compare(a.skill, b.skill) })
	return out
}

// reasonGroup is the unreviewed items that share a reason, by file.
type reasonGroup struct {
	reason          string
	failed, skipped int // items by status; the rest had another status
	items           int
	files           []fileGroup // in order of first appearance (priority order)
}

// fileGroup is the unreviewed chunks of one file for one reason.
type fileGroup struct {
	path   string
	ranges []lineSpan // merged, in line order
	whole  bool       // an item had no line range: the whole file
	skills []string   // distinct, in order of appearance
	routes []string   // distinct route chains ("primary → fallback"), in order
}

type lineSpan struct{ start, end int }

// groupByReason groups the items that were not reviewed by reason (most
// items first, then by name), and each group by file.
func groupByReason(items []review.Item) []reasonGroup {
	groups := map[string]*reasonGroup{}
	fileIdx := map[[2]string]int{} // (reason, path) → index in its group's files
	var order []string
	for _, it := range items {
		if it.Status == review.StatusReviewed {
			continue
		}
		reason := OneLine(reasonOf(it))
		g := groups[reason]
		if g == nil {
			g = &reasonGroup{reason: reason}
			groups[reason] = g
			order = append(order, reason)
		}
		g.items++
		switch it.Status {
		case review.StatusFailed:
			g.failed++
		case review.StatusSkipped:
			g.skipped++
		}
		path := OneLine(it.Path)
		key := [2]string{reason, path}
		i, ok := fileIdx[key]
		if !ok {
			i = len(g.files)
			fileIdx[key] = i
			g.files = append(g.files, fileGroup{path: path})
		}
		f := &g.files[i] // not kept across appends
		if it.StartLine > 0 {
			f.ranges = append(f.ranges, lineSpan{it.StartLine, max(it.StartLine, it.EndLine)})
		} else {
			f.whole = true
		}
		f.skills = appendNew(f.skills, OneLine(it.Skill))
		if chain := routeChain(it); chain != "" {
			f.routes = appendNew(f.routes, chain)
		}
	}
	out := make([]reasonGroup, 0, len(order))
	for _, reason := range order {
		g := groups[reason]
		for i := range g.files {
			g.files[i].ranges = mergeSpans(g.files[i].ranges)
		}
		out = append(out, *g)
	}
	slices.SortStableFunc(out, func(a, b reasonGroup) int {
		return cmp.Or(cmp.Compare(b.items, a.items), strings.Compare(a.reason, b.reason))
	})
	return out
}

// appendNew appends s unless it is empty or already present.
func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(spans []lineSpan) []lineSpan {
	if len(spans) == 0 {
		return nil
	}
	s := slices.Clone(spans)
	slices.SortFunc(s, func(a, b lineSpan) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end)) })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.start <= last.end+1 {
			last.end = max(last.end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

// spansText is "10-88, 120-160".
func spansText(spans []lineSpan) string {
	parts := make([]string, len(spans))
	for i, s := range spans {
		parts[i] = lineRange(s.start, s.end, "-")
	}
	return strings.Join(parts, ", ")
}

// routeChain is the routes an item's attempts went to, in order and without
// repeats ("primary → fallback"), or the item's route when it has no
// attempts, or "".
func routeChain(it review.Item) string {
	var routes []string
	for _, a := range it.Attempts {
		name := OneLine(a.Route)
		if name != "" && (len(routes) == 0 || routes[len(routes)-1] != name) {
			routes = append(routes, name)
		}
	}
	if len(routes) == 0 {
		return OneLine(it.Route)
	}
	return strings.Join(routes, " → ")
}

// ServedByFallback counts the reviewed items that a route other than their
// first attempt's served, so that every summary can say so: a fallback is
// never silent.
func ServedByFallback(r *review.Report) int {
	if r == nil {
		return 0
	}
	return len(fallbacks(r.Items))
}

// fallbackItem is a reviewed item that a route other than its first
// attempt's served.
type fallbackItem struct {
	item  review.Item
	first string // the first attempt's route
	route string // the route that served it
	path  string // "primary (timeout) → fallback": each route left, with why
}

// fallbacks finds the reviewed items whose serving route differs from their
// first attempt's route, in report order.
func fallbacks(items []review.Item) []fallbackItem {
	var out []fallbackItem
	for _, it := range items {
		if it.Status != review.StatusReviewed || len(it.Attempts) == 0 {
			continue
		}
		served := OneLine(it.Route)
		if served == "" {
			served = OneLine(it.Attempts[len(it.Attempts)-1].Route)
		}
		first := OneLine(it.Attempts[0].Route)
		if served == "" || served == first {
			continue
		}
		out = append(out, fallbackItem{item: it, first: first, route: served, path: fallbackPath(it.Attempts, served)})
	}
	return out
}

// fallbackPath is "primary (timeout) → fallback": each route in attempt
// order with the result of its last attempt, ending at the serving route.
func fallbackPath(attempts []review.Attempt, served string) string {
	type hop struct{ route, why string }
	var hops []hop
	for _, a := range attempts {
		name := OneLine(a.Route)
		why := OneLine(a.Class)
		if r := OneLine(a.Reason); r != "" && (why == "" || why == "rejected") {
			why = r
		}
		if len(hops) > 0 && hops[len(hops)-1].route == name {
			hops[len(hops)-1].why = why
			continue
		}
		hops = append(hops, hop{name, why})
	}
	var parts []string
	for _, h := range hops {
		if h.route == served {
			break
		}
		p := dash(h.route)
		if h.why != "" {
			p += " (" + h.why + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(append(parts, served), " → ")
}
