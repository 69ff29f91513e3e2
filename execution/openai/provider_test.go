package openai_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
)

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string // a substring; "" for no error
	}{
		{"https", openai.Config{BaseURL: "https://api.openai.com/v1"}, ""},
		{"http with port, no key", openai.Config{BaseURL: "http://localhost:11434/v1"}, ""},
		{"trailing slash", openai.Config{BaseURL: "https://openrouter.ai/api/v1/"}, ""},
		{"extra headers", openai.Config{BaseURL: "https://openrouter.ai/api/v1", Headers: map[string]string{"HTTP-Referer": "https://example.com", "X-Title": "warden"}}, ""},
		{"empty", openai.Config{}, `base URL ""`},
		{"relative", openai.Config{BaseURL: "api.openai.com/v1"}, `base URL "api.openai.com/v1"`},
		{"ftp", openai.Config{BaseURL: "ftp://example.com/v1"}, `base URL "ftp://example.com/v1"`},
		{"no host", openai.Config{BaseURL: "https:///v1"}, `base URL "https:///v1"`},
		{"bad escape", openai.Config{BaseURL: "https://example.com/%zz"}, `base URL "https://example.com/%zz"`},
		{"password redacted", openai.Config{BaseURL: "ftp://user:hunter2@example.com"}, `base URL "ftp://user:xxxxx@example.com"`},
		{"authorization header", openai.Config{BaseURL: "https://example.com", Headers: map[string]string{"authorization": "Bearer x"}}, `header "authorization"`},
		{"bad header name", openai.Config{BaseURL: "https://example.com", Headers: map[string]string{"X Title": "x"}}, `header "X Title"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := openai.New(tt.cfg)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("New(%+v) = %v, want no error", tt.cfg, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("New(%+v) = %v, want an error containing %s", tt.cfg, err, tt.wantErr)
			case err != nil && strings.Contains(err.Error(), "hunter2"):
				t.Errorf("New(%+v) = %v, leaks the password", tt.cfg, err)
			}
		})
	}
}

// seen is what a server saw of a request.
type seen struct {
	Method, Path, Authorization, Title, ContentType string
	ContentLengthOK                                 bool
	Body                                            map[string]any
}

// recorder records the requests a handler receives.
type recorder struct {
	mu   sync.Mutex
	reqs []seen
}

func (rec *recorder) wrap(t *testing.T, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read request body: %v", err)
		}
		s := seen{
			Method: r.Method, Path: r.URL.Path, Authorization: r.Header.Get("Authorization"),
			Title: r.Header.Get("X-Title"), ContentType: r.Header.Get("Content-Type"),
			ContentLengthOK: r.ContentLength == int64(len(b)),
		}
		if err := json.Unmarshal(b, &s.Body); err != nil {
			t.Errorf("request body %q is not JSON: %v", b, err)
		}
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, s)
		rec.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

const completionBody = `{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1741305600, "model": "served-model",
  "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"findings\":[]}"}, "finish_reason": "stop"}],
  "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127, "prompt_tokens_details": {"cached_tokens": 100}}
}`

// TestCompleteWire checks the request each option puts on the wire and the
// response read back, against a real chat-completions server on loopback.
func TestCompleteWire(t *testing.T) {
	t.Parallel()
	schema := &execution.Schema{Name: "findings", Schema: json.RawMessage(`{"type":"object","properties":{"findings":{"type":"array"}},"required":["findings"],"additionalProperties":false}`), Strict: true}
	messages := []any{
		map[string]any{"role": "system", "content": "You review code."},
		map[string]any{"role": "user", "content": "diff"},
	}
	wantResp := &execution.Response{
		Content: `{"findings":[]}`, Model: "served-model", FinishReason: "stop",
		Usage: execution.Usage{PromptTokens: 120, CompletionTokens: 7, CachedTokens: 100},
	}
	streamed := sseHandler(false, step{line: processing}, step{line: roleChunk}, step{line: chunk(`{"findings":`)},
		step{line: ": keep-alive"}, step{line: chunk(`[]}`)}, step{line: finishChunk}, step{line: usageChunk}, step{line: doneLine})
	tests := []struct {
		name     string
		req      *execution.Request
		h        http.Handler
		wantBody map[string]any
	}{
		{
			name: "plain",
			req:  request(false),
			h:    jsonHandler(200, completionBody),
			wantBody: map[string]any{
				"model": "vendor/model", "messages": messages, "stream": false,
			},
		},
		{
			name: "schema, healing, max tokens, temperature",
			req: func() *execution.Request {
				r := request(false)
				r.Schema, r.ResponseHealing, r.MaxTokens, r.Temperature = schema, true, 4096, 0.25
				return r
			}(),
			h: jsonHandler(200, completionBody),
			wantBody: map[string]any{
				"model": "vendor/model", "messages": messages, "stream": false,
				"max_tokens": 4096.0, "temperature": 0.25,
				"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
					"name": "findings", "strict": true,
					"schema": map[string]any{"type": "object", "properties": map[string]any{"findings": map[string]any{"type": "array"}}, "required": []any{"findings"}, "additionalProperties": false},
				}},
				"plugins": []any{map[string]any{"id": "response-healing"}},
			},
		},
		{
			name: "reasoning model gets max_completion_tokens",
			req: func() *execution.Request {
				r := request(false)
				r.Model, r.MaxTokens = "gpt-5-mini", 4096
				return r
			}(),
			h: jsonHandler(200, completionBody),
			wantBody: map[string]any{
				"model": "gpt-5-mini", "messages": messages, "stream": false, "max_completion_tokens": 4096.0,
			},
		},
		{
			name: "stream with healing",
			req: func() *execution.Request {
				r := request(true)
				r.ResponseHealing = true
				return r
			}(),
			h: streamed,
			wantBody: map[string]any{
				"model": "vendor/model", "messages": messages, "stream": true,
				"stream_options": map[string]any{"include_usage": true},
				"plugins":        []any{map[string]any{"id": "response-healing"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rec := new(recorder)
			p, count := newServerProvider(t, rec.wrap(t, tt.h), map[string]string{"X-Title": "warden"})
			resp, err := p.Complete(t.Context(), tt.req)
			if err != nil {
				t.Fatalf("Complete() = %v, want no error", err)
			}
			if diff := cmp.Diff(wantResp, resp, cmpopts.IgnoreFields(execution.Response{}, "FirstByte")); diff != "" {
				t.Errorf("Complete() response mismatch (-want +got):\n%s", diff)
			}
			if resp.FirstByte <= 0 {
				t.Errorf("Complete() FirstByte = %v, want > 0", resp.FirstByte)
			}
			want := []seen{{
				Method: "POST", Path: "/v1/chat/completions", Authorization: "Bearer " + testKey,
				Title: "warden", ContentType: "application/json", ContentLengthOK: true, Body: tt.wantBody,
			}}
			if diff := cmp.Diff(want, rec.reqs); diff != "" {
				t.Errorf("requests mismatch (-want +got):\n%s", diff)
			}
			if got := count(); got != 1 {
				t.Errorf("server saw %d requests, want 1", got)
			}
		})
	}
}

// TestCompleteNoKey: without a key (Ollama) no Authorization header is sent.
func TestCompleteNoKey(t *testing.T) {
	t.Parallel()
	rec := new(recorder)
	srv := httptest.NewServer(rec.wrap(t, jsonHandler(200, completionBody)))
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Complete(t.Context(), request(false)); err != nil {
		t.Fatalf("Complete() = %v, want no error", err)
	}
	if len(rec.reqs) != 1 || rec.reqs[0].Authorization != "" {
		t.Errorf("requests = %+v, want one without Authorization", rec.reqs)
	}
}

// TestCompleteOneRequest proves that go-openai does not retry: one HTTP
// request per Complete, whatever the status.
func TestCompleteOneRequest(t *testing.T) {
	t.Parallel()
	for _, status := range []int{429, 500, 502, 503, 504} {
		for _, stream := range []bool{false, true} {
			p, count := newServerProvider(t, jsonHandler(status, `{"error":{"message":"busy","type":"server_error"}}`, "Retry-After", "1"), nil)
			_, err := p.Complete(t.Context(), request(stream))
			var pe *execution.ProviderError
			if !errors.As(err, &pe) || pe.Status != status {
				t.Errorf("Complete(stream=%t) on %d = %v, want a *ProviderError with status %d", stream, status, err, status)
			}
			if got := count(); got != 1 {
				t.Errorf("Complete(stream=%t) on %d sent %d requests, want 1", stream, status, got)
			}
		}
	}
}

// TestCompleteNoRedirect: a redirect would be a second request; it is an
// error answer instead.
func TestCompleteNoRedirect(t *testing.T) {
	t.Parallel()
	p, count := newServerProvider(t, http.RedirectHandler("/v2/chat/completions", http.StatusTemporaryRedirect), nil)
	_, err := p.Complete(t.Context(), request(false))
	var pe *execution.ProviderError
	if !errors.As(err, &pe) || pe.Status != http.StatusTemporaryRedirect {
		t.Errorf("Complete() on a 307 = %v, want a *ProviderError with status 307", err)
	}
	if got := count(); got != 1 {
		t.Errorf("Complete() on a 307 sent %d requests, want 1", got)
	}
}

// TestCompleteBodyCap: an answer body over the cap is not read to its end;
// Complete fails with a bad response that says why, streaming or not.
func TestCompleteBodyCap(t *testing.T) {
	t.Parallel()
	huge := strings.Repeat("x", openai.MaxBodyBytes)
	body := `{"id":"c1","object":"chat.completion","model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"` + huge + `"}}]}`
	var stream strings.Builder
	for stream.Len() <= openai.MaxStreamBytes {
		stream.WriteString(chunk(strings.Repeat("y", 64<<10)) + "\n\n")
	}
	tests := []struct {
		name   string
		stream bool
		h      http.HandlerFunc
	}{
		{"json", false, jsonHandler(http.StatusOK, body)},
		{"stream", true, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, roleChunk+"\n\n"+stream.String())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := newServerProvider(t, tt.h, nil)
			_, err := p.Complete(t.Context(), request(tt.stream))
			var bad *execution.BadResponseError
			if !errors.As(err, &bad) || !errors.Is(err, openai.ErrBodyTooLarge) || execution.Classify(t.Context(), err) != execution.ClassBadResponse {
				t.Fatalf("Complete(body over the cap) = %v, want a bad response wrapping ErrBodyTooLarge", err)
			}
			if !strings.Contains(err.Error(), "too large") || !strings.Contains(err.Error(), "MiB") {
				t.Errorf("error %q does not say the answer was over the cap", err)
			}
		})
	}
}
