package review

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/org/warden/execution"
)

// DryRun reports the plan without calling a model: every item is planned.
func DryRun(p *Plan, eng *execution.Engine, opts Options) *Report {
	r := newReport(p, eng, opts)
	r.Outcome = OutcomeDryRun
	for i, wi := range p.Items {
		r.Items[i].Status = StatusPlanned
		r.Items[i].TimeoutEffectiveMS = wi.TimeoutEffective.Milliseconds()
	}
	r.Summary = summarize(r.Items, 0)
	return r
}

// Run sends every planned item through the engine, validates the answers
// into findings and decides the outcome. Findings of reviewed items are kept
// whatever happens to the others; an item that did not get a usable answer
// is failed or skipped, never "no findings".
func Run(ctx context.Context, p *Plan, eng *execution.Engine, opts Options) *Report {
	start := time.Now()
	items := make([]execution.Item, len(p.Items))
	for i, wi := range p.Items {
		items[i] = execution.Item{Request: wi.Request, Accept: acceptAnswer}
	}
	results := eng.Run(ctx, items, opts.Progress)

	r := newReport(p, eng, opts)
	prices := map[string]execution.Route{}
	for _, rt := range eng.Routes() {
		prices[rt.Name] = rt
	}
	var findings []Finding
	for i, res := range results {
		wi, it := p.Items[i], &r.Items[i]
		it.TimeoutEffectiveMS = wi.TimeoutEffective.Milliseconds()
		for _, a := range res.Attempts {
			it.Attempts = append(it.Attempts, Attempt{
				Route:              a.Route,
				Model:              a.Model,
				Kind:               a.Kind.String(),
				TimeoutBaseMS:      a.TimeoutBase.Milliseconds(),
				TimeoutEffectiveMS: a.TimeoutEffective.Milliseconds(),
				DurationMS:         a.Duration.Milliseconds(),
				Class:              a.Class.String(),
				Reason:             a.Reason,
			})
			cost := attemptCost(prices[a.Route], a.Usage)
			it.CostUSD += cost
			r.Usage.PromptTokens += a.Usage.PromptTokens
			r.Usage.CompletionTokens += a.Usage.CompletionTokens
			r.Usage.CachedTokens += a.Usage.CachedTokens
			r.Usage.CostUSD += cost
		}
		switch res.Status {
		case execution.StatusDone:
			it.Status, it.Route = StatusReviewed, res.Route
			raw, err := ParseAnswer(res.Response.Content)
			if err != nil { // Accept passed it, so this cannot happen; never call it clean
				it.Status, it.Reason = StatusFailed, execution.ClassBadResponse.String()
				continue
			}
			model := res.Response.Model
			if model == "" {
				model = prices[res.Route].Model
			}
			base := Finding{Skill: wi.Skill.Name, Path: wi.Chunk.Path, Route: res.Route, Model: model}
			findings = append(findings, validate(raw, lineRange{wi.Chunk.StartLine, wi.Chunk.EndLine}, base)...)
		case execution.StatusFailed:
			it.Status, it.Reason = StatusFailed, res.Class.String()
			if n := len(res.Attempts); n > 0 {
				it.Route = res.Attempts[n-1].Route
			}
		default:
			it.Status, it.Reason = StatusSkipped, res.Reason
		}
	}
	r.Findings = selectFindings(findings, opts.ReportOn, opts.MaxFindings)
	r.Summary = summarize(r.Items, len(r.Findings))
	r.Outcome = Decide(r.Items)
	r.Routes = routeStats(eng)
	r.DurationMS = time.Since(start).Milliseconds()
	return r
}

// acceptAnswer is the engine's check of an answer: one that cannot be parsed
// is a bad response (retried by the engine's rules), never "no findings".
func acceptAnswer(resp *execution.Response) error {
	if _, err := ParseAnswer(resp.Content); err != nil {
		reason := "unparseable answer"
		if resp.FinishReason == "length" {
			reason = "answer cut off at max_tokens"
		}
		return &execution.BadResponseError{Reason: reason, Err: err}
	}
	return nil
}

