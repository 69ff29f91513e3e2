package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	"github.com/org/warden/review"
)

// Attribute keys. The gen_ai.*, server.* and error.type keys are
// OpenTelemetry's semantic conventions (GenAI client spans); the warden.*
// keys are warden's own. None ever holds a secret: they are made from the
// report, which holds none.
const (
	keyGenAIOperation     = attribute.Key("gen_ai.operation.name") // always "chat"
	keyGenAIProvider      = attribute.Key("gen_ai.provider.name")  // always "openai": the API warden speaks
	keyGenAIRequestModel  = attribute.Key("gen_ai.request.model")
	keyGenAIResponseModel = attribute.Key("gen_ai.response.model")
	keyGenAIInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	keyGenAIOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	keyGenAICachedTokens  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	keyGenAITokenType     = attribute.Key("gen_ai.token.type") // metrics: "input" or "output"
	keyServerAddress      = attribute.Key("server.address")
	keyServerPort         = attribute.Key("server.port")
	keyErrorType          = attribute.Key("error.type") // the attempt's class or the item's reason, on failure
	keyRoute              = attribute.Key("warden.route")
	keyAttempt            = attribute.Key("warden.attempt") // 1-based number among the item's attempts
	keyAttemptKind        = attribute.Key("warden.attempt.kind")
	keyAttemptClass       = attribute.Key("warden.attempt.class")
	keyAttemptDecision    = attribute.Key("warden.attempt.decision")
	keyAttemptReason      = attribute.Key("warden.attempt.reason")
	keyTimeoutBase        = attribute.Key("warden.timeout.base_ms")
	keyTimeoutEffective   = attribute.Key("warden.timeout.effective_ms")
	keyDeadline           = attribute.Key("warden.deadline_ms")
	keyBudgetRemaining    = attribute.Key("warden.budget.remaining_ms") // the item's budget left when sent
	keyReviewRemaining    = attribute.Key("warden.budget.review_remaining_ms")
	keyQueueWait          = attribute.Key("warden.queue_wait_ms")
	keyBackoff            = attribute.Key("warden.backoff_ms")
	keyRetryAfter         = attribute.Key("warden.retry_after_ms")
	keyRetryReason        = attribute.Key("warden.retry.reason")
	keyFailoverReason     = attribute.Key("warden.failover.reason")
	keyFailoverFrom       = attribute.Key("warden.failover.from")
	keyCircuitState       = attribute.Key("warden.circuit.state")
	keyTTFT               = attribute.Key("warden.ttft_ms")
	keyOutcome            = attribute.Key("warden.outcome")
	keySkill              = attribute.Key("warden.skill")
	keyPath               = attribute.Key("warden.path")
	keyStartLine          = attribute.Key("warden.start_line")
	keyEndLine            = attribute.Key("warden.end_line")
	keyPriority           = attribute.Key("warden.priority")
	keyItemStatus         = attribute.Key("warden.item.status")
	keyItemReason         = attribute.Key("warden.item.reason")
	keyRequest            = attribute.Key("warden.request")
	keyCost               = attribute.Key("warden.cost_usd")
	keyItemsPlanned       = attribute.Key("warden.items.planned")
	keyItemsReviewed      = attribute.Key("warden.items.reviewed")
	keyItemsFailed        = attribute.Key("warden.items.failed")
	keyItemsSkipped       = attribute.Key("warden.items.skipped")
	keyFindings           = attribute.Key("warden.findings")
	keyBudget             = attribute.Key("warden.budget_ms")
	keyUsagePromptTokens  = attribute.Key("warden.usage.prompt_tokens")
	keyUsageOutputTokens  = attribute.Key("warden.usage.completion_tokens")
	keyUsageCachedTokens  = attribute.Key("warden.usage.cached_tokens")
)

// Values and names used by the mapping.
const (
	classSuccess         = "success"
	classRejected        = "rejected"
	classTimeout         = "timeout"
	kindRetry            = "retry"
	kindFailover         = "failover"
	operationChat        = "chat"
	providerOpenAICompat = "openai"
	spanReview           = "warden.review"
	spanItem             = "warden.item"
	breakerOpen          = "open"
	instrumentationName  = "github.com/org/warden/telemetry"
	defaultServiceName   = "warden"
	keyServiceName       = attribute.Key("service.name")
	keyServiceVersion    = attribute.Key("service.version")
)

// spanStatus is a span's status code and description.
type spanStatus struct {
	Code        codes.Code
	Description string
}

// reviewAttrs are the review span's attributes, and its status: an error
// unless the review is complete (an incomplete review is never shown as
// fine).
func reviewAttrs(r *review.Report) ([]attribute.KeyValue, spanStatus) {
	attrs := []attribute.KeyValue{
		keyOutcome.String(string(r.Outcome)),
		keyItemsPlanned.Int(r.Summary.Planned),
		keyItemsReviewed.Int(r.Summary.Reviewed),
		keyItemsFailed.Int(r.Summary.Failed),
		keyItemsSkipped.Int(r.Summary.Skipped),
		keyFindings.Int(r.Summary.Findings),
		keyBudget.Int64(r.Policy.BudgetMS),
		keyUsagePromptTokens.Int(r.Usage.PromptTokens),
		keyUsageOutputTokens.Int(r.Usage.CompletionTokens),
		keyUsageCachedTokens.Int(r.Usage.CachedTokens),
		keyCost.Float64(r.Usage.CostUSD),
	}
	switch r.Outcome {
	case review.OutcomeComplete, review.OutcomeDryRun:
		return attrs, spanStatus{Code: codes.Unset}
	}
	return attrs, spanStatus{Code: codes.Error, Description: string(r.Outcome)}
}

