package execution

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// Sentinel causes of an attempt that ended without a usable answer. The
// streaming watchdogs cancel the attempt with
// context.WithCancelCause(ErrFirstTokenTimeout or ErrIdleTimeout), and
// providers wrap the cause in the error they return, so Classify reads it with
// errors.Is.
var (
	// ErrFirstTokenTimeout: no content (or reasoning) arrived within the
	// request's FirstTokenTimeout.
	ErrFirstTokenTimeout = errors.New("no first token before the first-token deadline")
	// ErrIdleTimeout: a stream went silent (no data event) for longer than the
	// request's IdleTimeout. Comment and keep-alive lines are not progress.
	ErrIdleTimeout = errors.New("stream idle past the idle deadline")
	// ErrEmptyResponse: the server answered with no content and no usage
	// (no choices, or a stream that ended without any delta).
	ErrEmptyResponse = errors.New("empty response")
)

// BadResponseError wraps an answer that arrived but could not be used: invalid
// JSON, a schema mismatch, a truncated or empty answer. It is
// ClassBadResponse.
type BadResponseError struct {
	Reason string // short, for reports: "empty", "invalid json", "truncated", ...
	Err    error  // the underlying error, or nil
}

func (e *BadResponseError) Error() string {
	if e.Err == nil {
		return "bad response: " + e.Reason
	}
	return "bad response: " + e.Reason + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *BadResponseError) Unwrap() error { return e.Err }

// Classify maps an attempt's error to a Class. parent is the context of the
// caller (the item or review context, NOT the attempt's own deadline
// context): when parent is done, the class is ClassCancelled whatever err
// says, so our own cancellations never count against a route. An
// attempt-deadline expiry (context.DeadlineExceeded), or an
// ErrFirstTokenTimeout / ErrIdleTimeout cause, is ClassTimeout. A nil err is
// ClassSuccess; an error Classify does not recognise is ClassUnknown.
//
// Classify reads errors with errors.Is and errors.As only. The one exception
// is the Code and Type of a *ProviderError, which are data sent by the
// provider (see classifyProvider). An error in err's chain that has a
// method Class() Class (for example the engine's own rejections) is given
// that class, unless it is ClassUnknown.
//
// The order of the checks, first match wins:
//
//  1. nil → success; parent done → cancelled; an error with a Class method.
//  2. ErrFirstTokenTimeout, ErrIdleTimeout, context.DeadlineExceeded (also net's
//     i/o timeouts, which match it) → timeout; context.Canceled → cancelled
//     (our attempt was cancelled, e.g. a hedge loser).
//  3. *BadResponseError, ErrEmptyResponse, *json.SyntaxError,
//     *json.UnmarshalTypeError → bad_response.
//  4. *ProviderError → its status and code (classifyProvider).
//  5. TLS and x509 errors, http.ErrSchemeMismatch, a *url.Error for a URL
//     whose scheme is not http or https → bad_request (configuration).
//  6. io.EOF, io.ErrUnexpectedEOF, connection errnos (refused, reset,
//     aborted, broken pipe, unreachable), *net.DNSError, *net.OpError →
//     connection; any other net.Error that reports Timeout → timeout; any
//     other *url.Error (the round trip failed) → connection.
func Classify(parent context.Context, err error) Class {
	if err == nil {
		return ClassSuccess
	}
	if parent != nil && parent.Err() != nil {
		return ClassCancelled
	}
	var classer interface{ Class() Class }
	if errors.As(err, &classer) {
		if c := classer.Class(); c != ClassUnknown {
			return c
		}
	}
	switch {
	case errors.Is(err, ErrFirstTokenTimeout), errors.Is(err, ErrIdleTimeout),
		errors.Is(err, context.DeadlineExceeded):
		return ClassTimeout
	case errors.Is(err, context.Canceled):
		return ClassCancelled
	}
	var (
		bad       *BadResponseError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	if errors.As(err, &bad) || errors.Is(err, ErrEmptyResponse) ||
		errors.As(err, &syntaxErr) || errors.As(err, &typeErr) {
		return ClassBadResponse
	}
	var pe *ProviderError
	if errors.As(err, &pe) {
		return classifyProvider(pe)
	}
	if isConfigTransportError(err) {
		return ClassBadRequest
	}
	return classifyTransport(err)
}

// isConfigTransportError reports errors that retrying or another attempt on
// the same route cannot fix: TLS and certificate failures, a plain-HTTP
// server behind an https URL, and an unsupported URL scheme.
func isConfigTransportError(err error) bool {
	var (
		certVerify *tls.CertificateVerificationError
		record     tls.RecordHeaderError
		alert      tls.AlertError
		unknownCA  x509.UnknownAuthorityError
		hostname   x509.HostnameError
		invalid    x509.CertificateInvalidError
		system     x509.SystemRootsError
		ue         *url.Error
	)
	switch {
	case errors.As(err, &certVerify), errors.As(err, &record), errors.As(err, &alert),
		errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid),
		errors.As(err, &system), errors.Is(err, http.ErrSchemeMismatch):
		return true
	case errors.As(err, &ue):
		// net/http reports an unsupported scheme with an unexported error
		// type; the URL it failed on is data we can read instead.
		u, perr := url.Parse(ue.URL)
		return perr == nil && u.Scheme != "http" && u.Scheme != "https"
	}
	return false
}

