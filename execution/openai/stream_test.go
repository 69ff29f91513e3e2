package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/execution"
)

// every repeats a step n times.
func every(d time.Duration, line string, n int) []step {
	s := make([]step, n)
	for i := range s {
		s[i] = step{after: d, line: line}
	}
	return s
}

func steps(groups ...[]step) []step {
	var out []step
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

const reasoningChunk = `data: {"id":"c1","object":"chat.completion.chunk","model":"served-model","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Let me look at the diff."},"finish_reason":null}]}`

// TestCompleteDeadlines runs on virtual time: each attempt ends exactly when
// its context or watchdog says, and Classify tells why.
func TestCompleteDeadlines(t *testing.T) {
	t.Parallel()
	keepAlives := every(5*time.Second, ": keep-alive", 1000) // 5000 s of comments
	tests := []struct {
		name        string
		h           http.Handler
		stream      bool
		ttft, idle  time.Duration
		cancelAfter time.Duration // the parent (caller) context is cancelled then; 0: never
		wantElapsed time.Duration
		wantIs      error // nil: success
		wantClass   execution.Class
	}{
		{
			name: "silent server, non-streaming", h: http.HandlerFunc(hang),
			wantElapsed: 2 * time.Minute, wantIs: context.DeadlineExceeded, wantClass: execution.ClassTimeout,
		},
		{
			name: "silent server, streaming, no watchdogs", h: http.HandlerFunc(hang), stream: true,
			wantElapsed: 2 * time.Minute, wantIs: context.DeadlineExceeded, wantClass: execution.ClassTimeout,
		},
		{
			name: "headers then stall, no watchdogs", h: sseHandler(true, step{after: time.Second, line: chunk("{")}), stream: true,
			wantElapsed: 2 * time.Minute, wantIs: context.DeadlineExceeded, wantClass: execution.ClassTimeout,
		},
		{
			name: "first token too late", stream: true, ttft: 12 * time.Second,
			h:           sseHandler(false, steps(every(5*time.Second, processing, 3), []step{{after: 0, line: chunk("{}")}, {line: doneLine}})...),
			wantElapsed: 12 * time.Second, wantIs: execution.ErrFirstTokenTimeout, wantClass: execution.ClassTimeout,
		},
		{
			name: "silent server, first-token deadline", h: http.HandlerFunc(hang), stream: true, ttft: 12 * time.Second,
			wantElapsed: 12 * time.Second, wantIs: execution.ErrFirstTokenTimeout, wantClass: execution.ClassTimeout,
		},
		{
			name: "a role-only chunk is not a first token", stream: true, ttft: 12 * time.Second, idle: 30 * time.Second,
			h:           sseHandler(false, step{after: time.Second, line: roleChunk}, step{after: 14 * time.Second, line: chunk("{}")}, step{line: doneLine}),
			wantElapsed: 12 * time.Second, wantIs: execution.ErrFirstTokenTimeout, wantClass: execution.ClassTimeout,
		},
		{
			name: "first token in time", stream: true, ttft: 12 * time.Second,
			h:           sseHandler(false, step{after: 11 * time.Second, line: chunk("{}")}, step{after: 50 * time.Second, line: finishChunk}, step{line: doneLine}),
			wantElapsed: 61 * time.Second,
		},
		{
			name: "reasoning is a first token", stream: true, ttft: 12 * time.Second, idle: 30 * time.Second,
			h:           sseHandler(false, step{after: 5 * time.Second, line: reasoningChunk}, step{after: 25 * time.Second, line: chunk("{}")}, step{line: doneLine}),
			wantElapsed: 30 * time.Second,
		},
		{
			name: "idle after the first chunk, keep-alives are not progress", stream: true, ttft: 12 * time.Second, idle: 30 * time.Second,
			h:           sseHandler(true, steps([]step{{after: time.Second, line: chunk("{")}}, keepAlives)...),
			wantElapsed: 31 * time.Second, wantIs: execution.ErrIdleTimeout, wantClass: execution.ClassTimeout,
		},
		{
			name: "data events reset the idle timer", stream: true, idle: 30 * time.Second,
			h:           sseHandler(false, steps(every(25*time.Second, chunk("x"), 4), []step{{line: finishChunk}, {line: doneLine}})...),
			wantElapsed: 100 * time.Second,
		},
		{
			name: "keep-alives before the first token, no first-token deadline", stream: true,
			h:           sseHandler(false, steps(every(250*time.Millisecond, ": keep-alive", 400), []step{{line: chunk("{}")}, {line: doneLine}})...),
			wantElapsed: 100 * time.Second,
		},
		{
			name: "the attempt deadline beats a slow stream", stream: true, ttft: 12 * time.Second, idle: 30 * time.Second,
			h:           sseHandler(false, every(5*time.Second, chunk("x"), 100)...),
			wantElapsed: 2 * time.Minute, wantIs: context.DeadlineExceeded, wantClass: execution.ClassTimeout,
		},
		{
			name: "caller cancels mid-stream", stream: true, idle: 30 * time.Second, cancelAfter: 10 * time.Second,
			h:           sseHandler(true, step{after: time.Second, line: chunk("{")}),
			wantElapsed: 10 * time.Second, wantIs: context.Canceled, wantClass: execution.ClassCancelled,
		},
		{
			name: "caller cancels a silent request", cancelAfter: 10 * time.Second, h: http.HandlerFunc(hang),
			wantElapsed: 10 * time.Second, wantIs: context.Canceled, wantClass: execution.ClassCancelled,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p, rt := newPipeProvider(t, tt.h)
				parent, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tt.cancelAfter > 0 {
					time.AfterFunc(tt.cancelAfter, cancel)
				}
				attempt, cancelAttempt := context.WithTimeout(parent, 2*time.Minute)
				defer cancelAttempt()
				req := request(tt.stream)
				req.FirstTokenTimeout, req.IdleTimeout = tt.ttft, tt.idle

				start := time.Now()
				_, err := p.Complete(attempt, req)
				if got := time.Since(start); got != tt.wantElapsed {
					t.Errorf("Complete() returned after %v, want %v", got, tt.wantElapsed)
				}
				switch {
				case tt.wantIs == nil && err != nil:
					t.Errorf("Complete() = %v, want no error", err)
				case tt.wantIs != nil && !errors.Is(err, tt.wantIs):
					t.Errorf("Complete() = %v, want an error wrapping %v", err, tt.wantIs)
				}
				want := tt.wantClass
				if tt.wantIs == nil {
					want = execution.ClassSuccess
				}
				if got := execution.Classify(parent, err); got != want {
					t.Errorf("Classify(parent, %v) = %v, want %v", err, got, want)
				}
				if n := rt.count(); n != 1 {
					t.Errorf("Complete() sent %d requests, want 1", n)
				}
			})
		})
	}
}

