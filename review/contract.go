package review

import (
	"errors"
	"fmt"

	"github.com/org/warden/execution"
)

// ErrIgnoresContract is the error of an answer that is not in warden's
// output contract (one JSON object with a "findings" array), wrapped in the
// *execution.BadResponseError that ContractCheck returns.
var ErrIgnoresContract = errors.New("the answer ignores the output contract")

// ContractRequest is the smallest request in warden's output contract: the
// system message's contract and schema exactly as a review sends them, and
// a user message with nothing to review, whose right answer is
// {"findings":[]}. warden probe sends it to check that a route's model
// follows the contract, not only that it answers.
func ContractRequest(maxTokens int) *execution.Request {
	return &execution.Request{
		Messages: []execution.Message{
			{Role: "system", Content: preamble + "\n\n" + fmt.Sprintf(outputContract, "", "")},
			{Role: "user", Content: "This is a connectivity check: there is no change to review. Give the answer for nothing worth reporting."},
		},
		MaxTokens: maxTokens,
		Schema:    &execution.Schema{Name: "warden_findings", Schema: answerSchema, Strict: true},
	}
}

// ContractCheck is an execution.Item's Accept for ContractRequest: nil when
// the answer is in the output contract (any findings array), else an
// *execution.BadResponseError wrapping ErrIgnoresContract.
func ContractCheck(resp *execution.Response) error {
	if _, err := ParseAnswer(resp.Content); err != nil {
		return badAnswer(resp, fmt.Errorf("%w: %w", ErrIgnoresContract, err))
	}
	return nil
}
