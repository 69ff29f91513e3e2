package execution_test

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/org/warden/execution"
)

// sampling is an instant Provider that samples runtime.NumGoroutine on
// every call.
type sampling struct {
	mu   sync.Mutex
	peak int
}

func (p *sampling) Complete(_ context.Context, req *execution.Request) (*execution.Response, error) {
	n := runtime.NumGoroutine()
	p.mu.Lock()
	p.peak = max(p.peak, n)
	p.mu.Unlock()
	return &execution.Response{Content: "ok", Model: req.Model, Usage: execution.Usage{PromptTokens: 100, CompletionTokens: 20}}, nil
}

// TestGoroutinesStayBounded runs 10,000 items with an instant provider and
// checks that the goroutines alive during the run never exceed those alive
// before it by more than the pool bound plus a small constant: items wait
// for a slot, not in goroutines of their own.
//
// It is not parallel on purpose: runtime.NumGoroutine counts the whole
// process, and while a sequential test runs, the parallel ones are parked
// (their goroutines exist but do not come and go).
func TestGoroutinesStayBounded(t *testing.T) {
	const n, slack = 10_000, 2
	its := items(n)
	for _, bound := range []int{1, 8, 64} {
		p := &sampling{}
		pol := execution.DefaultPolicy()
		pol.MaxConcurrency = bound
		e, err := execution.New([]execution.Route{{Name: "r", Model: "m", Provider: p}}, pol, execution.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := runtime.NumGoroutine()
		results := e.Run(context.Background(), its, nil)
		if done := countDone(results); done != n {
			t.Fatalf("pool %d: %d of %d items done", bound, done, n)
		}
		extra := p.peak - before
		t.Logf("pool %d: %d goroutines before the run, peak %d during it (+%d)", bound, before, p.peak, extra)
		if extra > bound+slack {
			t.Errorf("pool %d: peak goroutines %d = %d before + %d, want at most %d + %d", bound, p.peak, before, extra, bound, slack)
		}
	}
}

func countDone(rs []execution.Result) int {
	n := 0
	for _, r := range rs {
		if r.Status == execution.StatusDone {
			n++
		}
	}
	return n
}
