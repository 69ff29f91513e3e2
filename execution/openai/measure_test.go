package openai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/fakeopenai"
)

// capture is a chat-completions handler that keeps the last request's body
// and User-Agent and answers with a short completion (or a stream).
type capture struct {
	mu   sync.Mutex
	body []byte
	ua   string
}

func (c *capture) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.body, c.ua = b, r.Header.Get("User-Agent")
	c.mu.Unlock()
	var req struct {
		Stream bool `json:"stream"`
	}
	json.Unmarshal(b, &req)
	if req.Stream {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
}

// TestBodyCharsIsTheWireBody: the adaptive deadline measures the exact body
// the adapter writes, in characters: "stream":false included, the token cap
// under the name go-openai sends (max_tokens, or max_completion_tokens for
// reasoning models), stream options, the response-healing plugin, and
// non-ASCII text counted as characters, not UTF-8 bytes. On main the
// engine's own approximation omitted "stream":false, counted max_tokens
// for max_completion_tokens and counted bytes: a 3,129-character non-ASCII
// body counted 9,114 and got 8× instead of 1×.
func TestBodyCharsIsTheWireBody(t *testing.T) {
	t.Parallel()
	schema := &execution.Schema{Name: "s", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), Strict: true}
	nonASCII := strings.Repeat("変更を確認する。", 380) // 3,040 characters, 9,120 bytes
	tests := []struct {
		name string
		req  execution.Request
	}{
		{"plain", execution.Request{Model: "kimi", Messages: []execution.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "review <this> & that"}}, MaxTokens: 4096}},
		{"schema", execution.Request{Model: "kimi", Messages: []execution.Message{{Role: "user", Content: "x"}}, MaxTokens: 10, Schema: schema}},
		{"reasoning model", execution.Request{Model: "gpt-5-mini", Messages: []execution.Message{{Role: "user", Content: "x"}}, MaxTokens: 4096}},
		{"stream", execution.Request{Model: "kimi", Messages: []execution.Message{{Role: "user", Content: "x"}}, MaxTokens: 1, Stream: true}},
		{"response healing", execution.Request{Model: "kimi", Messages: []execution.Message{{Role: "user", Content: "x"}}, ResponseHealing: true, Schema: schema}},
		{"non-ASCII", execution.Request{Model: "kimi", Messages: []execution.Message{{Role: "user", Content: nonASCII}}, MaxTokens: 100}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := &capture{}
			p, err := openai.New(openai.Config{BaseURL: "https://llm.example.com/v1", APIKey: testKey,
				HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: h}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Complete(t.Context(), &tt.req); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			want := utf8.RuneCount(h.body)
			if got := p.BodyChars(&tt.req); got != want {
				t.Errorf("BodyChars = %d, want %d, the characters of the body sent:\n%s", got, want, h.body)
			}
			r := execution.Route{Model: tt.req.Model, Provider: p, Stream: tt.req.Stream, ResponseHealing: tt.req.ResponseHealing}
			if got := execution.Measure(&tt.req, r); got != want {
				t.Errorf("execution.Measure = %d, want the Provider's %d", got, want)
			}
			// The engine's own measure, for Providers that cannot measure
			// themselves, is exact too where it needs no knowledge of the SDK
			// (not for reasoning models' token field or stream options).
			if tt.name != "reasoning model" && tt.name != "stream" {
				if got := execution.BodyChars(&tt.req, execution.Route{Model: tt.req.Model, ResponseHealing: tt.req.ResponseHealing}); got != want {
					t.Errorf("execution.BodyChars = %d, want %d", got, want)
				}
			}
			if tt.name == "non-ASCII" && want > 8000 {
				t.Errorf("a %d-character prompt measured %d: bytes, not characters", utf8.RuneCountInString(nonASCII), want)
			}
		})
	}
}

// TestUserAgent: every request says who sends it (issue 13): the caller's
// "warden/VERSION", or "warden", or a configured User-Agent header.
func TestUserAgent(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ ua, header, want string }{
		{"warden/1.2.3", "", "warden/1.2.3"}, {"", "", "warden"}, {"warden/1", "warden/1 (probe)", "warden/1 (probe)"},
	} {
		h := &capture{}
		var headers map[string]string
		if tt.header != "" {
			headers = map[string]string{"User-Agent": tt.header}
		}
		p, err := openai.New(openai.Config{BaseURL: "https://llm.example.com/v1", UserAgent: tt.ua, Headers: headers,
			HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: h}}})
		if err != nil {
			t.Fatal(err)
		}
		req := &execution.Request{Model: "m", Messages: []execution.Message{{Role: "user", Content: "x"}}}
		if _, err := p.Complete(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if h.ua != tt.want {
			t.Errorf("User-Agent with UserAgent %q = %q, want %q", tt.ua, h.ua, tt.want)
		}
	}
}

// BenchmarkBodyChars compares the adapter's exact measure (it marshals the
// body go-openai sends) with the engine's streaming count, on a typical
// 7,600-character review request; the plan measures each item once.
func BenchmarkBodyChars(b *testing.B) {
	p, err := openai.New(openai.Config{BaseURL: "https://llm.example.com/v1"})
	if err != nil {
		b.Fatal(err)
	}
	req := &execution.Request{Model: "kimi", MaxTokens: 4096, Messages: []execution.Message{
		{Role: "system", Content: strings.Repeat("Find bugs in the changed lines. ", 105)},
		{Role: "user", Content: strings.Repeat("\tv001, err := checked(ctx, in[1], lim)\n", 100)},
	}, Schema: &execution.Schema{Name: "s", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}}
	b.Run("adapter", func(b *testing.B) {
		for b.Loop() {
			p.BodyChars(req)
		}
	})
	b.Run("engine", func(b *testing.B) {
		r := execution.Route{Model: "kimi"}
		for b.Loop() {
			execution.BodyChars(req, r)
		}
	})
}