// itemAttrs are a work item's span attributes and status: an error for a
// failed item; a skipped item keeps an unset status but says why.
func itemAttrs(it *review.Item) ([]attribute.KeyValue, spanStatus) {
	attrs := []attribute.KeyValue{
		keySkill.String(it.Skill),
		keyPath.String(it.Path),
		keyStartLine.Int(it.StartLine),
		keyEndLine.Int(it.EndLine),
		keyPriority.Int(it.Priority),
		keyItemStatus.String(string(it.Status)),
		keyTimeoutEffective.Int64(it.TimeoutEffectiveMS),
		keyCost.Float64(it.CostUSD),
	}
	if it.Reason != "" {
		attrs = append(attrs, keyItemReason.String(it.Reason))
	}
	if it.Route != "" {
		attrs = append(attrs, keyRoute.String(it.Route))
	}
	if it.Request > 0 {
		attrs = append(attrs, keyRequest.Int(it.Request))
	}
	if it.Status == review.StatusFailed {
		attrs = append(attrs, keyErrorType.String(it.Reason))
		return attrs, spanStatus{Code: codes.Error, Description: it.Reason}
	}
	return attrs, spanStatus{Code: codes.Unset}
}

// attemptAttrs are the attributes and status of attempt i of an item's
// attempts. prev, when not nil, is the attempt before it: a retry's reason
// is the class that made the engine retry, a failover's the class (or, for
// an attempt that was not sent, the rejection reason) that made the item
// leave the previous route.
func attemptAttrs(a, prev *review.Attempt) ([]attribute.KeyValue, spanStatus) {
	attrs := []attribute.KeyValue{
		keyGenAIOperation.String(operationChat),
		keyGenAIProvider.String(providerOpenAICompat),
		keyGenAIRequestModel.String(a.Model),
		keyRoute.String(a.Route),
		keyAttempt.Int(a.Number),
		keyAttemptKind.String(a.Kind),
		keyAttemptClass.String(a.Class),
		keyTimeoutBase.Int64(a.TimeoutBaseMS),
		keyTimeoutEffective.Int64(a.TimeoutEffectiveMS),
		keyDeadline.Int64(a.DeadlineMS),
		keyBudgetRemaining.Int64(a.ItemRemainingMS),
		keyReviewRemaining.Int64(a.ReviewRemainingMS),
	}
	opt := func(kv attribute.KeyValue, ok bool) {
		if ok {
			attrs = append(attrs, kv)
		}
	}
	opt(keyGenAIResponseModel.String(a.ResponseModel), a.ResponseModel != "")
	opt(keyGenAIInputTokens.Int(a.PromptTokens), a.PromptTokens > 0 || a.CompletionTokens > 0)
	opt(keyGenAIOutputTokens.Int(a.CompletionTokens), a.PromptTokens > 0 || a.CompletionTokens > 0)
	opt(keyGenAICachedTokens.Int(a.CachedTokens), a.CachedTokens > 0)
	opt(keyServerAddress.String(a.ServerAddress), a.ServerAddress != "")
	opt(keyServerPort.Int(a.ServerPort), a.ServerAddress != "" && a.ServerPort > 0)
	opt(keyAttemptDecision.String(a.Decision), a.Decision != "")
	opt(keyAttemptReason.String(a.Reason), a.Reason != "")
	opt(keyCircuitState.String(a.Breaker), a.Breaker != "")
	opt(keyTTFT.Int64(a.TTFTMS), a.TTFTMS > 0)
	opt(keyQueueWait.Int64(a.QueueWaitMS), a.QueueWaitMS > 0)
	opt(keyBackoff.Int64(a.BackoffMS), a.BackoffMS > 0)
	opt(keyRetryAfter.Int64(a.RetryAfterMS), a.RetryAfterMS > 0)
	if prev != nil {
		switch a.Kind {
		case kindRetry:
			attrs = append(attrs, keyRetryReason.String(prev.Class))
		case kindFailover:
			attrs = append(attrs, keyFailoverReason.String(leaveReason(prev)), keyFailoverFrom.String(prev.Route))
		}
	}
	if a.Class == classSuccess {
		return attrs, spanStatus{Code: codes.Unset}
	}
	desc := a.Class
	if a.Reason != "" {
		desc += ": " + a.Reason
	}
	attrs = append(attrs, keyErrorType.String(a.Class))
	return attrs, spanStatus{Code: codes.Error, Description: desc}
}

// leaveReason is why an item left a route after attempt a: its class, or
// for an attempt that was not sent, the rejection reason (circuit_open,
// cooldown, ...).
func leaveReason(a *review.Attempt) string {
	if a.Class == classRejected && a.Reason != "" {
		return a.Reason
	}
	return a.Class
}
