package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/fakeopenai"
)

// This file is the harness of the scenario, invariant, comparison and
// profile tests: an OpenAI-compatible handler per route, scripted per call,
// reached by the real go-openai client (through execution/openai) over an
// in-memory http.RoundTripper, so that everything runs on synctest's
// virtual clock. No sockets: a real socket is never durably blocked.

// reply is what a scripted server does with one request.
type reply struct {
	delay     time.Duration     // before the status line (non-stream) or the first data event (stream)
	hang      bool              // never answer (stream: after the keep-alives, if any)
	keepalive time.Duration     // stream: ": OPENROUTER PROCESSING" every keepalive while hanging
	status    int               // an error status; 0: a good answer
	header    map[string]string // e.g. Retry-After
	code      string            // error code in the body
	streamErr bool              // stream: content, then an in-stream error event after delay
	content   string

	// Hostile shapes (the scenario files' mode): after delay, "stall" sends
	// the 200 headers and then nothing; "trickle" writes the answer one byte
	// every `every`; "empty" (stream) sends a data event with an empty delta
	// every `every`, forever; "tokens" (stream) sends one content token
	// every `every`, `count` of them, then finishes.
	mode  string
	every time.Duration
	count int
}

// planned is when the reply would be complete, from the request's arrival;
// negative for a reply that never completes.
func (rp reply) planned() time.Duration {
	switch {
	case rp.hang, rp.mode == "stall", rp.mode == "empty":
		return -1
	case rp.mode == "tokens":
		return rp.delay + time.Duration(max(rp.count, 1))*rp.every
	case rp.mode == "trickle":
		return rp.delay + 400*rp.every // about the length of an answer's JSON
	}
	return rp.delay
}

// server is one route's scripted OpenAI-compatible endpoint.
type server struct {
	name   string
	origin time.Time
	script func(n int, at time.Duration) reply

	mu       sync.Mutex
	starts   []time.Duration
	inflight int
	peak     int
	// cut holds, for every call the client gave up on before the reply was
	// complete although it would have completed, when it would have (from
	// the call's arrival).
	cut []time.Duration
}

// abandoned returns the planned completion times of the calls the client
// cut short although they would have completed.
func (s *server) abandoned() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.cut...)
}

func (s *server) calls() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.starts...)
}

func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.starts)
}

func (s *server) maxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Since(s.origin)
	s.mu.Lock()
	n := len(s.starts)
	s.starts = append(s.starts, at)
	s.inflight++
	s.peak = max(s.peak, s.inflight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inflight--
		s.mu.Unlock()
	}()
	var body struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	rp := s.script(n, at)
	ctx := r.Context()
	completed := false
	defer func() {
		if p := rp.planned(); !completed && p >= 0 && ctx.Err() != nil {
			s.mu.Lock()
			s.cut = append(s.cut, p)
			s.mu.Unlock()
		}
	}()
	wait := func(d time.Duration) bool {
		if d <= 0 {
			return ctx.Err() == nil
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	if rp.status != 0 {
		if !wait(rp.delay) {
			return
		}
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rp.status)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"error","code":%q}}`, http.StatusText(rp.status), rp.code)
		completed = true
		return
	}
	content := rp.content
	if content == "" {
		content = "answer from " + s.name
	}
	// trickled writes line one byte every rp.every; false when the call ended.
	trickled := func(line string) bool {
		for i := range len(line) {
			if !wait(rp.every) {
				return false
			}
			if _, err := io.WriteString(w, line[i:i+1]); err != nil {
				return false
			}
		}
		return true
	}
	if !body.Stream {
		if rp.hang {
			<-ctx.Done()
			return
		}
		if !wait(rp.delay) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		answer := fmt.Sprintf(`{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}`, body.Model, content)
		switch rp.mode {
		case "stall", "empty":
			w.WriteHeader(http.StatusOK)
			<-ctx.Done()
			return
		case "trickle":
			w.WriteHeader(http.StatusOK)
			completed = trickled(answer)
			return
		}
		io.WriteString(w, answer)
		completed = true
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	write := func(line string) bool {
		_, err := io.WriteString(w, line)
		return err == nil
	}
	if rp.hang {
		for rp.keepalive > 0 && wait(rp.keepalive) {
			if !write(": OPENROUTER PROCESSING\n") {
				return
			}
		}
		<-ctx.Done()
		return
	}
	if !wait(rp.delay) {
		return
	}
	chunk := func(c string) string {
		return fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", body.Model, c)
	}
	if rp.streamErr {
		if write(chunk("partial ")) && wait(time.Second) {
			write(`data: {"error":{"code":502,"message":"Provider disconnected"}}` + "\n\n")
		}
		completed = true
		return
	}
	switch rp.mode {
	case "stall":
		<-ctx.Done()
		return
	case "empty":
		for wait(rp.every) && write(chunk("")) {
		}
		return
	case "tokens":
		for range max(rp.count, 1) {
			if !wait(rp.every) || !write(chunk("tok ")) {
				return
			}
		}
	case "trickle":
		if !trickled(chunk(content)) {
			return
		}
	default:
		write(chunk(content))
	}
	write(fmt.Sprintf("data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":%q,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n", body.Model))
	write(`data: {"id":"c1","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}}` + "\n\n")
	completed = write("data: [DONE]\n\n")
}

