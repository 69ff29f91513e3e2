package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// smallItem is a short free-text request (no schema): a few tokens of noise.
func smallItem(n int) execution.Item {
	return execution.Item{Request: &execution.Request{
		Messages:  []execution.Message{{Role: "user", Content: fmt.Sprintf("item %d", n)}},
		MaxTokens: 16,
	}}
}

// step is what an attempt record says, for comparing attempt lists.
type step struct {
	Route, Class, Decision, Reason string
}

func steps(as []execution.Attempt) []step {
	out := make([]step, len(as))
	for i, a := range as {
		out[i] = step{a.Route, a.Class.String(), a.Decision, a.Reason}
	}
	return out
}

// TestUnknownModel sends to a model the server does not have. ollama answers
// 404 (with the OpenAI error shape, type "api_error", code null); warden
// classifies it model_not_found, disables the route for the rest of the run
// and fails the item loudly, unless the route has FailoverOnAuth, when the
// item goes to the next route. Streaming routes get the same 404 before any
// event.
func TestUnknownModel(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	tests := []struct {
		name     string
		failover bool
		stream   bool
		routes   int // 1: the missing model only; 2: then the real one
		want     [][]step
		status   []execution.Status
	}{
		{
			name: "one route", routes: 1,
			want:   [][]step{{{"missing", "model_not_found", "fail", "config"}}, {{"missing", "rejected", "fail", "disabled"}}},
			status: []execution.Status{execution.StatusFailed, execution.StatusFailed},
		},
		{
			name: "one route, streaming", routes: 1, stream: true,
			want:   [][]step{{{"missing", "model_not_found", "fail", "config"}}, {{"missing", "rejected", "fail", "disabled"}}},
			status: []execution.Status{execution.StatusFailed, execution.StatusFailed},
		},
		{
			name: "fallback route, no failover on auth", routes: 2,
			want:   [][]step{{{"missing", "model_not_found", "fail", "config"}}, {{"missing", "rejected", "fail", "disabled"}}},
			status: []execution.Status{execution.StatusFailed, execution.StatusFailed},
		},
		{
			name: "fallback route, failover on auth", routes: 2, failover: true,
			want: [][]step{
				{{"missing", "model_not_found", "failover", "config"}, {"real", "success", "done", ""}},
				{{"missing", "rejected", "failover", "disabled"}, {"real", "success", "done", ""}},
			},
			status: []execution.Status{execution.StatusDone, execution.StatusDone},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prov, rec := newProvider(t, srv)
			routes := []execution.Route{{Name: "missing", Model: "no-such-model", Provider: prov, FailoverOnAuth: tt.failover, Stream: tt.stream}}
			if tt.routes == 2 {
				routes = append(routes, execution.Route{Name: "real", Model: tinyModel, Provider: prov})
			}
			var mu sync.Mutex
			var events []execution.RouteEvent
			onEvent := func(ev execution.RouteEvent) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, ev)
			}
			// One item at a time, so that the second finds the route disabled.
			eng := newEngine(t, routes, func(p *execution.Policy) { p.MaxConcurrency = 1 }, execution.Options{OnRouteEvent: onEvent})
			res := eng.Run(context.Background(), []execution.Item{smallItem(1), smallItem(2)}, nil)

			var got [][]step
			var status []execution.Status
			for _, r := range res {
				got = append(got, steps(r.Attempts))
				status = append(status, r.Status)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.status, status); diff != "" {
				t.Errorf("statuses (-want +got):\n%s", diff)
			}
			if !tt.failover && res[0].Class != execution.ClassModelNotFound {
				t.Errorf("first item class = %s, want model_not_found", res[0].Class)
			}
			var pe *execution.ProviderError
			if !errors.As(res[0].Attempts[0].Err, &pe) {
				t.Fatalf("first attempt's error = %v, want a *execution.ProviderError", res[0].Attempts[0].Err)
			}
			wantPE := execution.ProviderError{Status: 404, Type: "api_error", Message: `model "no-such-model" not found, try pulling it first`}
			gotPE := execution.ProviderError{Status: pe.Status, Code: pe.Code, Type: pe.Type, Message: pe.Message}
			if diff := cmp.Diff(wantPE, gotPE); diff != "" {
				t.Errorf("404 error (-want +got):\n%s", diff)
			}
			ex := rec.all()
			if body := strings.TrimSpace(string(ex[0].response)); body != `{"error":{"message":"model \"no-such-model\" not found, try pulling it first","type":"api_error","param":null,"code":null}}` {
				t.Errorf("404 body = %s", body)
			}
			mu.Lock()
			defer mu.Unlock()
			disabled := 0
			for _, ev := range events {
				if ev.Kind == execution.EventDisabled && ev.Route == "missing" && ev.Class == execution.ClassModelNotFound {
					disabled++
				}
			}
			if disabled != 1 {
				t.Errorf("route events = %+v, want one EventDisabled for route missing (model_not_found)", events)
			}
		})
	}
}

