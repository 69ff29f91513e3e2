package fakeopenai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Wire is what Serve needs of the request and of the endpoint besides the
// Answer: the model to name, whether to stream, a good answer's content and
// usage, an error body's message and type.
type Wire struct {
	Model            string
	Stream           bool
	Content          string
	PromptTokens     int
	CompletionTokens int
	ErrorMessage     string
	ErrorType        string
}

// Serve writes a as the answer to one chat-completions request, as an
// OpenAI-compatible endpoint does (an event stream when o.Stream), waiting
// on ctx (the request's); it reports whether the answer was written whole.
// It is the one writer of the tests' scripted endpoints.
func Serve(w http.ResponseWriter, ctx context.Context, a Answer, o Wire) (complete bool) {
	sw := &server{w: w, ctx: ctx, a: a, o: o}
	switch {
	case a.Status != 0:
		return sw.error()
	case o.Stream:
		return sw.stream()
	}
	return sw.json()
}

// server writes one answer.
type server struct {
	w   http.ResponseWriter
	ctx context.Context
	a   Answer
	o   Wire
}

func (s *server) wait(d time.Duration) bool { return Sleep(s.ctx, d) && s.ctx.Err() == nil }

func (s *server) write(text string) bool {
	_, err := io.WriteString(s.w, text)
	return err == nil
}

// trickle writes text one byte every s.a.Every.
func (s *server) trickle(text string) bool {
	for i := range len(text) {
		if !s.wait(s.a.Every) || !s.write(text[i:i+1]) {
			return false
		}
	}
	return true
}

func (s *server) error() bool {
	if s.a.Hang {
		<-s.ctx.Done()
		return false
	}
	if !s.wait(s.a.Delay) {
		return false
	}
	for k, v := range s.a.Header {
		s.w.Header().Set(k, v)
	}
	s.w.Header().Set("Content-Type", "application/json")
	s.w.WriteHeader(s.a.Status)
	return s.write(fmt.Sprintf(`{"error":{"message":%s,"type":%s,"code":%s}}`, str(s.o.ErrorMessage), str(s.o.ErrorType), str(s.a.Code)))
}

func (s *server) json() bool {
	if s.a.Hang {
		<-s.ctx.Done()
		return false
	}
	s.w.Header().Set("Content-Type", "application/json")
	if s.a.FirstByte > 0 {
		if !s.wait(s.a.FirstByte) {
			return false
		}
		s.w.WriteHeader(http.StatusOK)
	}
	if !s.wait(s.a.Delay - s.a.FirstByte) {
		return false
	}
	answer := fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%s,"choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`,
		str(s.o.Model), str(s.o.Content), s.o.PromptTokens, s.o.CompletionTokens, s.o.PromptTokens+s.o.CompletionTokens)
	switch s.a.Mode {
	case "stall", "empty":
		s.w.WriteHeader(http.StatusOK)
		<-s.ctx.Done()
		return false
	case "trickle":
		s.w.WriteHeader(http.StatusOK)
		return s.trickle(answer)
	case "truncate":
		return s.write(answer[:len(answer)/2]) // and the body ends there
	}
	return s.write(answer)
}

func (s *server) chunk(content string) string {
	return fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%s,\"choices\":[{\"index\":0,\"delta\":{\"content\":%s}}]}\n\n", str(s.o.Model), str(content))
}

func (s *server) stream() bool {
	s.w.Header().Set("Content-Type", "text/event-stream")
	s.w.WriteHeader(http.StatusOK)
	if s.a.Hang {
		for s.a.Keepalive > 0 && s.wait(s.a.Keepalive) {
			if !s.write(": OPENROUTER PROCESSING\n") {
				return false
			}
		}
		<-s.ctx.Done()
		return false
	}
	if !s.wait(s.a.Delay) {
		return false
	}
	if s.a.StreamError {
		if s.write(s.chunk("partial ")) && s.wait(time.Second) {
			s.write(`data: {"error":{"code":502,"message":"Provider disconnected"}}` + "\n\n")
		}
		return true
	}
	if !s.body() {
		return false
	}
	s.write(fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%s,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", str(s.o.Model)))
	s.write(fmt.Sprintf(`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`+"\n\n",
		s.o.PromptTokens, s.o.CompletionTokens, s.o.PromptTokens+s.o.CompletionTokens))
	return s.write("data: [DONE]\n\n")
}

// body streams the content events of a good answer in s.a.Mode's shape.
func (s *server) body() bool {
	switch s.a.Mode {
	case "stall":
		<-s.ctx.Done()
		return false
	case "empty":
		for s.wait(s.a.Every) && s.write(s.chunk("")) {
		}
		return false
	case "tokens":
		for range max(s.a.Count, 1) {
			if !s.wait(s.a.Every) || !s.write(s.chunk("tok ")) {
				return false
			}
		}
		return true
	case "trickle":
		return s.trickle(s.chunk(s.o.Content))
	case "truncate":
		return s.write(s.chunk(s.o.Content[:len(s.o.Content)/2])) // and the stream ends there: no finish, no [DONE]
	}
	return s.write(s.chunk(s.o.Content))
}

// str is v as a JSON string (not Go's %q, which writes \x escapes JSON has
// not got).
func str(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}