// routeSpec describes one route of a scenario.
type routeSpec struct {
	name           string
	cap            int
	stream         bool
	failoverOnAuth bool
	timeout        time.Duration
	minInterval    time.Duration
	profile        execution.Profile
	script         func(n int, at time.Duration) reply
}

// counted wraps a Provider and measures the calls in flight at once, from
// the engine's side (a server handler may outlive its cancelled call).
type counted struct {
	p execution.Provider

	mu       sync.Mutex
	inflight int
	peak     int
}

func (c *counted) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	c.mu.Lock()
	c.inflight++
	c.peak = max(c.peak, c.inflight)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.inflight--
		c.mu.Unlock()
	}()
	return c.p.Complete(ctx, req)
}

func (c *counted) maxInFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peak
}

// world is one scenario's servers and routes, built inside a bubble.
type world struct {
	origin   time.Time
	servers  []*server
	counters []*counted
	routes   []execution.Route

	mu     sync.Mutex
	events []execution.RouteEvent
}

func newWorld(t testing.TB, specs []routeSpec) *world {
	t.Helper()
	w := &world{origin: time.Now()}
	for _, s := range specs {
		srv := &server{name: s.name, origin: w.origin, script: s.script}
		p, err := openai.New(openai.Config{
			BaseURL:    "https://" + s.name + ".example.com/v1",
			APIKey:     "sk-test",
			HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: srv}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c := &counted{p: p}
		w.servers = append(w.servers, srv)
		w.counters = append(w.counters, c)
		w.routes = append(w.routes, execution.Route{
			Name: s.name, Model: "model-" + s.name, BaseURL: "https://" + s.name + ".example.com/v1",
			Provider: c, MaxConcurrency: s.cap, Stream: s.stream, FailoverOnAuth: s.failoverOnAuth,
			RequestTimeout: s.timeout, MinInterval: s.minInterval, Profile: s.profile,
		})
	}
	return w
}

func (w *world) onEvent(ev execution.RouteEvent) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, ev)
}

func (w *world) routeEvents() []execution.RouteEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]execution.RouteEvent(nil), w.events...)
}

func (w *world) totalCalls() int {
	n := 0
	for _, s := range w.servers {
		n += s.count()
	}
	return n
}

// items returns n review-sized items.
func items(n int) []execution.Item {
	out := make([]execution.Item, n)
	for i := range out {
		out[i] = execution.Item{Request: &execution.Request{
			Messages: []execution.Message{
				{Role: "system", Content: "You are a code reviewer."},
				{Role: "user", Content: fmt.Sprintf("Review hunk %d:\n%s", i, strings.Repeat("+ line\n", 200))},
			},
			MaxTokens: 2000,
		}}
	}
	return out
}

// tally counts results by status.
func tally(results []execution.Result) (done, failed, skipped int) {
	for _, r := range results {
		switch r.Status {
		case execution.StatusDone:
			done++
		case execution.StatusFailed:
			failed++
		case execution.StatusSkipped:
			skipped++
		}
	}
	return done, failed, skipped
}

func always(r reply) func(int, time.Duration) reply {
	return func(int, time.Duration) reply { return r }
}
