package execution

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"testing"
)

// rejected is an error that knows its class, like the engine's rejections.
type rejected struct{}

func (rejected) Error() string { return "breaker open" }
func (rejected) Class() Class  { return ClassRejected }

func TestClassify(t *testing.T) {
	t.Parallel()
	pe := func(status int, code, typ string) error {
		return fmt.Errorf("complete: %w", &ProviderError{Status: status, Code: code, Type: typ, Message: "m"})
	}
	urlErr := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://api.example.com/v1/chat/completions", Err: err}
	}
	dial := func(errno syscall.Errno) error {
		return urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: errno}})
	}
	read := func(errno syscall.Errno) error {
		return urlErr(&net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: errno}})
	}
	_, unsupported := (&http.Client{}).Get("ftp://example.com/v1") // fails before any I/O

	tests := []struct {
		name string
		err  error
		want Class
	}{
		{"nil", nil, ClassSuccess},

		// HTTP statuses.
		{"307", pe(307, "", ""), ClassBadRequest},
		{"400", pe(400, "", "invalid_request_error"), ClassBadRequest},
		{"400 context_length_exceeded", pe(400, "context_length_exceeded", "invalid_request_error"), ClassBadRequest},
		{"400 invalid model", pe(400, "invalid_model", ""), ClassModelNotFound},
		{"401", pe(401, "invalid_api_key", "invalid_request_error"), ClassAuth},
		{"402", pe(402, "", ""), ClassPayment},
		{"403", pe(403, "", "permission_error"), ClassAuth},
		{"403 content filter", pe(403, "content_filter", ""), ClassBadRequest},
		{"403 OpenRouter moderation", &ProviderError{Status: 403, Code: "403", Metadata: map[string]any{"reasons": []any{"violence"}, "flagged_input": "..."}}, ClassBadRequest},
		{"404", pe(404, "", ""), ClassModelNotFound},
		{"404 model_not_found", pe(404, "model_not_found", "invalid_request_error"), ClassModelNotFound},
		{"408", pe(408, "", ""), ClassTimeout},
		{"409", pe(409, "", ""), ClassBadRequest},
		{"413", pe(413, "", ""), ClassBadRequest},
		{"422", pe(422, "", ""), ClassBadRequest},
		{"429", pe(429, "", ""), ClassRateLimited},
		{"429 rate_limit_exceeded", pe(429, "rate_limit_exceeded", "requests"), ClassRateLimited},
		{"429 insufficient_quota", pe(429, "insufficient_quota", "insufficient_quota"), ClassPayment},
		{"500", pe(500, "", ""), ClassServerError},
		{"500 overloaded code", pe(500, "overloaded", ""), ClassOverloaded},
		{"502", pe(502, "", ""), ClassServerError},
		{"503", pe(503, "", ""), ClassOverloaded},
		{"504", pe(504, "", ""), ClassServerError},
		{"529", pe(529, "", "overloaded_error"), ClassOverloaded},
		{"599", pe(599, "", ""), ClassServerError},

		// In-body and in-stream errors (no HTTP status).
		{"status 0 code 429", pe(0, "429", ""), ClassRateLimited},
		{"status 0 rate_limit_exceeded", pe(0, "rate_limit_exceeded", ""), ClassRateLimited},
		{"status 0 code 402", pe(0, "402", ""), ClassPayment},
		{"status 0 code 502", pe(0, "502", ""), ClassServerError},
		{"status 0 code 503", pe(0, "503", ""), ClassOverloaded},
		{"status 0 server busy", pe(0, "Server Busy", ""), ClassOverloaded},
		{"status 0 overloaded type", pe(0, "", "overloaded_error"), ClassOverloaded},
		{"status 0 rate limit type", pe(0, "", "rate_limit_error"), ClassRateLimited},
		{"status 0 invalid_request_error", pe(0, "", "invalid_request_error"), ClassBadRequest},
		{"status 0 unknown", pe(0, "", ""), ClassServerError},
		{"partial keeps code class", &ProviderError{Code: "429", Partial: true}, ClassRateLimited},
		{"partial unknown", &ProviderError{Message: "stream broken", Partial: true}, ClassServerError},

		// Bad answers.
		{"bad response", &BadResponseError{Reason: "invalid json"}, ClassBadResponse},
		{"empty", &BadResponseError{Reason: "empty", Err: ErrEmptyResponse}, ClassBadResponse},
		{"empty sentinel", fmt.Errorf("x: %w", ErrEmptyResponse), ClassBadResponse},
		{"json syntax", fmt.Errorf("decode: %w", json.Unmarshal([]byte("{"), new(any))), ClassBadResponse},

		// Time.
		{"attempt deadline", context.DeadlineExceeded, ClassTimeout},
		{"attempt deadline in url.Error", urlErr(context.DeadlineExceeded), ClassTimeout},
		{"first token", fmt.Errorf("stream: %w", ErrFirstTokenTimeout), ClassTimeout},
		{"idle", fmt.Errorf("stream: %w (%w)", ErrIdleTimeout, context.Canceled), ClassTimeout},
		{"net i/o timeout", urlErr(&net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}), ClassConnection},
		{"attempt cancelled, parent alive", urlErr(context.Canceled), ClassCancelled},

		// Transport.
		{"refused", dial(syscall.ECONNREFUSED), ClassConnection},
		{"reset", read(syscall.ECONNRESET), ClassConnection},
		{"broken pipe", read(syscall.EPIPE), ClassConnection},
		{"unreachable", dial(syscall.EHOSTUNREACH), ClassConnection},
		{"dns", urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.example.com", IsNotFound: true}}), ClassConnection},
		{"EOF", urlErr(io.EOF), ClassConnection},
		{"unexpected EOF", fmt.Errorf("stream: %w", io.ErrUnexpectedEOF), ClassConnection},
		{"other url.Error", urlErr(errors.New("http2: stream closed")), ClassConnection},
		{"tls verify", urlErr(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), ClassBadRequest},
		{"x509 hostname", urlErr(x509.HostnameError{Host: "x"}), ClassBadRequest},
		{"tls record header", urlErr(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), ClassBadRequest},
		{"scheme mismatch", urlErr(http.ErrSchemeMismatch), ClassBadRequest},
		{"unsupported scheme", unsupported, ClassBadRequest},

		// Classes the error knows itself.
		{"rejected", fmt.Errorf("route r0: %w", rejected{}), ClassRejected},

		{"unknown", errors.New("something else"), ClassUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(t.Context(), tt.err); got != tt.want {
				t.Errorf("Classify(ctx, %v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestClassifyParentDone(t *testing.T) {
	t.Parallel()
	reset := &url.Error{Op: "Post", URL: "https://api.example.com/v1/chat/completions",
		Err: &net.OpError{Op: "read", Net: "tcp", Err: &os.SyscallError{Syscall: "read", Err: syscall.ECONNRESET}}}
	cancelled, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("SIGINT"))
	expired, cancel2 := context.WithTimeout(context.Background(), -1)
	defer cancel2()
	tests := []struct {
		name   string
		parent context.Context
		err    error
		want   Class
	}{
		{"cancelled parent beats connection reset", cancelled, reset, ClassCancelled},
		{"cancelled parent beats 503", cancelled, &ProviderError{Status: 503}, ClassCancelled},
		{"cancelled parent beats idle timeout", cancelled, ErrIdleTimeout, ClassCancelled},
		{"expired parent beats attempt deadline", expired, context.DeadlineExceeded, ClassCancelled},
		{"nil error with parent done is still success", cancelled, nil, ClassSuccess},
		{"nil parent", nil, reset, ClassConnection},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tt.parent, tt.err); got != tt.want {
				t.Errorf("Classify(%v, %v) = %v, want %v", tt.parent, tt.err, got, tt.want)
			}
		})
	}
}
