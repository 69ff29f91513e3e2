package review

import (
	"errors"
	"fmt"
	"slices"

	"github.com/org/warden/execution"
)

// ReasonPromptTruncated is the Reason of a failed item whose prompt the
// server cut to fit its context window: the model answered without seeing
// the whole change, so its answer is not a review of it.
//
// Servers such as ollama do this silently (v0.6.5 keeps the first few
// tokens and the end of a prompt longer than num_ctx, logs "truncating
// input prompt" and answers 200); the only trace in the answer is
// usage.prompt_tokens, which counts what the model saw.
const ReasonPromptTruncated = "prompt_truncated"

// The truncation rule. A prompt of n characters is about n/charsPerToken
// tokens (the rule of thumb of execution.Item.PromptTokens). The server
// truncated it when it reports fewer than 1/truncatedFraction of that: no
// tokenizer packs a whole prompt of English instructions and code into 16
// characters a token, so the rule has no false alarm on an honest count;
// it misses milder truncation (a prompt cut to 40% of its tokens passes),
// which is the price of not knowing the route's tokenizer or context size.
const (
	charsPerToken     = 4
	truncatedFraction = 4 // flagged below 25% of the estimate
)

// truncationError says that the server counted far fewer prompt tokens than
// the prompt has.
type truncationError struct {
	promptTokens int // what the server reported
	chars        int // the prompt's characters (bytes), all messages
}

func (e *truncationError) Error() string {
	return fmt.Sprintf("the server counted %d prompt tokens for a prompt of %d characters (about %d tokens): "+
		"it cut the prompt to fit its context window, so the model did not see the whole change",
		e.promptTokens, e.chars, (e.chars+charsPerToken-1)/charsPerToken)
}

// checkPrompt returns a *execution.BadResponseError (Reason
// ReasonPromptTruncated) when u shows that the server truncated req's
// prompt, else nil. A zero PromptTokens (no usage reported) says nothing.
func checkPrompt(req *execution.Request, u execution.Usage) error {
	if req == nil || u.PromptTokens <= 0 {
		return nil
	}
	chars := 0
	for _, m := range req.Messages {
		chars += len(m.Content)
	}
	if u.PromptTokens*charsPerToken*truncatedFraction >= chars {
		return nil
	}
	return &execution.BadResponseError{
		Reason: ReasonPromptTruncated,
		Err:    &truncationError{promptTokens: u.PromptTokens, chars: chars},
	}
}

// guardTruncation makes each item's Accept check the answer's usage against
// the item's prompt before anything else: a truncated prompt makes the
// attempt bad_response (the engine's rules then apply: one retry on the
// route, which truncates again, and no failover), and the item fails with
// ReasonPromptTruncated (see failureReason).
func guardTruncation(items []execution.Item) {
	for i := range items {
		req, accept := items[i].Request, items[i].Accept
		items[i].Accept = func(resp *execution.Response) error {
			if err := checkPrompt(req, resp.Usage); err != nil {
				return err
			}
			if accept == nil {
				return nil
			}
			return accept(resp)
		}
	}
}

// failureReason is a failed item's Reason: ReasonPromptTruncated when the
// last error says the server truncated the prompt; else what stopped the
// item when the engine stopped it rather than its last call's class (the
// route's breaker was open, the review's retry budget was spent: see
// stopReasons), unless a rate limit stopped it; else the class.
func failureReason(res execution.Result) string {
	if te := (*truncationError)(nil); errors.As(res.Err, &te) {
		return ReasonPromptTruncated
	}
	if res.Class == execution.ClassRateLimited {
		return res.Class.String() // the rate limit is what stopped it, whatever the budgets did next
	}
	reasons := []string{res.Reason}
	if n := len(res.Attempts); n > 0 {
		reasons = append(reasons, res.Attempts[n-1].Reason)
	}
	for _, r := range reasons {
		if slices.Contains(stopReasons, r) {
			return r
		}
	}
	return res.Class.String()
}

// stopReasons are the engine's reasons that say more than the class about
// why an item failed: without them an item stopped by an open breaker after
// 500s elsewhere would read "server_error" as if its own call had failed.
var stopReasons = []string{execution.ReasonCircuitOpen, execution.ReasonHalfOpenBusy,
	execution.ReasonUnresponsive, execution.ReasonRetryBudget, execution.ReasonBulkheadFull}
