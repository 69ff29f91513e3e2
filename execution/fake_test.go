package execution

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// step is what a fake provider does on one call.
type step struct {
	delay   time.Duration // answer after this long
	hang    bool          // never answer: wait for the context
	status  int           // an error status (0: success)
	ra      string        // Retry-After header
	content string
	panic   any
	ttft    time.Duration // the Response's FirstByte
}

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
	if s.panic != nil {
		panic(s.panic)
	}
	if s.hang {
		<-ctx.Done()
		return nil, fmt.Errorf("fake %s: %w", f.name, context.Cause(ctx))
	}
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("fake %s: %w", f.name, context.Cause(ctx))
		}
	}
	if s.status != 0 {
		pe := &ProviderError{Status: s.status, Message: http.StatusText(s.status), Header: http.Header{}}
		if s.ra != "" {
			pe.Header.Set("Retry-After", s.ra)
			if v, err := strconv.ParseFloat(s.ra, 64); err == nil {
				pe.RetryAfter = time.Duration(v * float64(time.Second))
			}
		}
		return nil, pe
	}
	c := s.content
	if c == "" {
		c = "ok from " + f.name
	}
	return &Response{Content: c, Model: req.Model, Usage: Usage{PromptTokens: 10, CompletionTokens: 5}, FirstByte: s.ttft}, nil
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