// TestCompleteStream checks what a stream's events become.
func TestCompleteStream(t *testing.T) {
	t.Parallel()
	rateLimited := func(w http.ResponseWriter, r *http.Request) {
		reset := strconv.FormatInt(time.Now().Add(4*time.Second).UnixMilli(), 10)
		sseHandler(false,
			step{line: processing},
			step{after: 2 * time.Second, line: processing},
			step{line: `data: {"error":{"code":429,"message":"Rate limit exceeded","metadata":{"headers":{"X-RateLimit-Reset":"` + reset + `"}}}}`},
		)(w, r)
	}
	tests := []struct {
		name      string
		h         http.Handler
		want      *execution.Response                   // when there is one
		wantErr   *execution.ProviderError              // when the error is a ProviderError
		wantIs    error                                 // when the error wraps this
		wantClass execution.Class                       // of the error
		check     func(*testing.T, *execution.Response) // extra checks
	}{
		{
			name: "content, usage, cached tokens, first byte",
			h: sseHandler(false, step{after: time.Second, line: processing}, step{after: 2 * time.Second, line: roleChunk},
				step{after: time.Second, line: chunk(`{"findings":`)}, step{line: chunk(`[]}`)}, step{line: finishChunk}, step{line: usageChunk}, step{line: doneLine}),
			want: &execution.Response{Content: `{"findings":[]}`, Model: "served-model", FinishReason: "stop",
				Usage: execution.Usage{PromptTokens: 120, CompletionTokens: 7, CachedTokens: 100}, FirstByte: 3 * time.Second},
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "400 comment lines are not too many empty messages",
			h:         sseHandler(false, steps(every(0, ": keep-alive", 400), []step{{line: chunk("ok")}, {line: finishChunk}, {line: doneLine}})...),
			want:      &execution.Response{Content: "ok", Model: "served-model", FinishReason: "stop"},
			wantClass: execution.ClassSuccess,
		},
		{
			name: "finish_reason length is an answer",
			h: sseHandler(false, step{line: chunk(`{"findings":[{"title":"x`)},
				step{line: `data: {"id":"c1","model":"served-model","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}`}, step{line: doneLine}),
			want:      &execution.Response{Content: `{"findings":[{"title":"x`, Model: "served-model", FinishReason: "length"},
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "finish without [DONE] is an answer",
			h:         sseHandler(false, step{line: chunk("ok")}, step{line: finishChunk}),
			want:      &execution.Response{Content: "ok", Model: "served-model", FinishReason: "stop"},
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "event and id fields are ignored",
			h:         sseHandler(false, step{line: "event: message\nid: 1\n" + chunk("ok")}, step{line: finishChunk}, step{line: doneLine}),
			want:      &execution.Response{Content: "ok", Model: "served-model", FinishReason: "stop"},
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "in-stream 429 after OPENROUTER PROCESSING",
			h:         http.HandlerFunc(rateLimited),
			wantErr:   &execution.ProviderError{Code: "429", Message: "Rate limit exceeded", RetryAfter: 2 * time.Second},
			wantClass: execution.ClassRateLimited,
		},
		{
			name: "error after partial content",
			h: sseHandler(false, step{line: roleChunk}, step{line: chunk(`{"findings":[`)},
				step{after: time.Second, line: `data: {"id":"c1","object":"chat.completion.chunk","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`}),
			wantErr:   &execution.ProviderError{Code: "502", Message: "Provider disconnected", Partial: true},
			wantClass: execution.ClassServerError,
		},
		{
			name:      "in-stream error with a string code",
			h:         sseHandler(false, step{line: chunk("x")}, step{line: `data: {"error":{"message":"Overloaded","type":"overloaded_error","code":"overloaded"}}`}),
			wantErr:   &execution.ProviderError{Code: "overloaded", Type: "overloaded_error", Message: "Overloaded", Partial: true},
			wantClass: execution.ClassOverloaded,
		},
		{
			name:      "no content and zero usage",
			h:         sseHandler(false, step{line: processing}, step{line: roleChunk}, step{line: finishChunk}, step{line: `data: {"id":"c1","choices":[],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`}, step{line: doneLine}),
			wantIs:    execution.ErrEmptyResponse,
			wantClass: execution.ClassBadResponse,
		},
		{
			// A server that answered 200 and stopped mid-stream gave a bad
			// answer; it is not a connection failure (issue 22).
			name:      "cut before [DONE]",
			h:         sseHandler(false, step{line: chunk(`{"findings":`)}),
			wantIs:    io.ErrUnexpectedEOF,
			wantClass: execution.ClassBadResponse,
		},
		{
			name:      "invalid JSON event",
			h:         sseHandler(false, step{line: `data: {"choices": [}`}),
			wantClass: execution.ClassBadResponse,
		},
		{
			name:      "a JSON answer to a streaming request",
			h:         jsonHandler(200, completionBody),
			wantClass: execution.ClassBadResponse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p, _ := newPipeProvider(t, tt.h)
				resp, err := p.Complete(t.Context(), request(true))
				if got := execution.Classify(t.Context(), err); got != tt.wantClass {
					t.Errorf("Classify(Complete()) = %v (err %v), want %v", got, err, tt.wantClass)
				}
				if tt.want != nil {
					if diff := cmp.Diff(tt.want, resp); diff != "" {
						t.Errorf("Complete() response mismatch (-want +got):\n%s", diff)
					}
				}
				if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Errorf("Complete() = %v, want an error wrapping %v", err, tt.wantIs)
				}
				if tt.wantErr != nil {
					var pe *execution.ProviderError
					if !errors.As(err, &pe) {
						t.Fatalf("Complete() = %v (%T), want a *execution.ProviderError", err, err)
					}
					if diff := cmp.Diff(tt.wantErr, pe, cmpopts.IgnoreFields(execution.ProviderError{}, "Header", "Metadata")); diff != "" {
						t.Errorf("Complete() error mismatch (-want +got):\n%s", diff)
					}
					if pe.Header.Get("Content-Type") != "text/event-stream" {
						t.Errorf("Complete() error headers = %v, want the stream's", pe.Header)
					}
				}
			})
		})
	}
}

