package fakeopenai

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// post sends one chat-completions request to s through Transport and
// returns the response, its body and when the headers and the body came.
func post(t *testing.T, s *Script, stream bool) (resp *http.Response, body string, headers, done time.Duration) {
	t.Helper()
	start := time.Now()
	req := `{"model":"m","stream":` + map[bool]string{true: "true", false: "false"}[stream] +
		`,"messages":[{"role":"user","content":"File: a.go\n0123456789abcdef"}]}`
	c := &http.Client{Transport: Transport{Handler: s}}
	resp, err := c.Post("https://example.com/v1/chat/completions", "application/json", strings.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	headers = time.Since(start)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b), headers, time.Since(start)
}

// TestServe: one writer for every scripted endpoint: a good answer as JSON
// or as an event stream (its content JSON-escaped, control characters too), an error with its headers, the first byte before
// the body, on virtual time.
func TestServe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &Script{ByFile: map[string]Answer{"a.go": {Delay: 3 * time.Second, FirstByte: time.Second, Content: "hi\x1b[31m"}}}
		resp, body, headers, done := post(t, s, false)
		var got struct {
			Choices []struct{ Message struct{ Content string } }
			Usage   struct{ PromptTokens, CompletionTokens int } `json:"usage"`
		}
		if err := json.Unmarshal([]byte(body), &got); err != nil || resp.StatusCode != 200 || len(got.Choices) != 1 || got.Choices[0].Message.Content != "hi\x1b[31m" {
			t.Fatalf("JSON answer %d %q: %v", resp.StatusCode, body, err)
		}
		if headers != time.Second || done != 3*time.Second {
			t.Errorf("headers at %v, body at %v; want 1s and 3s", headers, done)
		}
		_, body, _, _ = post(t, s, true)
		for _, want := range []string{`"delta":{"content":"hi\u001b[31m"}`, `"finish_reason":"stop"`, `"usage":{"prompt_tokens":`, "data: [DONE]\n\n"} {
			if !strings.Contains(body, want) {
				t.Errorf("stream lacks %q:\n%s", want, body)
			}
		}
		s = &Script{ByFile: map[string]Answer{"a.go": RetryAfter(429, "7")}, ErrorType: "rate_limit"}
		resp, body, _, _ = post(t, s, false)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(body, `"type":"rate_limit"`) || !strings.Contains(body, `"message":"Too Many Requests"`) {
			t.Errorf("error answer %d %v %s", resp.StatusCode, resp.Header, body)
		}
	})
}

func TestPlanned(t *testing.T) {
	for a, want := range map[*Answer]time.Duration{
		{Delay: time.Second}: time.Second,
		{Hang: true}:         -1,
		{Mode: "stall"}:      -1,
		{Delay: time.Second, Mode: "tokens", Count: 3, Every: time.Second}: 4 * time.Second,
	} {
		if got := a.Planned(); got != want {
			t.Errorf("%+v.Planned() = %v, want %v", *a, got, want)
		}
	}
}
