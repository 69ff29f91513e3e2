package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/org/warden/execution"
)

// emptyMessagesLimit is go-openai's limit on non-data lines between two data
// events. The SSE filter already removes comments and blank lines; the limit
// stays high so that nothing but our watchdogs and the context end a stream.
const emptyMessagesLimit = 10_000

// Config configures a Provider.
type Config struct {
	BaseURL string           // e.g. https://api.openai.com/v1 or https://openrouter.ai/api/v1
	APIKey  execution.Secret // may be empty (Ollama): no Authorization header is sent
	// HTTPClient sends the requests. Nil means a client with no timeout of
	// its own (the caller's context owns time) and a transport tuned for a
	// few concurrent long requests to one host. A given client is copied:
	// its Transport is wrapped and redirects are not followed (a redirect
	// would be a second request), and its Timeout, if any, is kept.
	HTTPClient *http.Client
	// Headers are extra request headers (e.g. OpenRouter's HTTP-Referer and
	// X-Title). They may not set Authorization, Content-Type, Content-Length
	// or Accept; a User-Agent here replaces UserAgent.
	Headers map[string]string
	// UserAgent identifies the client on every request, so that servers'
	// metrics can tell warden's calls apart: "warden/VERSION" as the caller
	// passes it; empty means "warden".
	UserAgent string
}

// Provider is an execution.Provider for an OpenAI-compatible endpoint. It is
// safe for concurrent use.
type Provider struct {
	client *goopenai.Client
	secret execution.Secret
}

var (
	_ execution.Provider     = (*Provider)(nil)
	_ execution.BodyMeasurer = (*Provider)(nil)
)

// New checks cfg and returns a Provider. BaseURL must be an absolute http or
// https URL; the error names it (with any password in it redacted).
func New(cfg Config) (*Provider, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("openai: base URL %q is not a URL: %w", cfg.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q must be an absolute http or https URL", u.Redacted())
	}
	headers := make(http.Header, len(cfg.Headers))
	for k, v := range cfg.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Content-Type", "Content-Length", "Accept":
			return nil, fmt.Errorf("openai: header %q is set by the provider and cannot be configured", k)
		}
		if k == "" || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
			return nil, fmt.Errorf("openai: header %q is not a valid header", k)
		}
		headers.Set(k, v)
	}
	ua := cmp.Or(cfg.UserAgent, "warden")
	if strings.ContainsAny(ua, "\r\n") {
		return nil, fmt.Errorf("openai: user agent %q is not a valid header value", ua)
	}
	if headers.Get("User-Agent") == "" {
		headers.Set("User-Agent", ua)
	}

	hc := &http.Client{Transport: newTransport()}
	if cfg.HTTPClient != nil {
		hc = new(http.Client)
		*hc = *cfg.HTTPClient
		if hc.Transport == nil {
			hc.Transport = http.DefaultTransport
		}
	}
	hc.Transport = &transport{base: hc.Transport, headers: headers}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	oc := goopenai.DefaultConfig(cfg.APIKey.Reveal())
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = hc
	oc.EmptyMessagesLimit = emptyMessagesLimit
	return &Provider{client: goopenai.NewClientWithConfig(oc), secret: cfg.APIKey}, nil
}

// newTransport returns the default transport: HTTP/2 when offered, enough
// idle connections per host for a route's concurrency, and no timeouts of
// its own (dial, TLS handshake and response headers are all bounded by the
// request's context instead).
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
	}
}

