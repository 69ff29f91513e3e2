package telemetry

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/org/warden/review"
)

func asMap(kvs []attribute.KeyValue) map[string]any {
	out := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

func TestAttemptAttrs(t *testing.T) {
	t.Parallel()
	r := fixtureReport()
	at := func(item, attempt int) (*review.Attempt, *review.Attempt) {
		a := &r.Items[item].Attempts[attempt]
		if attempt == 0 {
			return a, nil
		}
		return a, &r.Items[item].Attempts[attempt-1]
	}
	tests := []struct {
		name       string
		item, num  int
		want       map[string]any
		wantStatus spanStatus
	}{
		{
			name: "503 then retried", item: 0, num: 0,
			want: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "big-model",
				"server.address": "primary.example", "server.port": int64(8443),
				"warden.route": "primary", "warden.attempt": int64(1), "warden.attempt.kind": "primary",
				"warden.attempt.class": "overloaded", "warden.attempt.decision": "retry",
				"warden.timeout.base_ms": int64(120000), "warden.timeout.effective_ms": int64(150000),
				"warden.deadline_ms": int64(150000), "warden.budget.remaining_ms": int64(300000),
				"warden.budget.review_remaining_ms": int64(870000), "warden.circuit.state": "closed",
				"error.type": "overloaded",
			},
			wantStatus: spanStatus{codes.Error, "overloaded"},
		},
		{
			name: "the retry", item: 0, num: 1,
			want: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "big-model",
				"gen_ai.response.model": "big-model-2025-01", "gen_ai.usage.input_tokens": int64(1000),
				"gen_ai.usage.output_tokens": int64(50), "gen_ai.usage.cache_read.input_tokens": int64(200),
				"server.address": "primary.example", "server.port": int64(8443),
				"warden.route": "primary", "warden.attempt": int64(2), "warden.attempt.kind": "retry",
				"warden.attempt.class": "success", "warden.attempt.decision": "done",
				"warden.timeout.base_ms": int64(120000), "warden.timeout.effective_ms": int64(150000),
				"warden.deadline_ms": int64(148100), "warden.budget.remaining_ms": int64(298100),
				"warden.budget.review_remaining_ms": int64(868100), "warden.circuit.state": "closed",
				"warden.ttft_ms": int64(300), "warden.backoff_ms": int64(1000), "warden.retry.reason": "overloaded",
			},
			wantStatus: spanStatus{codes.Unset, ""},
		},
		{
			name: "failover after a timeout", item: 1, num: 1,
			want: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "small-model",
				"gen_ai.usage.input_tokens": int64(1000), "gen_ai.usage.output_tokens": int64(50),
				"server.address": "fallback.example",
				"warden.route":   "fallback", "warden.attempt": int64(2), "warden.attempt.kind": "failover",
				"warden.attempt.class": "success", "warden.attempt.decision": "done",
				"warden.timeout.base_ms": int64(120000), "warden.timeout.effective_ms": int64(150000),
				"warden.deadline_ms": int64(150000), "warden.budget.remaining_ms": int64(297900),
				"warden.budget.review_remaining_ms": int64(867900), "warden.circuit.state": "closed",
				"warden.queue_wait_ms":   int64(80),
				"warden.failover.reason": "timeout", "warden.failover.from": "primary",
			},
			wantStatus: spanStatus{codes.Unset, ""},
		},
		{
			name: "not sent: breaker open", item: 2, num: 0,
			want: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "big-model",
				"server.address": "primary.example", "server.port": int64(8443),
				"warden.route": "primary", "warden.attempt": int64(1), "warden.attempt.kind": "primary",
				"warden.attempt.class": "rejected", "warden.attempt.decision": "failover", "warden.attempt.reason": "circuit_open",
				"warden.timeout.base_ms": int64(120000), "warden.timeout.effective_ms": int64(150000),
				"warden.deadline_ms": int64(0), "warden.budget.remaining_ms": int64(0),
				"warden.budget.review_remaining_ms": int64(0), "warden.circuit.state": "open",
				"error.type": "rejected",
			},
			wantStatus: spanStatus{codes.Error, "rejected: circuit_open"},
		},
		{
			name: "failover after the breaker", item: 2, num: 1,
			want: map[string]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "small-model",
				"server.address": "fallback.example",
				"warden.route":   "fallback", "warden.attempt": int64(2), "warden.attempt.kind": "failover",
				"warden.attempt.class": "server_error", "warden.attempt.decision": "fail",
				"warden.timeout.base_ms": int64(120000), "warden.timeout.effective_ms": int64(150000),
				"warden.deadline_ms": int64(150000), "warden.budget.remaining_ms": int64(300000),
				"warden.budget.review_remaining_ms": int64(866000), "warden.circuit.state": "closed",
				"warden.failover.reason": "circuit_open", "warden.failover.from": "primary",
				"error.type": "server_error",
			},
			wantStatus: spanStatus{codes.Error, "server_error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a, prev := at(tt.item, tt.num)
			got, status := attemptAttrs(a, prev)
			if diff := cmp.Diff(tt.want, asMap(got)); diff != "" {
				t.Errorf("attemptAttrs(item %d attempt %d) mismatch (-want +got):\n%s", tt.item, tt.num+1, diff)
			}
			if status != tt.wantStatus {
				t.Errorf("attemptAttrs(item %d attempt %d) status = %+v, want %+v", tt.item, tt.num+1, status, tt.wantStatus)
			}
		})
	}
}

