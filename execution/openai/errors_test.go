package openai_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
)

// TestCompleteErrorStatus: every error answer becomes a *ProviderError that
// Classify maps to the right class, for streaming and non-streaming requests.
func TestCompleteErrorStatus(t *testing.T) {
	t.Parallel()
	// resetIn is an OpenRouter metadata body whose X-RateLimit-Reset is d
	// after the handler's now (virtual time).
	resetIn := func(status int, d time.Duration) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			reset := strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)
			jsonHandler(status, `{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min","metadata":{"headers":{"X-RateLimit-Limit":"20","X-RateLimit-Remaining":"0","X-RateLimit-Reset":"`+reset+`"},"provider_name":null}}}`)(w, r)
		}
	}
	rateLimitMeta := func(d time.Duration) map[string]any {
		return map[string]any{"headers": map[string]any{"X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)}, "provider_name": nil}
	}
	tests := []struct {
		name      string
		h         http.Handler
		want      func() *execution.ProviderError // built inside the bubble, for metadata times
		wantClass execution.Class
	}{
		{
			name: "401 OpenAI",
			h:    jsonHandler(401, `{"error":{"message":"Incorrect API key provided: sk-abc***xyz.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 401, Code: "invalid_api_key", Type: "invalid_request_error", Message: "Incorrect API key provided: sk-abc***xyz."}
			},
			wantClass: execution.ClassAuth,
		},
		{
			name: "402 OpenRouter numeric code",
			h:    jsonHandler(402, `{"error":{"code":402,"message":"Insufficient credits"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 402, Code: "402", Message: "Insufficient credits"}
			},
			wantClass: execution.ClassPayment,
		},
		{
			name: "403 OpenRouter moderation",
			h:    jsonHandler(403, `{"error":{"code":403,"message":"Input was flagged","metadata":{"reasons":["harassment"],"flagged_input":"...","provider_name":"openai"}}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 403, Code: "403", Message: "Input was flagged", Metadata: map[string]any{"reasons": []any{"harassment"}, "flagged_input": "...", "provider_name": "openai"}}
			},
			wantClass: execution.ClassBadRequest,
		},
		{
			name: "404 model_not_found",
			h:    jsonHandler(404, `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 404, Code: "model_not_found", Type: "invalid_request_error", Message: "The model 'gpt-9' does not exist"}
			},
			wantClass: execution.ClassModelNotFound,
		},
		{
			name: "404 vLLM top-level error",
			h:    jsonHandler(404, `{"object":"error","message":"The model 'x' does not exist.","type":"NotFoundError","param":null,"code":404}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 404, Code: "404", Type: "NotFoundError", Message: "The model 'x' does not exist."}
			},
			wantClass: execution.ClassModelNotFound,
		},
		{
			name: "404 Ollama string error",
			h:    jsonHandler(404, `{"error":"model \"llama9\" not found, try pulling it first"}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 404, Message: `model "llama9" not found, try pulling it first`}
			},
			wantClass: execution.ClassModelNotFound,
		},
		{
			name: "400 context_length_exceeded",
			h:    jsonHandler(400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 400, Code: "context_length_exceeded", Type: "invalid_request_error", Message: "This model's maximum context length is 128000 tokens."}
			},
			wantClass: execution.ClassBadRequest,
		},
		{
			name: "429 Retry-After",
			h:    jsonHandler(429, `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "7"),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 429, Code: "rate_limit_exceeded", Type: "requests", Message: "Rate limit reached for requests", RetryAfter: 7 * time.Second}
			},
			wantClass: execution.ClassRateLimited,
		},
		{
			name: "429 retry-after-ms",
			h:    jsonHandler(429, `{"error":{"message":"slow down","type":"rate_limit_error"}}`, "Retry-After", "7", "retry-after-ms", "1500"),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 429, Type: "rate_limit_error", Message: "slow down", RetryAfter: 1500 * time.Millisecond}
			},
			wantClass: execution.ClassRateLimited,
		},
		{
			name: "429 OpenRouter reset metadata",
			h:    resetIn(429, 4*time.Second),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 429, Code: "429", Message: "Rate limit exceeded: free-models-per-min", Metadata: rateLimitMeta(4 * time.Second), RetryAfter: 4 * time.Second}
			},
			wantClass: execution.ClassRateLimited,
		},
		{
			name: "429 insufficient_quota",
			h:    jsonHandler(429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 429, Code: "insufficient_quota", Type: "insufficient_quota", Message: "You exceeded your current quota"}
			},
			wantClass: execution.ClassPayment,
		},
		{
			name: "500",
			h:    jsonHandler(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 500, Type: "server_error", Message: "The server had an error"}
			},
			wantClass: execution.ClassServerError,
		},
		{
			name: "502 HTML proxy page",
			h:    jsonHandler(502, "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>\n", "Content-Type", "text/html"),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 502, Message: "<html> <head><title>502 Bad Gateway</title></head> <body>nginx</body> </html>"}
			},
			wantClass: execution.ClassServerError,
		},
		{
			name: "503 with Retry-After date",
			h: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				jsonHandler(503, `{"error":{"message":"Service Unavailable","type":"server_error"}}`, "Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat))(w, r)
			}),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 503, Type: "server_error", Message: "Service Unavailable", RetryAfter: 10 * time.Second}
			},
			wantClass: execution.ClassOverloaded,
		},
		{
			name: "529 overloaded",
			h:    jsonHandler(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Status: 529, Type: "overloaded_error", Message: "Overloaded"}
			},
			wantClass: execution.ClassOverloaded,
		},
		{
			name: "200 with in-body error",
			h:    resetIn(200, 4*time.Second),
			want: func() *execution.ProviderError {
				return &execution.ProviderError{Code: "429", Message: "Rate limit exceeded: free-models-per-min", Metadata: rateLimitMeta(4 * time.Second), RetryAfter: 4 * time.Second}
			},
			wantClass: execution.ClassRateLimited,
		},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%t", tt.name, stream), func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, func(t *testing.T) {
					p, rt := newPipeProvider(t, tt.h)
					want := tt.want()
					_, err := p.Complete(t.Context(), request(stream))
					var got *execution.ProviderError
					if !errors.As(err, &got) {
						t.Fatalf("Complete() = %v (%T), want a *execution.ProviderError", err, err)
					}
					if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(execution.ProviderError{}, "Header"), cmpopts.EquateEmpty()); diff != "" {
						t.Errorf("Complete() error mismatch (-want +got):\n%s", diff)
					}
					if got.Header == nil {
						t.Errorf("Complete() error has no response headers")
					}
					if c := execution.Classify(t.Context(), err); c != tt.wantClass {
						t.Errorf("Classify(Complete()) = %v, want %v", c, tt.wantClass)
					}
					if n := rt.count(); n != 1 {
						t.Errorf("Complete() sent %d requests, want 1", n)
					}
				})
			})
		}
	}
}

// TestCompleteRedactsKey: a server that echoes the Authorization header (or
// the key) in its errors never gets the key into warden's errors.
func TestCompleteRedactsKey(t *testing.T) {
	t.Parallel()
	echo := func(format string, status int, contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			w.Header().Set("Content-Type", contentType)
			w.Header().Set("X-Echo", auth)
			w.WriteHeader(status)
			fmt.Fprintf(w, format, auth, strings.TrimPrefix(auth, "Bearer "))
		}
	}
	tests := []struct {
		name   string
		h      http.Handler
		stream bool
	}{
		{"401 JSON", echo(`{"error":{"message":"bad header %s (key %s)","type":"invalid_request_error","code":"invalid_api_key"}}`, 401, "application/json"), false},
		{"500 HTML", echo("<html>Authorization: %s key=%s</html>", 500, "text/html"), false},
		{"metadata raw", echo(`{"error":{"code":502,"message":"upstream failed","metadata":{"raw":"upstream said: %s / %s","provider_name":"x"}}}`, 502, "application/json"), true},
		{"in-stream error", echo("data: {\"error\":{\"code\":\"server_error\",\"message\":\"%s %s\"}}\n\n", 200, "text/event-stream"), true},
		{"in-body error", echo(`{"error":{"message":"%s %s"}}`, 200, "application/json"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := newServerProvider(t, tt.h, nil)
			_, err := p.Complete(t.Context(), request(tt.stream))
			if err == nil {
				t.Fatal("Complete() = nil error, want one")
			}
			for _, s := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err), fmt.Sprintf("%+v", errors.Unwrap(err))} {
				if strings.Contains(s, testKey) {
					t.Errorf("Complete() error %q contains the API key", s)
				}
			}
			var pe *execution.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("Complete() = %v, want a *execution.ProviderError", err)
			}
			if !strings.Contains(pe.Message+fmt.Sprint(pe.Metadata), execution.Redacted) {
				t.Errorf("Complete() message %q, metadata %v: want the key shown as %s", pe.Message, pe.Metadata, execution.Redacted)
			}
			if got := pe.Header.Get("X-Echo"); strings.Contains(got, testKey) {
				t.Errorf("Complete() error header X-Echo = %q, contains the key", got)
			}
		})
	}
}

// TestCompleteTransportErrors: errors below HTTP keep their type for Classify.
func TestCompleteTransportErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		h    http.HandlerFunc
		want execution.Class
	}{
		{"connection dropped before an answer", func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, execution.ClassConnection},
		// Issue 22: a 200 whose body is cut short is a bad answer of the
		// route, not "cannot connect" to a server that answered.
		{"body cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, `{"id":"x","choices":[`)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}, execution.ClassBadResponse},
		{"body cut in half, connection closed cleanly", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(200)
			io.WriteString(w, completionBody[:len(completionBody)/2])
		}, execution.ClassBadResponse},
		{"invalid JSON answer", jsonHandler(200, `{"choices": [}`), execution.ClassBadResponse},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p, _ := newServerProvider(t, tt.h, nil)
			_, err := p.Complete(t.Context(), request(false))
			if got := execution.Classify(t.Context(), err); got != tt.want {
				t.Errorf("Classify(Complete()) = %v (err %v), want %v", got, err, tt.want)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		t.Parallel()
		// A closed port on loopback: start and stop a server to get one.
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		p := mustNew(t, srv.URL+"/v1")
		_, err := p.Complete(t.Context(), request(false))
		if got := execution.Classify(t.Context(), err); got != execution.ClassConnection {
			t.Errorf("Classify(Complete()) = %v (err %v), want connection", got, err)
		}
	})
	t.Run("untrusted certificate", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewTLSServer(jsonHandler(200, completionBody))
		t.Cleanup(srv.Close)
		_, err := mustNew(t, srv.URL+"/v1").Complete(t.Context(), request(false))
		if got := execution.Classify(t.Context(), err); got != execution.ClassBadRequest {
			t.Errorf("Classify(Complete()) = %v (err %v), want bad_request", got, err)
		}
	})
	t.Run("plain HTTP server behind an https URL", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(jsonHandler(200, completionBody))
		t.Cleanup(srv.Close)
		_, err := mustNew(t, strings.Replace(srv.URL, "http://", "https://", 1)+"/v1").Complete(t.Context(), request(false))
		if got := execution.Classify(t.Context(), err); got != execution.ClassBadRequest {
			t.Errorf("Classify(Complete()) = %v (err %v), want bad_request", got, err)
		}
	})
	t.Run("not sent", func(t *testing.T) {
		t.Parallel()
		p := mustNew(t, "http://127.0.0.1:1/v1")
		req := request(false)
		req.Model = "gpt-5"
		req.Temperature = 0.5 // go-openai refuses a temperature for reasoning models
		_, err := p.Complete(t.Context(), req)
		if got := execution.Classify(t.Context(), err); got != execution.ClassBadRequest {
			t.Errorf("Classify(Complete()) = %v (err %v), want bad_request", got, err)
		}
	})
	t.Run("cancelled before sending", func(t *testing.T) {
		t.Parallel()
		p := mustNew(t, "http://127.0.0.1:1/v1")
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err := p.Complete(ctx, request(false))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Complete(cancelled ctx) = %v, want context.Canceled", err)
		}
	})
}

func mustNew(t *testing.T, baseURL string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{BaseURL: baseURL, APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
