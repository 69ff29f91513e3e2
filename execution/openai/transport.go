package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/org/warden/execution"
)

// maxCapture bounds how much of a response body is kept for error parsing.
const maxCapture = 4 << 20

// Caps on the response body read, so that a runaway or hostile server
// cannot make warden hold an unbounded answer: a JSON answer is read up to
// MaxBodyBytes (four times review.MaxAnswerBytes, for JSON escaping), an
// event stream, whose framing is tens of bytes per token, up to
// MaxStreamBytes. Past the cap the read fails with ErrBodyTooLarge and
// Complete returns a *execution.BadResponseError.
const (
	MaxBodyBytes   = 4 << 20
	MaxStreamBytes = 64 << 20
)

// ErrBodyTooLarge is the read error of a response body over its cap.
var ErrBodyTooLarge = errors.New("response body over the size cap: not read further")

// cappedBody fails reads past max bytes with ErrBodyTooLarge.
type cappedBody struct {
	io.ReadCloser
	max, read int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.read > b.max {
		return 0, fmt.Errorf("%w (%d MiB)", ErrBodyTooLarge, b.max>>20)
	}
	if room := b.max + 1 - b.read; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.ReadCloser.Read(p)
	b.read += int64(n)
	if b.read > b.max {
		return n, fmt.Errorf("%w (%d MiB)", ErrBodyTooLarge, b.max>>20)
	}
	return n, err
}

// callKey is the context key of the *call a request belongs to.
type callKey struct{}

// call is the state of one Complete, shared with the transport through the
// request's context. The transport and the SSE filter run on the goroutine
// that called Complete (http.Client.Do calls RoundTrip synchronously and
// go-openai reads the body in Recv), so the fields need no lock; the
// watchdog, whose timers fire on other goroutines, has its own.
type call struct {
	secret  string
	healing bool
	stream  bool
	watch   *watchdog

	requests   int           // HTTP requests sent
	sentAt     time.Time     // when the request was handed to the base transport
	status     int           // response status
	header     http.Header   // response headers
	body       bytes.Buffer  // the first maxCapture bytes of a non-stream body
	truncated  bool          // body holds only part of the body
	firstByte  time.Duration // sentAt to the response headers
	firstEvent time.Duration // sentAt to the first SSE data event
}

// transport adds the configured headers and the response-healing plugin to
// each request, and captures the response's status, headers and body (or
// filters its event stream) for the call in the request's context.
type transport struct {
	base    http.RoundTripper
	headers http.Header
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c, _ := req.Context().Value(callKey{}).(*call)
	if c == nil {
		c = new(call) // not sent by Complete: capture into a throwaway call
	}
	c.requests++
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header[k] = v
	}
	if c.healing {
		if err := addPlugin(req); err != nil {
			return nil, err
		}
	}
	c.sentAt = time.Now()
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	c.firstByte = time.Since(c.sentAt)
	c.status, c.header = resp.StatusCode, resp.Header.Clone()
	if c.stream && resp.StatusCode >= 200 && resp.StatusCode < 300 {
		resp.Body = newSSEFilter(&cappedBody{ReadCloser: resp.Body, max: MaxStreamBytes}, c)
	} else {
		resp.Body = &teeBody{ReadCloser: &cappedBody{ReadCloser: resp.Body, max: MaxBodyBytes}, c: c}
	}
	return resp, nil
}

// addPlugin adds "plugins":[{"id":"response-healing"}] to req's JSON body
// (go-openai has no field for it) and fixes the length.
func addPlugin(req *http.Request) error {
	if req.Body == nil {
		return nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return fmt.Errorf("read request body: %w", err)
	}
	if b, err = withPlugin(b); err != nil {
		return err
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	req.ContentLength = int64(len(b))
	req.Header.Del("Content-Length")
	return nil
}

// withPlugin returns the JSON body b with the response-healing plugin
// added. Provider.BodyChars measures what it returns.
func withPlugin(b []byte) ([]byte, error) {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, fmt.Errorf("add response-healing plugin: %w", err)
	}
	body["plugins"] = json.RawMessage(`[{"id":"response-healing"}]`)
	out, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("add response-healing plugin: %w", err)
	}
	return out, nil
}

// teeBody keeps a copy of what is read of a body, up to maxCapture bytes.
type teeBody struct {
	io.ReadCloser
	c *call
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if room := maxCapture - b.c.body.Len(); room > 0 {
		b.c.body.Write(p[:min(n, room)])
		if n > room {
			b.c.truncated = true
		}
	} else if n > 0 {
		b.c.truncated = true
	}
	return n, err
}

