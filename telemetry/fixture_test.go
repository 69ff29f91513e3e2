package telemetry

import (
	"time"

	"github.com/org/warden/review"
)

// t0 is the fixture review's start.
var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// fixtureReport is a partial review with one of everything telemetry maps:
//
//	0 reviewed after a retry on primary (503, then success)
//	1 reviewed on fallback after primary timed out (failover)
//	2 failed: primary's breaker open (not sent), fallback 500
//	3, 4 one batch (request 4): one attempt, shared
//	5 skipped by the budget, never started
func fixtureReport() *review.Report {
	base := review.Attempt{Model: "big-model", TimeoutBaseMS: 120000, TimeoutEffectiveMS: 150000,
		ServerAddress: "primary.example", ServerPort: 8443, Route: "primary", Breaker: "closed"}
	fb := base
	fb.Route, fb.Model, fb.ServerAddress, fb.ServerPort = "fallback", "small-model", "fallback.example", 0
	with := func(a review.Attempt, f func(*review.Attempt)) review.Attempt { f(&a); return a }
	return &review.Report{
		Schema:     review.Schema,
		Outcome:    review.OutcomePartial,
		Summary:    review.Summary{Planned: 6, Reviewed: 4, Failed: 1, Skipped: 1, Findings: 2},
		DurationMS: 10000,
		Policy:     review.Policy{BudgetMS: 900000},
		Usage:      review.Usage{PromptTokens: 3000, CompletionTokens: 150, CachedTokens: 200, CostUSD: 0.0125},
		Routes: []review.RouteStats{
			{Name: "primary", Model: "big-model", CircuitOpens: 1},
			{Name: "fallback", Model: "small-model"},
		},
		Items: []review.Item{
			{Skill: "code-review", Path: "auth/session.go", StartLine: 10, EndLine: 30, Priority: 90,
				Status: review.StatusReviewed, Route: "primary", TimeoutEffectiveMS: 150000, CostUSD: 0.004,
				Request: 1, StartMS: 10, DurationMS: 3000,
				Attempts: []review.Attempt{
					with(base, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision = 1, "primary", "overloaded", "retry"
						a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 10, 900, 150000, 300000, 870000
					}),
					with(base, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision = 2, "retry", "success", "done"
						a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 1910, 1100, 148100, 298100, 868100
						a.BackoffMS, a.TTFTMS, a.PromptTokens, a.CompletionTokens, a.CachedTokens = 1000, 300, 1000, 50, 200
						a.ResponseModel = "big-model-2025-01"
					}),
				}},
			{Skill: "code-review", Path: "db/query.go", StartLine: 1, EndLine: 9, Priority: 80,
				Status: review.StatusReviewed, Route: "fallback", TimeoutEffectiveMS: 150000,
				Request: 2, StartMS: 20, DurationMS: 5000,
				Attempts: []review.Attempt{
					with(base, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision, a.Reason = 1, "primary", "timeout", "failover", "retry_cap"
						a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 20, 2000, 2000, 300000, 869990
					}),
					with(fb, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision = 2, "failover", "success", "done"
						a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 2100, 2900, 150000, 297900, 867900
						a.QueueWaitMS, a.PromptTokens, a.CompletionTokens = 80, 1000, 50
					}),
				}},
			{Skill: "code-review", Path: "pay/charge.go", StartLine: 5, EndLine: 50, Priority: 95,
				Status: review.StatusFailed, Reason: "server_error", Route: "fallback", TimeoutEffectiveMS: 150000,
				Request: 3, StartMS: 4000, DurationMS: 500,
				Attempts: []review.Attempt{
					with(base, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision, a.Reason, a.Breaker = 1, "primary", "rejected", "failover", "circuit_open", "open"
						a.StartMS = 4000
					}),
					with(fb, func(a *review.Attempt) {
						a.Number, a.Kind, a.Class, a.Decision = 2, "failover", "server_error", "fail"
						a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 4000, 500, 150000, 300000, 866000
					}),
				}},
			batchItem("code-review"),
			batchItem("security-review"),
			{Skill: "code-review", Path: "docs/README.md", StartLine: 1, EndLine: 3, Priority: 10,
				Status: review.StatusSkipped, Reason: "budget", TimeoutEffectiveMS: 150000, Request: 5, Attempts: []review.Attempt{}},
		},
	}
}

func batchItem(skill string) review.Item {
	return review.Item{Skill: skill, Path: "api/handler.go", StartLine: 1, EndLine: 40, Priority: 70,
		Status: review.StatusReviewed, Route: "primary", TimeoutEffectiveMS: 150000, Request: 4, StartMS: 6000, DurationMS: 1000,
		Attempts: []review.Attempt{{Route: "primary", Model: "big-model", Kind: "primary", Number: 1, Class: "success", Decision: "done",
			TimeoutBaseMS: 120000, TimeoutEffectiveMS: 150000, StartMS: 6000, DurationMS: 1000, DeadlineMS: 150000,
			ItemRemainingMS: 300000, ReviewRemainingMS: 864000, Breaker: "half_open", PromptTokens: 1000, CompletionTokens: 50,
			ServerAddress: "primary.example", ServerPort: 8443}}}
}