// Decide applies the outcome rules of DESIGN.md §4 to finished items.
func Decide(items []Item) Outcome {
	reviewed, failed := 0, 0
	for _, it := range items {
		switch it.Status {
		case StatusReviewed:
			reviewed++
		case StatusFailed:
			failed++
		}
	}
	switch {
	case reviewed == len(items):
		return OutcomeComplete
	case reviewed == 0 && failed > 0:
		return OutcomeProviderUnavailable
	default:
		return OutcomePartial
	}
}

// selectFindings orders findings most severe first (then by path and line),
// drops those below reportOn and keeps at most max (0: all).
func selectFindings(fs []Finding, reportOn Severity, max int) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		if reportOn == SeverityNone || f.Severity >= reportOn {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.StartLine, b.StartLine),
			cmp.Compare(a.Skill, b.Skill),
		)
	})
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out
}

func summarize(items []Item, findings int) Summary {
	s := Summary{Planned: len(items), Findings: findings}
	for _, it := range items {
		switch it.Status {
		case StatusReviewed:
			s.Reviewed++
		case StatusFailed:
			s.Failed++
		case StatusSkipped:
			s.Skipped++
		}
	}
	return s
}

// newReport fills what a report holds before any item has run.
func newReport(p *Plan, eng *execution.Engine, opts Options) *Report {
	r := &Report{
		Schema:   Schema,
		Findings: []Finding{},
		Items:    make([]Item, len(p.Items)),
		Ignored:  slices.Clone(p.Ignored),
		Routes:   []RouteStats{},
		Policy:   policyOf(eng.Policy(), opts),
	}
	if r.Ignored == nil {
		r.Ignored = []Ignored{}
	}
	slices.SortStableFunc(r.Ignored, func(a, b Ignored) int { return cmp.Compare(a.Path, b.Path) })
	for i, wi := range p.Items {
		r.Items[i] = Item{
			Skill:     wi.Skill.Name,
			Path:      wi.Chunk.Path,
			StartLine: wi.Chunk.StartLine,
			EndLine:   wi.Chunk.EndLine,
			Priority:  wi.Chunk.Priority,
			Attempts:  []Attempt{},
		}
	}
	return r
}

func policyOf(p execution.Policy, opts Options) Policy {
	return Policy{
		BudgetMS:           p.Budget.Milliseconds(),
		ItemBudgetMS:       p.ItemBudget.Milliseconds(),
		RequestTimeoutMS:   p.RequestTimeout.Milliseconds(),
		MinAttemptMS:       p.MinAttempt.Milliseconds(),
		ReserveMS:          p.Reserve.Milliseconds(),
		MaxConcurrency:     p.MaxConcurrency,
		MaxRetriesPerRoute: p.MaxRetriesPerRoute,
		BackoffMS:          p.Backoff.Milliseconds(),
		RateLimitBackoffMS: p.RateLimitBackoff.Milliseconds(),
		BaselineBodyChars:  execution.BaselineBodyChars,
		BaselineMaxTokens:  execution.BaselineMaxTokens,
		BaselinePoints:     execution.BaselinePoints,
		MaxMultiplier:      execution.MaxMultiplier,
		TimeoutCeilingMS:   execution.TimeoutCeiling.Milliseconds(),
		FailOn:             opts.FailOn.String(),
		ReportOn:           opts.ReportOn.String(),
		MaxFindings:        opts.MaxFindings,
	}
}

func attemptCost(rt execution.Route, u execution.Usage) float64 {
	return (float64(u.PromptTokens)*rt.PriceInputPerMTok + float64(u.CompletionTokens)*rt.PriceOutputPerMTok) / 1e6
}

// routeStats reports the engine's per-route health, in failover order,
// with each route's cost at its configured prices.
func routeStats(eng *execution.Engine) []RouteStats {
	stats := eng.Stats()
	out := make([]RouteStats, 0, len(stats))
	for i, s := range stats {
		out = append(out, RouteStats{
			Name:         s.Name,
			Model:        s.Model,
			Calls:        s.Calls,
			OK:           s.OK,
			Failed:       s.Failed,
			Timeouts:     s.Timeouts,
			P50MS:        s.P50.Milliseconds(),
			P95MS:        s.P95.Milliseconds(),
			CircuitOpens: s.CircuitOpens,
			CostUSD:      attemptCost(eng.Routes()[i], s.Usage),
		})
	}
	return out
}
