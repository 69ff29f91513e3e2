package review

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
)

// overloadedOnce answers 503 after 2 s on its first call, then an answer
// after 3 s with the served model's name, a first byte at 500 ms and usage.
type overloadedOnce struct{ calls atomic.Int32 }

func (p *overloadedOnce) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	first := p.calls.Add(1) == 1
	wait := 3 * time.Second
	if first {
		wait = 2 * time.Second
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	if first {
		return nil, &execution.ProviderError{Status: 503, Message: "overloaded"}
	}
	return &execution.Response{Content: `{"findings":[]}`, FinishReason: "stop", Model: "served-model-v2", FirstByte: 500 * time.Millisecond,
		Usage: execution.Usage{PromptTokens: 5000, CompletionTokens: 20, CachedTokens: 40}}, nil
}

// TestAttemptRecordsMapped: the report's attempts carry the engine's
// records, times exact on the virtual clock, for telemetry and diagnosis:
// when each attempt started, the deadline and budgets it had, its time to
// first byte, tokens, the served model, the decision, the breaker state,
// and the route's host and port (never its credentials or path).
func TestAttemptRecordsMapped(t *testing.T) {
	t.Parallel()
	_, hp, _ := fixture(t, fixtureFiles[6:7], hunks.Options{})
	synctest.Test(t, func(t *testing.T) {
		eng := newEngine(t, &overloadedOnce{}, func(r *execution.Route) {
			r.BaseURL = "https://user:pw@models.example:8443/v1?key=k"
		}, func(p *execution.Policy) { p.BackoffSchedule = []time.Duration{time.Second} })
		opts := Options{Skills: builtins()[:1]}
		p, err := NewPlan(hp, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != 1 {
			t.Fatalf("plan has %d items, want 1", len(p.Items))
		}
		r := Run(t.Context(), p, eng, opts)
		it := r.Items[0]
		eff := it.TimeoutEffectiveMS
		base := attemptBase(eff)
		want := []Attempt{
			with(base, func(a *Attempt) {
				a.Number, a.Kind, a.Class, a.Decision = 1, "primary", "overloaded", "retry"
				a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 0, 2000, eff, 300000, 870000
			}),
			with(base, func(a *Attempt) {
				a.Number, a.Kind, a.Class, a.Decision = 2, "retry", "success", "done"
				a.StartMS, a.DurationMS, a.DeadlineMS, a.ItemRemainingMS, a.ReviewRemainingMS = 3000, 3000, eff-3000, 297000, 867000
				a.BackoffMS, a.TTFTMS, a.PromptTokens, a.CompletionTokens, a.CachedTokens = 1000, 500, 5000, 20, 40
				a.ResponseModel = "served-model-v2"
			}),
		}
		if diff := cmp.Diff(want, it.Attempts); diff != "" {
			t.Errorf("Run attempts (-want +got):\n%s", diff)
		}
		if it.Request != 1 || it.StartMS != 0 || it.DurationMS != 6000 {
			t.Errorf("Run item request %d start %d ms duration %d ms; want 1, 0, 6000", it.Request, it.StartMS, it.DurationMS)
		}
	})
}

// attemptBase is the part of an attempt that does not change between the
// attempts of TestAttemptRecordsMapped.
func attemptBase(eff int64) Attempt {
	return Attempt{Route: "primary", Model: "test-model", TimeoutBaseMS: 120000, TimeoutEffectiveMS: eff,
		Breaker: "closed", ServerAddress: "models.example", ServerPort: 8443}
}

func with(a Attempt, f func(*Attempt)) Attempt { f(&a); return a }