// classifyTransport classifies an error that came from below HTTP.
func classifyTransport(err error) Class {
	var (
		dnsErr *net.DNSError
		opErr  *net.OpError
		netErr net.Error
		ue     *url.Error
	)
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH),
		errors.Is(err, net.ErrClosed),
		errors.As(err, &dnsErr), errors.As(err, &opErr):
		return ClassConnection
	case errors.As(err, &netErr) && netErr.Timeout():
		return ClassTimeout
	case errors.As(err, &ue):
		return ClassConnection
	}
	return ClassUnknown
}

// classifyProvider maps a provider's error answer to a Class.
//
// Provider codes and types are data, compared case-insensitively. A 401 or
// 403 is auth whatever the code says (except a refused input: moderation
// metadata or a content code is bad_request, and a 403 with a quota code is
// payment; none of them is retried). Otherwise a code that names the
// problem wins over the HTTP status; a numeric code (OpenRouter
// sends {"code": 429} in the body and in streams) stands in for a missing
// status:
//
//	code rate_limit_exceeded, rate_limit_error, rate_limited, too_many_requests   → rate_limited
//	code insufficient_quota, insufficient_credits, payment_required              → payment
//	     (OpenAI sends insufficient_quota with 429; waiting does not fix it)
//	code overloaded, overloaded_error, server_busy, server busy                   → overloaded
//	code model_not_found, invalid_model, model_not_available                      → model_not_found
//	code context_length_exceeded, string_above_max_length, tokens_exceeded        → bad_request
//	     (no class of its own: isContextLength lets the engine pick a larger-context route)
//	code content_filter, content_policy_violation, moderation, flagged            → bad_request
//	     (also with 403: the input was refused, not the key; the route stays usable)
//	403 with OpenRouter moderation metadata (reasons, flagged_input) → bad_request
//	3xx (a redirect is not followed) → bad_request
//	401, 403                → auth
//	402                     → payment
//	404                     → model_not_found (also a wrong base path: configuration either way)
//	408                     → timeout
//	413, 400, 422, other 4xx → bad_request
//	429                     → rate_limited
//	503, 529                → overloaded
//	500, 502, 504, other 5xx → server_error
//	no status, no known code: by type (rate_limit_error → rate_limited,
//	overloaded_error → overloaded, authentication_error/permission_error →
//	auth, invalid_request_error → bad_request), else server_error: the
//	provider failed while answering (usually an in-stream error).
//
// Partial (an error after part of a stream) does not change the class.
func classifyProvider(e *ProviderError) Class {
	code := strings.ToLower(strings.TrimSpace(e.Code))
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		// Auth is read from the status whatever the body's code says
		// (a 401 saying rate_limit_exceeded is still a key problem, and
		// must never be retried); only a refused input stays usable.
		switch {
		case isModeration(e.Metadata), isContentCode(code):
			return ClassBadRequest
		case e.Status == http.StatusForbidden && isPaymentCode(code):
			return ClassPayment
		}
		return ClassAuth
	}
	if c, ok := classifyCode(code); ok {
		return c
	}
	status := e.Status
	if status == 0 {
		if n, err := strconv.Atoi(code); err == nil && n >= 400 && n <= 599 {
			status = n
		}
	}
	if c, ok := classifyStatus(status, e.Metadata); ok {
		return c
	}
	switch strings.ToLower(e.Type) {
	case "rate_limit_error", "rate_limit_exceeded", "tokens", "requests":
		return ClassRateLimited
	case "overloaded_error":
		return ClassOverloaded
	case "authentication_error", "permission_error":
		return ClassAuth
	case "invalid_request_error":
		return ClassBadRequest
	}
	return ClassServerError
}

