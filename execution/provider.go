package execution

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Provider sends one chat-completion request and returns the answer.
//
// Complete must make at most one HTTP request per call (no retries of its
// own), must honour ctx's deadline and cancellation, and must return a
// *ProviderError for any answer the server gave with an error status or an
// in-body error, so that Classify can read it. It is safe for concurrent use.
type Provider interface {
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// Message is one chat message.
type Message struct {
	Role    string // "system", "user" or "assistant"
	Content string
}

// Schema asks the route for a JSON answer that follows a JSON schema.
type Schema struct {
	Name   string
	Schema json.RawMessage
	Strict bool
}

// Request is one chat-completion request. The engine fills Model from the
// route it is sent on.
type Request struct {
	Model           string
	Messages        []Message
	MaxTokens       int
	Temperature     float32
	Schema          *Schema // nil: no response_format
	ResponseHealing bool    // ask for OpenRouter's response-healing plugin
	Stream          bool

	// Streaming watchdogs, set by the engine for streaming routes; zero means none.
	FirstTokenTimeout time.Duration
	IdleTimeout       time.Duration
}

// Usage counts the tokens of one answer.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
	}
}

// Response is a model's answer.
type Response struct {
	Content      string
	Model        string // the model the server says answered
	FinishReason string
	Usage        Usage
	// FirstByte is the time from sending the request to the first byte
	// (non-streaming) or first data event (streaming) of the answer; zero
	// when unknown.
	FirstByte time.Duration
}

// ProviderError is an error answer from a provider, in a shape that does not
// depend on any SDK: adapters translate their SDK's errors into it.
type ProviderError struct {
	Status     int         // HTTP status; 0 for an in-body or in-stream error with no status
	Code       string      // provider error code ("rate_limit_exceeded", "429", "model_not_found", ...)
	Type       string      // provider error type ("invalid_request_error", ...)
	Message    string      // provider message, already free of secrets
	Header     http.Header // response headers when known (Retry-After and friends)
	Metadata   map[string]any
	Partial    bool // the error arrived after part of a streamed answer
	RetryAfter time.Duration
}

func (e *ProviderError) Error() string {
	switch {
	case e.Status != 0 && e.Code != "":
		return fmt.Sprintf("provider answered %d (%s): %s", e.Status, e.Code, e.Message)
	case e.Status != 0:
		return fmt.Sprintf("provider answered %d: %s", e.Status, e.Message)
	case e.Code != "":
		return fmt.Sprintf("provider error %s: %s", e.Code, e.Message)
	default:
		return "provider error: " + e.Message
	}
}