func TestItemAttrs(t *testing.T) {
	t.Parallel()
	r := fixtureReport()
	tests := []struct {
		item       int
		want       map[string]any
		wantStatus spanStatus
	}{
		{0, map[string]any{
			"warden.skill": "code-review", "warden.path": "auth/session.go", "warden.start_line": int64(10), "warden.end_line": int64(30),
			"warden.priority": int64(90), "warden.item.status": "reviewed", "warden.route": "primary", "warden.request": int64(1),
			"warden.timeout.effective_ms": int64(150000), "warden.cost_usd": 0.004,
		}, spanStatus{codes.Unset, ""}},
		{2, map[string]any{
			"warden.skill": "code-review", "warden.path": "pay/charge.go", "warden.start_line": int64(5), "warden.end_line": int64(50),
			"warden.priority": int64(95), "warden.item.status": "failed", "warden.item.reason": "server_error", "warden.route": "fallback",
			"warden.request": int64(3), "warden.timeout.effective_ms": int64(150000), "warden.cost_usd": 0.0, "error.type": "server_error",
		}, spanStatus{codes.Error, "server_error"}},
		{5, map[string]any{
			"warden.skill": "code-review", "warden.path": "docs/README.md", "warden.start_line": int64(1), "warden.end_line": int64(3),
			"warden.priority": int64(10), "warden.item.status": "skipped", "warden.item.reason": "budget", "warden.request": int64(5),
			"warden.timeout.effective_ms": int64(150000), "warden.cost_usd": 0.0,
		}, spanStatus{codes.Unset, ""}},
	}
	for _, tt := range tests {
		got, status := itemAttrs(&r.Items[tt.item])
		if diff := cmp.Diff(tt.want, asMap(got)); diff != "" {
			t.Errorf("itemAttrs(item %d) mismatch (-want +got):\n%s", tt.item, diff)
		}
		if status != tt.wantStatus {
			t.Errorf("itemAttrs(item %d) status = %+v, want %+v", tt.item, status, tt.wantStatus)
		}
	}
}

func TestReviewAttrs(t *testing.T) {
	t.Parallel()
	r := fixtureReport()
	got, status := reviewAttrs(r)
	want := map[string]any{
		"warden.outcome": "partial", "warden.items.planned": int64(6), "warden.items.reviewed": int64(4),
		"warden.items.failed": int64(1), "warden.items.skipped": int64(1), "warden.findings": int64(2),
		"warden.budget_ms": int64(900000), "warden.usage.prompt_tokens": int64(3000),
		"warden.usage.completion_tokens": int64(150), "warden.usage.cached_tokens": int64(200), "warden.cost_usd": 0.0125,
	}
	if diff := cmp.Diff(want, asMap(got)); diff != "" {
		t.Errorf("reviewAttrs mismatch (-want +got):\n%s", diff)
	}
	if want := (spanStatus{codes.Error, "partial"}); status != want {
		t.Errorf("reviewAttrs status = %+v, want %+v", status, want)
	}
	r.Outcome = review.OutcomeComplete
	if _, status := reviewAttrs(r); status != (spanStatus{codes.Unset, ""}) {
		t.Errorf("reviewAttrs(complete) status = %+v, want unset", status)
	}
}