// isContextLength reports whether err is a provider refusing the request as
// too long for the model's context: a context-length code (class
// bad_request), or 413. The engine then fails over to a route with a larger
// Route.ContextWindow, if there is one.
func isContextLength(err error) bool {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	return slices.Contains(contextLengthCodes, strings.ToLower(strings.TrimSpace(pe.Code))) || pe.Status == http.StatusRequestEntityTooLarge
}

// contextLengthCodes are the error codes of a request too long for the
// model's context (class bad_request; isContextLength).
var contextLengthCodes = []string{"context_length_exceeded", "string_above_max_length", "tokens_exceeded"}

// classifyCode is the class an error body's code (lower case) names; ok
// is false for a code that names none.
func classifyCode(code string) (c Class, ok bool) {
	switch code {
	case "rate_limit_exceeded", "rate_limit_error", "rate_limited", "too_many_requests":
		return ClassRateLimited, true
	case "insufficient_quota", "insufficient_credits", "payment_required":
		return ClassPayment, true
	case "overloaded", "overloaded_error", "server_busy", "server busy":
		return ClassOverloaded, true
	case "model_not_found", "invalid_model", "model_not_available":
		return ClassModelNotFound, true
	case "content_filter", "content_policy_violation", "moderation", "flagged":
		return ClassBadRequest, true
	}
	if slices.Contains(contextLengthCodes, code) {
		return ClassBadRequest, true
	}
	return ClassUnknown, false
}

// classifyStatus is the class an HTTP status stands for; ok is false for
// a status that is not an error one (0: none).
func classifyStatus(status int, metadata map[string]any) (c Class, ok bool) {
	switch {
	case status >= 300 && status < 400:
		return ClassBadRequest, true // a redirect we do not follow: the base URL is wrong
	case status == http.StatusForbidden && isModeration(metadata):
		return ClassBadRequest, true
	case status == http.StatusUnauthorized, status == http.StatusForbidden:
		return ClassAuth, true
	case status == http.StatusPaymentRequired:
		return ClassPayment, true
	case status == http.StatusNotFound:
		return ClassModelNotFound, true
	case status == http.StatusRequestTimeout:
		return ClassTimeout, true
	case status == http.StatusTooManyRequests:
		return ClassRateLimited, true
	case status == http.StatusServiceUnavailable, status == 529:
		return ClassOverloaded, true
	case status >= 400 && status < 500:
		return ClassBadRequest, true
	case status >= 500 && status < 600:
		return ClassServerError, true
	}
	return ClassUnknown, false
}

func isContentCode(code string) bool {
	switch code {
	case "content_filter", "content_policy_violation", "moderation", "flagged":
		return true
	}
	return false
}

func isPaymentCode(code string) bool {
	switch code {
	case "insufficient_quota", "insufficient_credits", "payment_required":
		return true
	}
	return false
}

// isModeration reports OpenRouter's moderation error metadata
// ({"reasons": [...], "flagged_input": "...", "provider_name": ...}).
func isModeration(metadata map[string]any) bool {
	_, reasons := metadata["reasons"]
	_, flagged := metadata["flagged_input"]
	return reasons || flagged
}
