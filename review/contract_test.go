package review

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/skills"
)

// chatHandler answers every chat completion with status and, for 200, an
// assistant message with content.
func chatHandler(status int, content string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		a := fakeopenai.Answer{Content: content}
		if status != http.StatusOK {
			a.Status = status
		}
		fakeopenai.Serve(w, r.Context(), a, fakeopenai.Wire{Model: "chatty", Content: content,
			PromptTokens: 4000, CompletionTokens: 40, ErrorMessage: http.StatusText(status), ErrorType: "server_error"})
	})
}

// runOver reviews n one-hunk files through the real go-openai client and
// engine against h, on synctest's virtual clock.
func runOver(t *testing.T, h http.Handler, n int) *Report {
	t.Helper()
	var r *Report
	synctest.Test(t, func(t *testing.T) {
		p, err := openai.New(openai.Config{BaseURL: "http://model.test/v1", APIKey: "sk-test",
			HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: h}}})
		if err != nil {
			t.Fatal(err)
		}
		eng, err := execution.New([]execution.Route{{Name: "primary", BaseURL: "http://model.test/v1", Model: "chatty", Provider: p}},
			execution.DefaultPolicy(), execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
		if err != nil {
			t.Fatal(err)
		}
		var chunks []hunks.Chunk
		for i := range n {
			chunks = append(chunks, hunks.Chunk{Path: fmt.Sprintf("f%02d.go", i), Language: "Go", Class: hunks.Source,
				StartLine: 1, EndLine: 1, Added: 1, Lines: []hunks.Line{{Op: hunks.Add, Text: "x := 1", NewLine: 1}}})
		}
		opts := Options{Skills: []*skills.Skill{{Name: "code-review", Instructions: "Find bugs."}}}
		plan, err := NewPlan(&hunks.Plan{Chunks: chunks}, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		r = Run(t.Context(), plan, eng, opts)
	})
	return r
}

func diagnosis(r *Report, kind DiagnosisKind) *Diagnosis {
	for i := range r.Diagnoses {
		if r.Diagnoses[i].Kind == kind {
			return &r.Diagnoses[i]
		}
	}
	return nil
}

// A model that answers 200 with prose is healthy as a server and useless as
// a reviewer: the outcome stays provider-unavailable, and the diagnosis
// names the output contract with an excerpt of what the model said.
func TestRunModelIgnoresOutputContract(t *testing.T) {
	t.Parallel()
	prose := "Sure! I'd be happy to review this change.\n\nOverall the code looks\tgood,\x1b[31m but consider " +
		"adding tests. " + strings.Repeat("More words. ", 40)
	r := runOver(t, chatHandler(http.StatusOK, prose), 3)
	if r.Outcome != OutcomeProviderUnavailable {
		t.Errorf("Run(prose model) outcome = %s, want provider-unavailable (nothing was reviewed)", r.Outcome)
	}
	wantExcerpt := "Sure! I'd be happy to review this change. Overall the code looks good,[31m but consider adding tests. More words. More …"
	for _, it := range r.Items {
		if it.Status != StatusFailed || it.Reason != "bad_response" || it.AnswerProblem != ProblemNotContract || it.Answer != wantExcerpt {
			t.Errorf("item %s = %s/%s, answer %q (%s); want failed/bad_response with answer %q (%s)",
				it.Path, it.Status, it.Reason, it.Answer, it.AnswerProblem, wantExcerpt, ProblemNotContract)
		}
	}
	d := diagnosis(r, DiagnosisOutputContract)
	if d == nil {
		t.Fatalf("Run(prose model) diagnoses = %+v, want output_contract", r.Diagnoses)
	}
	// Unusable answers count on the route's breaker (issue 22): three
	// with no accepted one open it, its one trial (an item's retry)
	// answers prose too, and the route is down: 4 calls, not 6.
	want := `primary: model ignores the output contract: it answered, but not with the JSON findings object the prompt asks for (4 answers for 3 items; it said: "` + wantExcerpt + `")`
	if d.Message != want || d.Excerpt != wantExcerpt || d.Calls != 4 {
		t.Errorf("output_contract diagnosis = %+v\nwant message %q, 4 calls", d, want)
	}
}