// Complete sends req as one chat-completion request (exactly one HTTP
// request: go-openai does not retry and redirects are not followed) and
// returns the answer. Its only deadline is ctx's, plus, for a streaming
// request, the FirstTokenTimeout and IdleTimeout watchdogs.
//
// Errors, for execution.Classify:
//   - an error status, an in-body error or an in-stream error event: a
//     *execution.ProviderError with the status (0 in a body or stream), code,
//     type, message, response headers, OpenRouter's error metadata and the
//     Retry-After the server asked for; Partial when the stream had already
//     produced content (which is discarded);
//   - ctx done or a watchdog fired: an error wrapping context.Cause (so
//     context.DeadlineExceeded, context.Canceled, execution.ErrFirstTokenTimeout
//     or execution.ErrIdleTimeout);
//   - an answer with no choice or no content: a *execution.BadResponseError
//     wrapping execution.ErrEmptyResponse, returned together with the
//     Response so that its Usage can still be counted; an answer that is not
//     JSON, or a 2xx whose body was cut short (a stream ended before its
//     last event, the connection dropped mid-answer): a
//     *execution.BadResponseError wrapping the read error;
//   - a request go-openai refuses to send (unknown legacy model, parameters
//     a reasoning model rejects): an error whose Class method says
//     model_not_found or bad_request;
//   - transport errors, wrapped so that errors.Is and errors.As still see
//     the net, syscall, TLS and url errors.
//
// A finish_reason of "length" with content is a Response, not an error: the
// caller's parser judges whether the truncated answer is usable. No error
// message contains the API key or a Bearer token.
func (p *Provider) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c := &call{secret: p.secret.Reveal(), healing: req.ResponseHealing, stream: req.Stream}
	if req.Stream {
		c.watch = startWatchdog(cancel, req.FirstTokenTimeout, req.IdleTimeout)
		defer c.watch.stop()
	}
	ctx = context.WithValue(ctx, callKey{}, c)
	oreq := chatRequest(req)
	if req.Stream {
		return p.stream(ctx, c, oreq)
	}
	resp, err := p.client.CreateChatCompletion(ctx, oreq)
	if err != nil {
		return nil, p.fail(ctx, c, err)
	}
	if c.status >= 300 {
		return nil, c.statusError(nil)
	}
	if pe := c.inBodyError(); pe != nil {
		return nil, pe
	}
	out := &execution.Response{
		Model:     resp.Model,
		Usage:     usage(&resp.Usage),
		FirstByte: c.firstByte,
	}
	if len(resp.Choices) == 0 {
		return out, &execution.BadResponseError{Reason: "no choices", Err: execution.ErrEmptyResponse}
	}
	out.Content = resp.Choices[0].Message.Content
	out.FinishReason = string(resp.Choices[0].FinishReason)
	if out.Content == "" {
		return out, emptyError(out)
	}
	return out, nil
}

// BodyChars returns the number of characters (runes) of the exact body
// Complete sends for req: go-openai's JSON of the request (with "stream",
// the stream options of a streaming request, max_tokens or
// max_completion_tokens as the model needs, HTML characters escaped as
// json.Marshal escapes them), plus the response-healing plugin the
// transport adds. It is the input of the adaptive deadline
// (execution.Measure).
func (p *Provider) BodyChars(req *execution.Request) int {
	oreq := chatRequest(req)
	if req.Stream {
		oreq.Stream = true
		oreq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(oreq)
	if err != nil {
		return execution.BodyChars(req, execution.Route{Model: req.Model, Stream: req.Stream, ResponseHealing: req.ResponseHealing})
	}
	if req.ResponseHealing {
		if hb, err := withPlugin(b); err == nil {
			b = hb
		}
	}
	return utf8.RuneCount(b)
}

// stream sends oreq as a streaming request and accumulates the answer.
func (p *Provider) stream(ctx context.Context, c *call, oreq goopenai.ChatCompletionRequest) (*execution.Response, error) {
	oreq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true} // BodyChars counts it too
	s, err := p.client.CreateChatCompletionStream(ctx, oreq)
	if err != nil {
		return nil, p.fail(ctx, c, err)
	}
	defer s.Close()
	if c.status >= 300 {
		return nil, c.statusError(nil)
	}
	out := new(execution.Response)
	var content strings.Builder
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) && ctx.Err() == nil {
			break
		}
		if err != nil {
			return nil, p.fail(ctx, c, err)
		}
		if out.Model == "" {
			out.Model = chunk.Model
		}
		if chunk.Usage != nil {
			out.Usage = usage(chunk.Usage)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			content.WriteString(ch.Delta.Content)
			if ch.FinishReason != "" {
				out.FinishReason = string(ch.FinishReason)
			}
		}
	}
	out.Content = content.String()
	out.FirstByte = c.firstEvent
	if out.Content == "" {
		return out, emptyError(out)
	}
	return out, nil
}

