package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/org/warden/execution"
	"github.com/org/warden/secrets"
)

// maxMessage bounds the length of a provider message kept in an error.
const maxMessage = 1000

// errorObject is an error as OpenAI-compatible servers send it: the value of
// "error" (OpenAI, OpenRouter, LiteLLM) or the whole body (vLLM).
type errorObject struct {
	Code     json.RawMessage `json:"code"`    // "rate_limit_exceeded", 429, "429" or null
	Message  json.RawMessage `json:"message"` // a string, or a list of strings
	Type     json.RawMessage `json:"type"`
	Metadata map[string]any  `json:"metadata"` // OpenRouter: headers, raw, provider_name, reasons, ...
}

// providerError builds the error for an error object obj received with
// status (0 for an in-body or in-stream error). The message and metadata
// are redacted; RetryAfter comes from the response headers or the metadata.
func (c *call) providerError(status int, obj json.RawMessage, partial bool) *execution.ProviderError {
	var eo errorObject
	_ = json.Unmarshal(obj, &eo) // a malformed object leaves the fields empty
	pe := &execution.ProviderError{
		Status:   status,
		Code:     rawText(eo.Code),
		Type:     rawText(eo.Type),
		Message:  c.message(rawText(eo.Message)),
		Header:   c.redactedHeader(),
		Metadata: c.redactValue(eo.Metadata).(map[string]any),
		Partial:  partial,
	}
	if pe.Message == "" {
		pe.Message = c.message(string(obj))
	}
	if d, ok := execution.ParseRetryAfter(c.header, eo.Metadata, time.Now()); ok {
		pe.RetryAfter = d
	}
	return pe
}

// bodyError returns the error carried by a body (a 2xx body, or lines of an
// event stream that were not events) as an in-body error with status 0, or
// nil when the body holds no error.
func (c *call) bodyError(body []byte, partial bool) *execution.ProviderError {
	var top struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &top) != nil || !hasValue(top.Error) {
		return nil
	}
	if isJSONObject(top.Error) {
		return c.providerError(0, top.Error, partial)
	}
	pe := c.providerError(0, []byte("{}"), partial)
	pe.Message = c.message(rawText(top.Error))
	return pe
}

// inBodyError returns the error of a 2xx non-streaming answer that carries
// one (OpenRouter reports some failures as 200 with {"error": ...}), or nil.
func (c *call) inBodyError() error {
	if c.truncated {
		return nil
	}
	if pe := c.bodyError(c.body.Bytes(), false); pe != nil {
		return pe
	}
	return nil
}

// statusError builds the error for an answer with an error status from the
// captured status, headers and body; err, go-openai's error, fills in what
// was not captured.
func (c *call) statusError(err error) *execution.ProviderError {
	status := c.status
	var (
		apiErr *goopenai.APIError
		reqErr *goopenai.RequestError
	)
	switch {
	case errors.As(err, &apiErr) && status == 0:
		status = apiErr.HTTPStatusCode
	case errors.As(err, &reqErr) && status == 0:
		status = reqErr.HTTPStatusCode
	}
	body := bytes.TrimSpace(c.body.Bytes())
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) == nil {
		switch e := top["error"]; {
		case isJSONObject(e):
			return c.providerError(status, e, false)
		case hasValue(e):
			pe := c.providerError(status, []byte("{}"), false)
			pe.Message = c.message(rawText(e))
			return pe
		case top["message"] != nil:
			return c.providerError(status, body, false)
		case top["detail"] != nil:
			pe := c.providerError(status, []byte("{}"), false)
			pe.Message = c.message(rawText(top["detail"]))
			return pe
		}
	}
	pe := c.providerError(status, []byte("{}"), false)
	pe.Message = c.message(strings.Join(strings.Fields(string(body)), " "))
	if pe.Message == "" && apiErr != nil {
		pe.Code = rawText(mustJSON(apiErr.Code))
		pe.Type = apiErr.Type
		pe.Message = c.message(apiErr.Message)
	}
	return pe
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// rawText is the text of a JSON string, number or list of strings; "" for
// null or anything else.
func rawText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return strings.Join(list, ", ")
	}
	return string(raw)
}

// message redacts and shortens a provider message.
func (c *call) message(s string) string {
	s = redact(c.secret, strings.TrimSpace(s))
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
	}
	return s
}

func (c *call) redactedHeader() map[string][]string {
	if c.header == nil {
		return nil
	}
	h := c.header.Clone()
	for k, vs := range h {
		for i, v := range vs {
			vs[i] = redact(c.secret, v)
		}
		h[k] = vs
	}
	return h
}

// redactValue returns a copy of a decoded JSON value with every string
// redacted. A nil map stays a (typed) nil map.
func (c *call) redactValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = c.redactValue(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = c.redactValue(x)
		}
		return out
	case string:
		return redact(c.secret, v)
	}
	return v
}

// redact removes secret and any Bearer token from s (secrets.Mask, the one
// redaction of held keys).
func redact(secret, s string) string { return secrets.Mask(s, secret) }

// redactError wraps err so that its message is redacted. errors.Is and
// errors.As still see err's chain.
func redactError(secret string, err error) error {
	return &redactedError{msg: redact(secret, err.Error()), err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }

func (e *redactedError) Unwrap() error { return e.err }