// TestMaxTokensTruncatesJSON reviews with max_tokens too small for any
// answer: the grammar's JSON is cut off (finish_reason "length"), the answer
// cannot be parsed, the engine retries once (bad_response is retried) and
// the item fails bad_response. It is never "no findings".
func TestMaxTokensTruncatesJSON(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	prov, rec := newProvider(t, srv)
	eng := newEngine(t, []execution.Route{{Name: "ollama", Model: tinyModel, Provider: prov}}, nil, execution.Options{})
	p := planReview(t, oneFileDiff, hunks.Options{}, eng, []*skills.Skill{bugsSkill}, review.Options{MaxTokens: 6})

	r := review.Run(context.Background(), p, eng, review.Options{})

	it := r.Items[0]
	if it.Status != review.StatusFailed || it.Reason != "bad_response" || r.Outcome != review.OutcomeProviderUnavailable {
		t.Errorf("review: item %s (%s), outcome %s; want failed (bad_response), provider-unavailable", it.Status, it.Reason, r.Outcome)
	}
	var classes []string
	for _, a := range it.Attempts {
		classes = append(classes, a.Class)
	}
	if diff := cmp.Diff([]string{"bad_response", "bad_response"}, classes); diff != "" {
		t.Errorf("attempt classes (-want +got):\n%s", diff)
	}
	for _, ex := range rec.all() {
		var a chatAnswer
		if err := json.Unmarshal(ex.response, &a); err != nil || len(a.Choices) != 1 {
			t.Fatalf("answer %s: %v", ex.response, err)
		}
		if fr := *a.Choices[0].FinishReason; fr != "length" || a.Usage.CompletionTokens != 6 {
			t.Errorf("answer: finish_reason %s, %d completion tokens; want length, 6", fr, a.Usage.CompletionTokens)
		}
		t.Logf("cut answer: %q", a.Choices[0].Message.Content)
	}
	if r.Usage.CompletionTokens != 12 {
		t.Errorf("report completion tokens = %d, want 12 (two attempts of 6)", r.Usage.CompletionTokens)
	}
}

