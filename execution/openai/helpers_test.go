package openai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/fakeopenai"
)

// testKey is the API key the tests configure; it must never appear in an error.
const testKey = "sk-test-0123456789abcdef"

// pipeTransport is an in-memory http.RoundTripper (fakeopenai.Transport)
// that calls a handler directly, for tests inside a synctest bubble, and
// counts the requests it was given. Handlers must return when r.Context()
// is done.
type pipeTransport struct {
	h http.Handler

	mu       sync.Mutex
	requests int
}

func (t *pipeTransport) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.requests
}

func (t *pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	t.requests++
	t.mu.Unlock()
	return fakeopenai.Transport{Handler: t.h}.RoundTrip(req)
}

// newPipeProvider returns a Provider whose requests go to h in memory.
func newPipeProvider(t *testing.T, h http.Handler) (*openai.Provider, *pipeTransport) {
	t.Helper()
	rt := &pipeTransport{h: h}
	p, err := openai.New(openai.Config{
		BaseURL:    "https://llm.example.com/v1",
		APIKey:     testKey,
		HTTPClient: &http.Client{Transport: rt},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, rt
}

// newServerProvider returns a Provider whose requests go to h over a real
// loopback socket, and a counter of the requests h received.
func newServerProvider(t *testing.T, h http.Handler, headers map[string]string) (*openai.Provider, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	return p, func() int {
		mu.Lock()
		defer mu.Unlock()
		return n
	}
}

// step is one line of a scripted event stream, written after a delay.
type step struct {
	after time.Duration
	line  string // written with a trailing "\n\n" for data, "\n" for comments
}

// sseHandler streams steps as an event stream, then returns. A step with an
// empty line only waits. With stall, it then waits for the request to end.
func sseHandler(stall bool, steps ...step) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for _, s := range steps {
			if s.after > 0 {
				select {
				case <-time.After(s.after):
				case <-r.Context().Done():
					return
				}
			}
			if s.line == "" {
				continue
			}
			end := "\n\n"
			if s.line[0] == ':' {
				end = "\n"
			}
			if _, err := io.WriteString(w, s.line+end); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
		if stall {
			<-r.Context().Done()
		}
	}
}

// jsonHandler answers status with body as application/json, plus headers.
func jsonHandler(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// hang never answers; it returns when the request ends.
func hang(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// chunk is a streamed chat-completion chunk with one content delta.
func chunk(content string) string {
	b, _ := json.Marshal(content)
	return `data: {"id":"c1","object":"chat.completion.chunk","model":"served-model","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`
}

const (
	roleChunk   = `data: {"id":"c1","object":"chat.completion.chunk","model":"served-model","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	finishChunk = `data: {"id":"c1","object":"chat.completion.chunk","model":"served-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	usageChunk  = `data: {"id":"c1","object":"chat.completion.chunk","model":"served-model","choices":[],"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127,"prompt_tokens_details":{"cached_tokens":100}}}`
	doneLine    = `data: [DONE]`
	processing  = `: OPENROUTER PROCESSING`
)

// request is a minimal valid request.
func request(stream bool) *execution.Request {
	return &execution.Request{
		Model:    "vendor/model",
		Messages: []execution.Message{{Role: "system", Content: "You review code."}, {Role: "user", Content: "diff"}},
		Stream:   stream,
	}
}