// sseFilter rewrites an event stream for go-openai, line by line:
//   - comments (lines beginning with ':', such as ": OPENROUTER PROCESSING"
//     and keep-alives), blank lines and the fields event:, id: and retry:
//     are dropped: go-openai would otherwise gather them as the body of an
//     error and turn a following in-stream error into "unexpected end of
//     JSON input";
//   - a data event carrying an error ends the stream with a
//     *execution.ProviderError as the read error, which go-openai returns
//     from Recv as it is;
//   - every other data event is passed on and fed to the watchdogs;
//   - an end of the body before "data: [DONE]" or a finish_reason is
//     io.ErrUnexpectedEOF.
type sseFilter struct {
	body io.ReadCloser
	r    *bufio.Reader
	c    *call

	out      []byte       // filtered bytes not yet read
	err      error        // returned once out is drained
	content  bool         // a content, reasoning or tool-call delta was seen
	finished bool         // a finish_reason was seen
	done     bool         // data: [DONE] was seen
	other    bytes.Buffer // lines that are not SSE (a JSON error body)
}

func newSSEFilter(body io.ReadCloser, c *call) *sseFilter {
	return &sseFilter{body: body, r: bufio.NewReader(body), c: c}
}

func (f *sseFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		line, err := f.r.ReadBytes('\n')
		if len(line) > 0 && (err == nil || err == io.EOF) {
			// A line cut by a read error (the size cap, a reset) is
			// not passed on: its error is the stream's.
			f.line(bytes.TrimRight(line, "\r\n"))
		}
		if err != nil && f.err == nil {
			if err == io.EOF {
				err = f.atEOF()
			}
			f.err = err
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

func (f *sseFilter) Close() error { return f.body.Close() }

// streamEvent is what the filter reads of a data event.
type streamEvent struct {
	Error   json.RawMessage `json:"error"`
	Choices []struct {
		Delta struct {
			Content          string          `json:"content"`
			Reasoning        string          `json:"reasoning"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
}

// line handles one line of the stream, without its line ending.
func (f *sseFilter) line(line []byte) {
	if f.err != nil || f.done {
		return
	}
	switch {
	case len(line) == 0, line[0] == ':':
		return
	case bytes.HasPrefix(line, []byte("event:")), bytes.HasPrefix(line, []byte("id:")),
		bytes.HasPrefix(line, []byte("retry:")):
		return
	case !bytes.HasPrefix(line, []byte("data:")):
		if f.other.Len() < maxCapture {
			f.other.Write(line)
			f.other.WriteByte('\n')
		}
		return
	}
	data := bytes.TrimSpace(line[len("data:"):])
	if string(data) == "[DONE]" {
		f.done = true
		f.out = append(f.out, "data: [DONE]\n"...)
		return
	}
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err == nil {
		if isJSONObject(ev.Error) {
			f.err = f.c.providerError(0, ev.Error, f.content)
			return
		}
		content := false
		for _, ch := range ev.Choices {
			d := ch.Delta
			if d.Content != "" || d.Reasoning != "" || d.ReasoningContent != "" || hasValue(d.ToolCalls) {
				content = true
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				f.finished = true
			}
		}
		f.content = f.content || content
		if f.c.firstEvent == 0 {
			f.c.firstEvent = time.Since(f.c.sentAt)
		}
		f.c.watch.event(content)
	}
	// Invalid JSON is passed on: go-openai's decoding error makes it a bad response.
	f.out = append(f.out, "data: "...)
	f.out = append(f.out, data...)
	f.out = append(f.out, '\n')
}

// atEOF is the error for the end of the body.
func (f *sseFilter) atEOF() error {
	if f.done || f.finished {
		return io.EOF
	}
	if f.other.Len() > 0 {
		if pe := f.c.bodyError(f.other.Bytes(), f.content); pe != nil {
			return pe
		}
		return &execution.BadResponseError{Reason: "not an event stream"}
	}
	return io.ErrUnexpectedEOF
}

// watchdog cancels a streaming attempt whose first token or next data event
// is late. A nil *watchdog does nothing.
type watchdog struct {
	mu      sync.Mutex
	ttft    *time.Timer
	idle    *time.Timer
	idleFor time.Duration
	cancel  func(error)
	stopped bool
}

// startWatchdog arms the first-token timer (from now) when ttft > 0; the
// idle timer is armed by the first data event when idle > 0.
func startWatchdog(cancel func(error), ttft, idle time.Duration) *watchdog {
	w := &watchdog{idleFor: idle, cancel: cancel}
	if ttft > 0 {
		w.ttft = time.AfterFunc(ttft, func() { cancel(execution.ErrFirstTokenTimeout) })
	}
	return w
}

// event records a data event; content says whether it carried content,
// reasoning or a tool call (the first token).
func (w *watchdog) event(content bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	if content && w.ttft != nil {
		w.ttft.Stop()
		w.ttft = nil
	}
	if w.idleFor > 0 {
		if w.idle == nil {
			w.idle = time.AfterFunc(w.idleFor, func() { w.cancel(execution.ErrIdleTimeout) })
		} else {
			w.idle.Reset(w.idleFor)
		}
	}
}

// stop disarms the timers.
func (w *watchdog) stop() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.ttft != nil {
		w.ttft.Stop()
	}
	if w.idle != nil {
		w.idle.Stop()
	}
}

func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

func hasValue(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && string(raw) != "null" && string(raw) != "[]"
}
