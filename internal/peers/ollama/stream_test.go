package ollama

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// oneFileDiff is the first file of sampleDiff: one chunk.
var oneFileDiff = sampleDiff[:strings.Index(sampleDiff, "diff --git a/store")]

// streamChunk is one data event of ollama's OpenAI-compatible stream.
type streamChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
}

// TestStreaming reviews one chunk on a streaming route: the request asks
// for usage in the stream (stream_options.include_usage), the answer is
// assembled from the deltas, the item is reviewed with its usage, and the
// stream has the shape the adapter's SSE filter expects.
func TestStreaming(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	prov, rec := newProvider(t, srv)
	eng := newEngine(t, []execution.Route{{Name: "ollama", Model: tinyModel, Provider: prov, Stream: true,
		// Watchdogs sized for a loaded CI machine, not for latency.
		FirstTokenTimeout: 2 * time.Minute, IdleTimeout: time.Minute}}, nil, execution.Options{})
	p := planReview(t, oneFileDiff, hunks.Options{}, eng, []*skills.Skill{bugsSkill}, review.Options{MaxTokens: 1500})

	r := review.Run(context.Background(), p, eng, review.Options{})

	it := r.Items[0]
	if it.Status != review.StatusReviewed || r.Outcome != review.OutcomeComplete {
		t.Errorf("streamed review: item %s (%s), outcome %s; want reviewed, complete", it.Status, it.Reason, r.Outcome)
	}
	if r.Usage.PromptTokens <= 0 || r.Usage.CompletionTokens <= 0 {
		t.Errorf("streamed review usage = %+v, want prompt and completion tokens > 0", r.Usage)
	}
	ex := rec.all()
	if len(ex) != 1 {
		t.Fatalf("%d requests, want 1", len(ex))
	}
	var sent struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(ex[0].request, &sent); err != nil || !sent.Stream || !sent.StreamOptions.IncludeUsage {
		t.Errorf("request = %s, want stream with include_usage", ex[0].request)
	}
	if ct := ex[0].header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("stream Content-Type = %q, want text/event-stream", ct)
	}

	// The stream: data events separated by blank lines, one delta each
	// (role "assistant" in every one), a last content event with the
	// finish_reason, then a usage event with an empty choices list, then
	// [DONE].
	var events []string
	for _, line := range strings.Split(string(ex[0].response), "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			events = append(events, strings.TrimPrefix(line, "data: "))
		default:
			t.Errorf("stream line %q is neither a data event nor blank", line)
		}
	}
	if n := len(events); n < 3 || events[n-1] != "[DONE]" {
		t.Fatalf("stream events = %q, want some content, a usage event and [DONE]", events)
	}
	var content strings.Builder
	var chunks []streamChunk
	for _, ev := range events[:len(events)-1] {
		var c streamChunk
		if err := json.Unmarshal([]byte(ev), &c); err != nil {
			t.Fatalf("stream event %q: %v", ev, err)
		}
		chunks = append(chunks, c)
	}
	for i, c := range chunks[:len(chunks)-1] {
		if c.Object != "chat.completion.chunk" || len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant" || c.Usage != nil {
			t.Errorf("stream event %d = %+v, want one assistant delta and no usage", i, c)
			continue
		}
		content.WriteString(c.Choices[0].Delta.Content)
		last := i == len(chunks)-2
		if fr := c.Choices[0].FinishReason; (fr != nil) != last {
			t.Errorf("stream event %d: finish_reason %v, want one only on the last content event", i, fr)
		}
	}
	u := chunks[len(chunks)-1]
	if u.Usage == nil || len(u.Choices) != 0 || u.Usage.PromptTokens <= 0 || u.Usage.CompletionTokens <= 0 {
		t.Fatalf("usage event = %+v, want usage and no choices", u)
	}
	if raw, err := review.ParseAnswer(content.String()); err != nil {
		t.Errorf("assembled stream %q is not an answer: %v", content.String(), err)
	} else {
		t.Logf("streamed answer: %d events, %d findings, usage %+v: %q", len(chunks), len(raw), *u.Usage, content.String())
	}
}