// TestPromptTruncated reviews a chunk of about 24 KB against the model's
// 512-token context. ollama cuts the prompt silently (it logs "truncating
// input prompt" and answers 200) and counts only what the model saw:
// prompt_tokens is 512. warden notices from the count and fails the item
// with reason prompt_truncated instead of reporting an answer to a change
// the model did not see.
func TestPromptTruncated(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	prov, rec := newProvider(t, srv)
	eng := newEngine(t, []execution.Route{{Name: "ollama", Model: tinyModel, Provider: prov}}, nil, execution.Options{})
	var diff strings.Builder
	diff.WriteString("diff --git a/big/table.go b/big/table.go\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/big/table.go\n@@ -0,0 +1,400 @@\n")
	for n := range 400 {
		fmt.Fprintf(&diff, "+var entry%03d = compute(%d, \"a value of about sixty characters\")\n", n, n)
	}
	p := planReview(t, diff.String(), hunks.Options{MaxChunkChars: 64_000}, eng, []*skills.Skill{bugsSkill}, review.Options{MaxTokens: 64})
	if len(p.Items) != 1 {
		t.Fatalf("plan has %d items, want one large chunk", len(p.Items))
	}
	chars := 0
	for _, m := range p.Items[0].Request.Messages {
		chars += len(m.Content)
	}

	r := review.Run(context.Background(), p, eng, review.Options{})

	it := r.Items[0]
	if it.Status != review.StatusFailed || it.Reason != review.ReasonPromptTruncated {
		t.Errorf("review of a %d-character prompt: item %s (%s), want failed (%s)", chars, it.Status, it.Reason, review.ReasonPromptTruncated)
	}
	var classes []string
	for _, a := range it.Attempts {
		classes = append(classes, a.Class)
	}
	if diff := cmp.Diff([]string{"bad_response", "bad_response"}, classes); diff != "" {
		t.Errorf("attempt classes (-want +got):\n%s", diff)
	}
	for _, ex := range rec.all() {
		var a chatAnswer
		if err := json.Unmarshal(ex.response, &a); err != nil {
			t.Fatalf("answer %s: %v", ex.response, err)
		}
		if ex.status != 200 || a.Usage.PromptTokens != 512 {
			t.Errorf("answer to a %d-character prompt: status %d, prompt_tokens %d; want 200, 512 (num_ctx)", chars, ex.status, a.Usage.PromptTokens)
		}
	}
	if r.Usage.PromptTokens != 2*512 {
		t.Errorf("report prompt tokens = %d, want %d", r.Usage.PromptTokens, 2*512)
	}
}

// TestRequestShapes sends requests that a strict server would treat
// differently: ollama ignores a field it does not know (OpenRouter's
// "plugins", sent for response healing) and refuses an empty message list
// with 400, type invalid_request_error, which warden classifies bad_request
// and neither retries nor fails over.
func TestRequestShapes(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	tests := []struct {
		name    string
		healing bool
		msgs    []execution.Message
		want    []step
		status  int
		body    string
	}{
		{
			name: "unknown field plugins", healing: true,
			msgs:   []execution.Message{{Role: "user", Content: "hi"}},
			want:   []step{{"ollama", "success", "done", ""}},
			status: 200,
		},
		{
			name:   "no messages",
			want:   []step{{"ollama", "bad_request", "fail", "no_failover"}},
			status: 400,
			body:   `{"error":{"message":"[] is too short - 'messages'","type":"invalid_request_error","param":null,"code":null}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prov, rec := newProvider(t, srv)
			eng := newEngine(t, []execution.Route{
				{Name: "ollama", Model: tinyModel, Provider: prov, ResponseHealing: tt.healing},
				{Name: "unused", Model: tinyModel, Provider: prov},
			}, nil, execution.Options{})
			res := eng.Run(context.Background(), []execution.Item{{Request: &execution.Request{Messages: tt.msgs, MaxTokens: 32}}}, nil)
			if diff := cmp.Diff(tt.want, steps(res[0].Attempts)); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
			ex := rec.all()
			if len(ex) != 1 || ex[0].status != tt.status {
				t.Fatalf("%d exchanges, want 1 with status %d", len(ex), tt.status)
			}
			if tt.healing && !strings.Contains(string(ex[0].request), `"plugins":[{"id":"response-healing"}]`) {
				t.Errorf("request %s has no plugins field", ex[0].request)
			}
			if got := strings.TrimSpace(string(ex[0].response)); tt.body != "" && got != tt.body {
				t.Errorf("body = %s, want %s", got, tt.body)
			}
		})
	}
}
