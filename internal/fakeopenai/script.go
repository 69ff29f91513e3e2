package fakeopenai

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Answer is what a scripted model does with one request: the one vocabulary
// of the tests' fake models, whether they answer over HTTP (Script) or as an
// in-process execution.Provider (the engine's and the review's fakes).
type Answer struct {
	Delay   time.Duration     // before answering (virtual time under synctest)
	Hang    bool              // never answer; return when the request ends
	Status  int               // an error status with an OpenAI error body; 0: a good answer
	Code    string            // the error body's code
	Header  map[string]string // headers of an error answer (Retry-After)
	Content string            // a good answer's content; "": {"findings":[]}
	// FirstByte is when a good answer's first byte is sent (its headers,
	// flushed); the body follows at Delay. 0: all at Delay.
	FirstByte time.Duration

	// Streams only: with Hang, a keep-alive comment (": OPENROUTER
	// PROCESSING") every Keepalive; StreamError: some content, then an
	// in-stream error event a second later.
	Keepalive   time.Duration
	StreamError bool
	// Hostile shapes, after Delay: "stall" sends the 200 headers and then
	// nothing; "trickle" writes the answer one byte every Every; "empty"
	// (stream) sends a data event with an empty delta every Every, forever;
	// "tokens" (stream) sends one content token every Every, Count of
	// them, then finishes; "truncate" sends the 200 and half the answer
	// (a JSON body cut in half; a stream's first half-chunk, then its end
	// with no finish).
	Mode  string
	Every time.Duration
	Count int
}

// Planned is when the answer would be complete, from the request's
// arrival; negative for one that never completes.
func (a Answer) Planned() time.Duration {
	switch {
	case a.Hang, a.Mode == "stall", a.Mode == "empty":
		return -1
	case a.Mode == "tokens":
		return a.Delay + time.Duration(max(a.Count, 1))*a.Every
	case a.Mode == "trickle":
		return a.Delay + 400*a.Every // about the length of an answer's JSON
	}
	return a.Delay
}

// RetryAfter is an error answer with a Retry-After header.
func RetryAfter(status int, value string) Answer {
	return Answer{Status: status, Header: map[string]string{"Retry-After": value}}
}

// Request is a chat-completions request as a scripted endpoint reads it.
type Request struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Stream    bool   `json:"stream"`
	Messages  []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

// Prompt is the last message's content: the one naming the file.
func (r Request) Prompt() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// Chars is the length of every message's content.
func (r Request) Chars() int {
	n := 0
	for _, m := range r.Messages {
		n += len(m.Content)
	}
	return n
}

// Script is the one scripted OpenAI-compatible chat-completions endpoint of
// the tests. It answers by the file under review, which the prompt names
// ("File: NAME"), never by arrival order, so that concurrent items get the
// same answers on every run:
//
//   - First[f], for the first request about f, when set;
//   - ByFile[f], for the first Times[f] requests about f (every request
//     when Times[f] is 0);
//   - else Default (nil: a good answer without findings).
//
// A good answer's usage is about four characters a prompt token, and
// CompletionTokens (12 when 0). An error body's message is
// ErrorMessage's (nil: the status text). It is safe for concurrent use.
type Script struct {
	ByFile           map[string]Answer
	First            map[string]Answer
	Times            map[string]int
	Default          func(Request) Answer
	ErrorMessage     func(r *http.Request, status int) string
	ErrorType        string // the error body's type; "" is "error"
	CompletionTokens int

	mu    sync.Mutex
	calls map[string]int
}

// Calls is how many requests about file the script saw.
func (s *Script) Calls(file string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[file]
}

// answer picks the answer to req.
func (s *Script) answer(req Request) Answer {
	prompt := req.Prompt()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls == nil {
		s.calls = map[string]int{}
	}
	for file, a := range s.ByFile {
		if !strings.Contains(prompt, "File: "+file+"\n") {
			continue
		}
		s.calls[file]++
		n := s.calls[file]
		if first, ok := s.First[file]; ok && n == 1 {
			return first
		}
		if limit := s.Times[file]; limit == 0 || n <= limit {
			return a
		}
		break
	}
	if s.Default != nil {
		return s.Default(req)
	}
	return Answer{}
}

// ServeHTTP answers one chat-completions request.
func (s *Script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req Request
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) == 0 {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	a := s.answer(req)
	wire := Wire{Model: req.Model, Stream: req.Stream, Content: cmp.Or(a.Content, `{"findings":[]}`),
		PromptTokens: req.Chars() / 4, CompletionTokens: cmp.Or(s.CompletionTokens, 12),
		ErrorMessage: http.StatusText(a.Status), ErrorType: cmp.Or(s.ErrorType, "error")}
	if s.ErrorMessage != nil && a.Status != 0 {
		wire.ErrorMessage = s.ErrorMessage(r, a.Status)
	}
	Serve(w, r.Context(), a, wire)
}

// Sleep waits d (nothing for d <= 0) and reports whether ctx is still
// live: the wait of every fake model, on virtual time under synctest.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
