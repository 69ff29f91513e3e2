package execution_test

import (
	"context"
	"testing"

	"github.com/org/warden/execution"
)

// instant is a Provider that answers at once, in memory.
type instant struct{ resp execution.Response }

func (p *instant) Complete(_ context.Context, req *execution.Request) (*execution.Response, error) {
	r := p.resp
	r.Model = req.Model
	return &r, nil
}

// BenchmarkEngineOverhead runs 10,000 items with an instant provider
// through the engine (pool of 8, one route, breaker, bulkhead, budgets and
// attempt records all on), and the same calls in a plain loop; the ratio of
// the two is the engine's overhead.
func BenchmarkEngineOverhead(b *testing.B) {
	const n = 10_000
	p := &instant{resp: execution.Response{Content: "ok", Usage: execution.Usage{PromptTokens: 100, CompletionTokens: 20}}}
	its := items(n)
	b.Run("engine", func(b *testing.B) {
		e, err := execution.New([]execution.Route{{Name: "r", Model: "m", Provider: p}}, execution.DefaultPolicy(), execution.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			results := e.Run(b.Context(), its, nil)
			if results[n-1].Status != execution.StatusDone {
				b.Fatalf("last item %s", results[n-1].Status)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/item")
	})
	b.Run("plain-loop", func(b *testing.B) {
		for b.Loop() {
			results := make([]*execution.Response, n)
			for i, it := range its {
				req := *it.Request
				req.Model = "m"
				results[i], _ = p.Complete(b.Context(), &req)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/item")
	})
}