// TestCompleteAnswer checks non-streaming answers.
func TestCompleteAnswer(t *testing.T) {
	t.Parallel()
	answer := func(choices, usage string) http.Handler {
		return jsonHandler(200, `{"id":"x","object":"chat.completion","model":"served-model","choices":`+choices+`,"usage":`+usage+`}`)
	}
	const zero = `{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}`
	tests := []struct {
		name      string
		h         http.Handler
		delay     time.Duration
		want      *execution.Response
		wantClass execution.Class
	}{
		{
			name:      "answer",
			h:         jsonHandler(200, completionBody),
			want:      &execution.Response{Content: `{"findings":[]}`, Model: "served-model", FinishReason: "stop", Usage: execution.Usage{PromptTokens: 120, CompletionTokens: 7, CachedTokens: 100}, FirstByte: 9 * time.Second},
			delay:     9 * time.Second,
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "length with content",
			h:         answer(`[{"index":0,"message":{"role":"assistant","content":"{\"fin"},"finish_reason":"length"}]`, `{"prompt_tokens":5,"completion_tokens":4096}`),
			want:      &execution.Response{Content: `{"fin`, Model: "served-model", FinishReason: "length", Usage: execution.Usage{PromptTokens: 5, CompletionTokens: 4096}},
			wantClass: execution.ClassSuccess,
		},
		{
			name:      "no choices",
			h:         answer(`[]`, zero),
			want:      &execution.Response{Model: "served-model"},
			wantClass: execution.ClassBadResponse,
		},
		{
			name:      "empty content, zero usage",
			h:         answer(`[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]`, zero),
			want:      &execution.Response{Model: "served-model", FinishReason: "stop"},
			wantClass: execution.ClassBadResponse,
		},
		{
			name:      "empty content, all tokens spent reasoning",
			h:         answer(`[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"length"}]`, `{"prompt_tokens":5,"completion_tokens":4096}`),
			want:      &execution.Response{Model: "served-model", FinishReason: "length", Usage: execution.Usage{PromptTokens: 5, CompletionTokens: 4096}},
			wantClass: execution.ClassBadResponse,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				h := tt.h
				if tt.delay > 0 {
					h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						time.Sleep(tt.delay)
						tt.h.ServeHTTP(w, r)
					})
				}
				p, _ := newPipeProvider(t, h)
				resp, err := p.Complete(t.Context(), request(false))
				if got := execution.Classify(t.Context(), err); got != tt.wantClass {
					t.Errorf("Classify(Complete()) = %v (err %v), want %v", got, err, tt.wantClass)
				}
				if tt.wantClass == execution.ClassBadResponse {
					var bad *execution.BadResponseError
					if !errors.As(err, &bad) || !errors.Is(err, execution.ErrEmptyResponse) {
						t.Errorf("Complete() = %v, want a *BadResponseError wrapping ErrEmptyResponse", err)
					}
				}
				if diff := cmp.Diff(tt.want, resp); diff != "" {
					t.Errorf("Complete() response mismatch (-want +got):\n%s", diff)
				}
				if err != nil && strings.Contains(err.Error(), testKey) {
					t.Errorf("Complete() error %q contains the key", err)
				}
			})
		})
	}
}
