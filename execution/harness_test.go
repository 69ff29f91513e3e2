package execution_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
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

// reply is what a scripted server does with one request: the tests' one
// vocabulary, fakeopenai.Answer, written by fakeopenai.Serve. A good
// answer's content defaults to "answer from NAME", its usage is 100 prompt
// and 20 completion tokens.
type reply = fakeopenai.Answer

// server is one route's scripted OpenAI-compatible endpoint.
type server struct {
	name   string
	origin time.Time
	script func(n int, at time.Duration) reply

	mu       sync.Mutex
	starts   []time.Duration
	seen     []seenCall // who each call said it was, in order
	inflight int
	peak     int
	// cut holds, for every call the client gave up on before the reply was
	// complete although it would have completed, when it would have (from
	// the call's arrival).
	cut []time.Duration
}

// seenCall is who a call said it was: the model it asked for, its
// Authorization header, and whether it was the engine's health probe.
type seenCall struct {
	model, auth string
	probe       bool
}

// identities returns who every call said it was, in order.
func (s *server) identities() []seenCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seenCall(nil), s.seen...)
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

// inFlight is how many calls the server is answering now.
func (s *server) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inflight
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
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	probe := len(body.Messages) == 1 && body.Messages[0].Content == execution.ProbeMessage
	s.mu.Lock()
	s.seen = append(s.seen, seenCall{model: body.Model, auth: r.Header.Get("Authorization"), probe: probe})
	s.mu.Unlock()
	rp := s.script(n, at)
	wire := fakeopenai.Wire{Model: body.Model, Stream: body.Stream, Content: cmp.Or(rp.Content, "answer from "+s.name),
		PromptTokens: 100, CompletionTokens: 20, ErrorMessage: http.StatusText(rp.Status), ErrorType: "error"}
	if !fakeopenai.Serve(w, r.Context(), rp, wire) && rp.Planned() >= 0 && r.Context().Err() != nil {
		// A server learns of a cut call late: after the client has moved
		// on (the yield makes that the usual order, so a runner that read
		// its figures before the servers settle reads them short).
		runtime.Gosched()
		s.mu.Lock()
		s.cut = append(s.cut, rp.Planned())
		s.mu.Unlock()
	}
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
	contextWindow  int
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

// routeKey is the key every route of a world sends.
const routeKey = "sk-test"

// provider is an OpenAI-compatible provider for srv's route, with key.
func (srv *server) provider(t testing.TB, key string) *openai.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{
		BaseURL:    "https://" + srv.name + ".example.com/v1",
		APIKey:     execution.Secret(key),
		HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: srv}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newWorld(t testing.TB, specs []routeSpec) *world {
	t.Helper()
	w := &world{origin: time.Now()}
	for _, s := range specs {
		srv := &server{name: s.name, origin: w.origin, script: s.script}
		p := srv.provider(t, routeKey)
		c := &counted{p: p}
		w.servers = append(w.servers, srv)
		w.counters = append(w.counters, c)
		w.routes = append(w.routes, execution.Route{
			Name: s.name, Model: "model-" + s.name, BaseURL: "https://" + s.name + ".example.com/v1",
			Provider: c, MaxConcurrency: s.cap, Stream: s.stream, FailoverOnAuth: s.failoverOnAuth,
			RequestTimeout: s.timeout, MinInterval: s.minInterval, Profile: s.profile, ContextWindow: s.contextWindow,
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
