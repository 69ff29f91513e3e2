package fakeopenai

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Answer is what a scripted endpoint does with one request.
type Answer struct {
	Delay   time.Duration     // before answering (virtual time under synctest)
	Hang    bool              // never answer; return when the request ends
	Status  int               // an error status with an OpenAI error body; 0: a good answer
	Code    string            // the error body's code
	Header  map[string]string // headers of an error answer (Retry-After)
	Content string            // a good answer's content; "": {"findings":[]}
}

// Request is a chat-completions request as a scripted endpoint reads it.
type Request struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
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
	ctx := r.Context()
	if a.Hang {
		<-ctx.Done()
		return
	}
	if a.Delay > 0 {
		t := time.NewTimer(a.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if a.Status != 0 {
		for k, v := range a.Header {
			w.Header().Set(k, v)
		}
		msg := http.StatusText(a.Status)
		if s.ErrorMessage != nil {
			msg = s.ErrorMessage(r, a.Status)
		}
		typ := s.ErrorType
		if typ == "" {
			typ = "error"
		}
		w.WriteHeader(a.Status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"code":%q}}`, msg, typ, a.Code)
		return
	}
	content := a.Content
	if content == "" {
		content = `{"findings":[]}`
	}
	completion := s.CompletionTokens
	if completion == 0 {
		completion = 12
	}
	resp := map[string]any{
		"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": req.Chars() / 4, "completion_tokens": completion, "total_tokens": req.Chars()/4 + completion},
	}
	json.NewEncoder(w).Encode(resp)
}
