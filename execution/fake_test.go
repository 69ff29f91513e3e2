package execution

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/org/warden/internal/fakeopenai"
)

// step is what a fake provider does on one call: the tests' one scripted
// vocabulary (fakeopenai.Answer), here answered in process. A good answer's
// content defaults to "ok from NAME"; FirstByte is the Response's.
type step = fakeopenai.Answer

// fakeProvider is an in-memory Provider driven by a script. It records the
// virtual start time of every call and the most calls in flight at once.
type fakeProvider struct {
	name   string
	origin time.Time
	script func(call int) step

	mu          sync.Mutex
	starts      []time.Duration
	inflight    int
	maxInflight int
	deadlines   []time.Duration // the request context's deadline, from the call's start
	reqs        []Request
}

func newFake(name string, origin time.Time, script func(call int) step) *fakeProvider {
	return &fakeProvider{name: name, origin: origin, script: script}
}

func always(s step) func(int) step { return func(int) step { return s } }

func (f *fakeProvider) Complete(ctx context.Context, req *Request) (*Response, error) {
	now := time.Now()
	f.mu.Lock()
	n := len(f.starts)
	f.starts = append(f.starts, now.Sub(f.origin))
	f.reqs = append(f.reqs, *req)
	dl, _ := ctx.Deadline()
	f.deadlines = append(f.deadlines, dl.Sub(now))
	f.inflight++
	f.maxInflight = max(f.maxInflight, f.inflight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	s := f.script(n)
	if s.Hang {
		<-ctx.Done()
		return nil, fmt.Errorf("fake %s: %w", f.name, context.Cause(ctx))
	}
	if !fakeopenai.Sleep(ctx, s.Delay) {
		return nil, fmt.Errorf("fake %s: %w", f.name, context.Cause(ctx))
	}
	if s.Status != 0 {
		pe := &ProviderError{Status: s.Status, Message: http.StatusText(s.Status), Code: s.Code, Header: http.Header{}}
		if ra := s.Header["Retry-After"]; ra != "" {
			pe.Header.Set("Retry-After", ra)
			if v, err := strconv.ParseFloat(ra, 64); err == nil {
				pe.RetryAfter = time.Duration(v * float64(time.Second))
			}
		}
		return nil, pe
	}
	c := s.Content
	if c == "" {
		c = "ok from " + f.name
	}
	return &Response{Content: c, Model: req.Model, Usage: Usage{PromptTokens: 10, CompletionTokens: 5}, FirstByte: s.FirstByte}, nil
}

func (f *fakeProvider) calls() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.starts...)
}

func (f *fakeProvider) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.starts)
}

func (f *fakeProvider) peak() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.maxInflight
}

// testItems returns n small items.
func testItems(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Request: &Request{
			Messages:  []Message{{Role: "system", Content: "review"}, {Role: "user", Content: fmt.Sprintf("hunk %d", i)}},
			MaxTokens: 1000,
		}}
	}
	return items
}

// route returns a route on p with the given name.
func route(name string, p Provider) Route {
	return Route{Name: name, Model: "model-" + name, Provider: p}
}
