package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/skills"
)

func TestCheckPrompt(t *testing.T) {
	t.Parallel()
	req := func(chars int) *execution.Request {
		return &execution.Request{Messages: []execution.Message{
			{Role: "system", Content: strings.Repeat("s", chars/2)},
			{Role: "user", Content: strings.Repeat("u", chars-chars/2)},
		}}
	}
	tests := []struct {
		name         string
		chars        int
		promptTokens int
		want         bool
	}{
		{"no usage reported", 100_000, 0, false},
		{"honest count, one token a byte", 8_000, 8_000, false},
		{"honest count, four bytes a token", 8_000, 2_000, false},
		{"cut to 40% of the estimate: missed", 20_000, 2_000, false},
		{"exactly 25% of the estimate", 8_192, 512, false},
		{"just below 25%", 8_193, 512, true},
		{"ollama num_ctx 512, 26 KB prompt", 26_000, 512, true},
		{"tiny prompt, count of 1", 100, 1, true},
	}
	for _, tt := range tests {
		err := checkPrompt(req(tt.chars), execution.Usage{PromptTokens: tt.promptTokens})
		if got := err != nil; got != tt.want {
			t.Errorf("checkPrompt(%s: %d chars, %d prompt tokens) = %v, want truncated %v", tt.name, tt.chars, tt.promptTokens, err, tt.want)
			continue
		}
		if err == nil {
			continue
		}
		var bad *execution.BadResponseError
		if !errors.As(err, &bad) || bad.Reason != ReasonPromptTruncated {
			t.Errorf("checkPrompt(%s) = %v, want a *execution.BadResponseError with reason %s", tt.name, err, ReasonPromptTruncated)
		}
		if c := execution.Classify(context.Background(), err); c != execution.ClassBadResponse {
			t.Errorf("Classify(checkPrompt(%s)) = %s, want bad_response", tt.name, c)
		}
	}
}

// usageModel answers every request with no findings and a usage whose
// prompt tokens promptTokens computes from the request.
type usageModel struct {
	promptTokens func(req *execution.Request) int
}

func (m usageModel) Complete(_ context.Context, req *execution.Request) (*execution.Response, error) {
	return &execution.Response{
		Content: `{"findings":[]}`, Model: req.Model, FinishReason: "stop",
		Usage: execution.Usage{PromptTokens: m.promptTokens(req), CompletionTokens: 5},
	}, nil
}

// TestRunPromptTruncated runs a review of a small chunk and a large one on a
// server that counts at most 512 prompt tokens, as ollama with num_ctx 512
// does: the large item fails with reason prompt_truncated (its attempts are
// bad_response), the small one is reviewed, and the outcome is partial.
func TestRunPromptTruncated(t *testing.T) {
	t.Parallel()
	model := usageModel{promptTokens: func(req *execution.Request) int {
		chars := 0
		for _, m := range req.Messages {
			chars += len(m.Content)
		}
		return min(chars/3, 512)
	}}
	pol := execution.DefaultPolicy()
	pol.Backoff = 0 // retry at once: the fake answers instantly
	eng, err := execution.New([]execution.Route{{Name: "local", Model: "tiny", Provider: model}}, pol, execution.Options{})
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(path string, lines int) hunks.Chunk {
		c := hunks.Chunk{Path: path, StartLine: 1, EndLine: lines}
		for n := 1; n <= lines; n++ {
			c.Lines = append(c.Lines, hunks.Line{Op: hunks.Add, NewLine: n, Text: fmt.Sprintf("\tx%d := compute(%d) // a line of about sixty characters", n, n)})
		}
		return c
	}
	hp := &hunks.Plan{Chunks: []hunks.Chunk{chunk("small.go", 3), chunk("large.go", 400)}}
	p, err := NewPlan(hp, eng, Options{Skills: []*skills.Skill{{Name: "bugs", Instructions: "Find bugs."}}})
	if err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), p, eng, Options{})

	type got struct {
		Path, Reason string
		Status       ItemStatus
		Classes      []string
	}
	var gotItems []got
	for _, it := range r.Items {
		g := got{Path: it.Path, Status: it.Status, Reason: it.Reason}
		for _, a := range it.Attempts {
			g.Classes = append(g.Classes, a.Class)
		}
		gotItems = append(gotItems, g)
	}
	want := []got{
		{Path: "small.go", Status: StatusReviewed, Classes: []string{"success"}},
		{Path: "large.go", Status: StatusFailed, Reason: ReasonPromptTruncated, Classes: []string{"bad_response", "bad_response"}},
	}
	if diff := cmp.Diff(want, gotItems); diff != "" {
		t.Errorf("Run items (-want +got):\n%s", diff)
	}
	if r.Outcome != OutcomePartial {
		t.Errorf("Run outcome = %s, want %s", r.Outcome, OutcomePartial)
	}
}