// A server that answers 200 with its JSON body cut in half answered: the
// items fail bad_response and the diagnosis names a bad answer, never
// "cannot connect" (issue 22: the user was sent to check the URL of a
// server that answered every call).
func TestRunTruncatedAnswer(t *testing.T) {
	t.Parallel()
	cut := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		fakeopenai.Serve(w, r.Context(), fakeopenai.Answer{Mode: "truncate"}, fakeopenai.Wire{Model: "chatty", Content: `{"findings":[]}`,
			PromptTokens: 4000, CompletionTokens: 40})
	})
	r := runOver(t, cut, 6)
	if r.Outcome != OutcomeProviderUnavailable {
		t.Errorf("Run(cut answers) outcome = %s, want provider-unavailable", r.Outcome)
	}
	for _, it := range r.Items {
		if it.Status != StatusFailed || it.Reason != "bad_response" {
			t.Errorf("item %s = %s/%s (%s), want failed/bad_response", it.Path, it.Status, it.Reason, it.Class)
		}
	}
	if d := diagnosis(r, DiagnosisUnreachable); d != nil {
		t.Errorf("Run(cut answers) diagnosed %q: the server answered every call", d.Message)
	}
	d := diagnosis(r, DiagnosisBadAnswer)
	if d == nil {
		t.Fatalf("Run(cut answers) diagnoses = %+v, want bad_answer", r.Diagnoses)
	}
	if !strings.HasPrefix(d.Message, "primary: bad answers, not a connection problem: ") || !strings.Contains(d.Message, "(answer cut short)") {
		t.Errorf("bad_answer diagnosis = %q", d.Message)
	}
	t.Logf("diagnosis: %s", d.Message)
}

// A review whose every call answers 500 says so, and each item's reason
// says what stopped it (the breaker, the retry budget) with the class kept.
func TestRunEveryCallServerError(t *testing.T) {
	t.Parallel()
	r := runOver(t, chatHandler(http.StatusInternalServerError, ""), 40)
	if r.Outcome != OutcomeProviderUnavailable {
		t.Errorf("Run(all 500) outcome = %s, want provider-unavailable", r.Outcome)
	}
	reasons := map[string]int{}
	for _, it := range r.Items {
		reasons[it.Reason+"/"+it.Class]++
		if it.Status != StatusFailed {
			t.Errorf("item %s status %s, want failed", it.Path, it.Status)
		}
	}
	// The breaker stops the rest: at once (circuit_open) or once the
	// route is given up (probe_failed: its trials failed for the outage
	// patience, issue 22, the items keeping the outage's class), never with
	// a bare "rejected".
	stopped := reasons["circuit_open/"] + reasons["probe_failed/"] + reasons["circuit_open/server_error"] + reasons["probe_failed/server_error"]
	if stopped == 0 || reasons["rejected/"] > 0 || reasons["circuit_open/rejected"] > 0 || reasons["server_error/"]+reasons["circuit_open/server_error"]+reasons["probe_failed/server_error"]+reasons["retry_budget/server_error"] == 0 {
		t.Errorf("Run(all 500) item reasons/classes = %v, want items the breaker stopped and server_error items", reasons)
	}
	d := diagnosis(r, DiagnosisServerErrors)
	if d == nil {
		t.Fatalf("Run(all 500) diagnoses = %+v, want server_errors", r.Diagnoses)
	}
	if !strings.HasPrefix(d.Message, "primary: server failing: ") || !strings.Contains(d.Message, "answered 5xx and none succeeded; then the circuit breaker stopped ") {
		t.Errorf("server_errors diagnosis = %q, want the failing server and what the breaker stopped", d.Message)
	}
	t.Logf("reasons %v; diagnosis %s", reasons, d.Message)
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"  hello\n\n world  ", 20, "hello world"},
		{"abcdef", 4, "abc…"},
		{"abcd", 4, "abcd"},
		{"a\u202eb\x00c\xffd", 10, "abcd"},
		{"", 5, ""},
		{"日本語のテキスト", 4, "日本語…"},
	}
	for _, tt := range tests {
		if got := Excerpt(tt.in, tt.n); got != tt.want {
			t.Errorf("Excerpt(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