// chatRequest translates req into go-openai's request.
func chatRequest(req *execution.Request) goopenai.ChatCompletionRequest {
	oreq := goopenai.ChatCompletionRequest{
		Model:       req.Model,
		Messages:    make([]goopenai.ChatCompletionMessage, 0, len(req.Messages)),
		Temperature: req.Temperature,
	}
	for _, m := range req.Messages {
		oreq.Messages = append(oreq.Messages, goopenai.ChatCompletionMessage{Role: m.Role, Content: m.Content})
	}
	if isReasoningModel(req.Model) {
		// go-openai refuses max_tokens for these names before sending, as
		// OpenAI's API does; max_completion_tokens is the same bound.
		oreq.MaxCompletionTokens = req.MaxTokens
	} else {
		oreq.MaxTokens = req.MaxTokens
	}
	if req.Schema != nil {
		oreq.ResponseFormat = &goopenai.ChatCompletionResponseFormat{
			Type: goopenai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &goopenai.ChatCompletionResponseFormatJSONSchema{
				Name:   req.Schema.Name,
				Schema: rawSchema(req.Schema.Schema),
				Strict: req.Schema.Strict,
			},
		}
	}
	return oreq
}

// isReasoningModel reports the model names for which go-openai's reasoning
// validator rejects max_tokens.
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// rawSchema is a JSON schema that marshals as itself.
type rawSchema json.RawMessage

// MarshalJSON implements json.Marshaler.
func (s rawSchema) MarshalJSON() ([]byte, error) {
	if len(s) == 0 {
		return []byte("{}"), nil
	}
	return json.RawMessage(s).MarshalJSON()
}

func usage(u *goopenai.Usage) execution.Usage {
	out := execution.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// emptyError is the error for an answer without content.
func emptyError(r *execution.Response) error {
	reason := "empty content"
	if r.FinishReason != "" {
		reason += ", finish_reason " + r.FinishReason
	}
	if r.Usage == (execution.Usage{}) {
		reason += ", zero usage"
	}
	return &execution.BadResponseError{Reason: reason, Err: execution.ErrEmptyResponse}
}

// fail translates the error of a go-openai call into execution's vocabulary.
func (p *Provider) fail(ctx context.Context, c *call, err error) error {
	var (
		pe     *execution.ProviderError
		apiErr *goopenai.APIError
		reqErr *goopenai.RequestError
		syn    *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case ctx.Err() != nil:
		// Our deadline, the caller's cancellation or a watchdog: the cause
		// says which; what the transport made of it does not matter.
		if cause := context.Cause(ctx); cause != ctx.Err() {
			return redactError(c.secret, fmt.Errorf("chat completion: %w (%w: %w)", cause, ctx.Err(), err))
		}
		return redactError(c.secret, fmt.Errorf("chat completion: %w (%w)", ctx.Err(), err))
	case errors.As(err, &pe):
		return pe // from the SSE filter, already redacted
	case errors.As(err, &apiErr) || errors.As(err, &reqErr) || c.status >= 300:
		// go-openai reads a 3xx (a redirect, not followed) as an answer.
		return c.statusError(err)
	case errors.Is(err, ErrBodyTooLarge):
		return &execution.BadResponseError{Reason: "answer too large", Err: err}
	case c.requests == 0:
		class := execution.ClassBadRequest
		if errors.Is(err, goopenai.ErrChatCompletionInvalidModel) {
			class = execution.ClassModelNotFound
		}
		return &notSentError{class: class, err: redactError(c.secret, err)}
	case errors.As(err, &syn) || errors.As(err, &typ):
		return &execution.BadResponseError{Reason: "invalid json", Err: redactError(c.secret, err)}
	case c.status >= 200 && c.status < 300:
		// The server answered 2xx and then its body could not be read
		// whole (cut short, the connection dropped mid-answer, a stream
		// ended before its last event): a bad answer of this route, not a
		// failure to connect to a server that did answer (issue 22).
		reason := "answer cut short"
		if c.stream {
			reason = "stream cut short"
		}
		return &execution.BadResponseError{Reason: reason, Err: redactError(c.secret, err)}
	}
	return redactError(c.secret, fmt.Errorf("chat completion: %w", err))
}

// notSentError is a request go-openai refused to send.
type notSentError struct {
	class execution.Class
	err   error
}

func (e *notSentError) Error() string { return "chat completion not sent: " + e.err.Error() }

func (e *notSentError) Unwrap() error { return e.err }

// Class returns the error's class, for execution.Classify.
func (e *notSentError) Class() execution.Class { return e.class }
