package review

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/skills"
)

// chaosModel is an instant in-memory Provider that, per call, picks at
// random (seeded by the route and the call's number): an answer after a
// delay, a hang until the attempt's deadline, a 429 with or without a
// Retry-After (seconds or an HTTP date), a 5xx, a 400, a garbled answer,
// an answer with findings on lines the item does not have, or a panic.
// Time is virtual: the test runs it inside a synctest bubble.
type chaosModel struct {
	name string
	seed uint64

	mu             sync.Mutex
	calls          int
	inFlight, peak int
}

func (m *chaosModel) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	m.mu.Lock()
	n := m.calls
	m.calls++
	m.inFlight++
	m.peak = max(m.peak, m.inFlight)
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}()
	r := rand.New(rand.NewPCG(m.seed, uint64(n)))
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", m.name, context.Cause(ctx))
		}
	}
	if err := wait(time.Duration(r.Int64N(int64(20 * time.Second)))); err != nil {
		return nil, err
	}
	status := func(code int, h http.Header) error {
		pe := &execution.ProviderError{Status: code, Message: http.StatusText(code), Header: h}
		if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
			pe.RetryAfter = time.Duration(s) * time.Second
		}
		return pe
	}
	switch k := r.IntN(100); {
	case k < 5: // hang until the deadline
		<-ctx.Done()
		return nil, fmt.Errorf("%s: %w", m.name, context.Cause(ctx))
	case k < 12:
		h := http.Header{}
		switch r.IntN(3) {
		case 0:
			h.Set("Retry-After", strconv.Itoa(1+r.IntN(90)))
		case 1:
			h.Set("Retry-After", time.Now().Add(time.Duration(r.IntN(60))*time.Second).UTC().Format(http.TimeFormat))
		}
		return nil, status(http.StatusTooManyRequests, h)
	case k < 20:
		return nil, status([]int{500, 502, 503, 504, 529}[r.IntN(5)], http.Header{})
	case k < 22:
		return nil, status(http.StatusBadRequest, http.Header{})
	case k < 26:
		return &execution.Response{Content: `{"findings":[{"title":`, Model: req.Model, FinishReason: "length"}, nil
	case k < 27:
		panic("chaos: provider panic")
	}
	// An answer: findings on the item's lines and far outside them, and
	// a path that is not the item's.
	var fs []string
	for i := range r.IntN(4) {
		line := 1 + r.IntN(40)
		fs = append(fs, fmt.Sprintf(`{"severity":%q,"title":"t%d","description":"d","path":"elsewhere.go","start_line":%d,"end_line":%d}`,
			[]string{"low", "medium", "high", "critical", "bogus"}[r.IntN(5)], i, line, line+r.IntN(3)))
	}
	return &execution.Response{Content: `{"findings":[` + strings.Join(fs, ",") + `]}`, Model: req.Model, FinishReason: "stop",
		Usage: execution.Usage{PromptTokens: 200, CompletionTokens: 40}}, nil
}

// stressPlan is n one-line chunks on distinct paths, lines 10 to 12.
func stressPlan(n int) *hunks.Plan {
	p := &hunks.Plan{Chunks: make([]hunks.Chunk, n)}
	for i := range p.Chunks {
		p.Chunks[i] = hunks.Chunk{
			Path: fmt.Sprintf("pkg%d/f%d.go", i%97, i), Language: "Go", StartLine: 10, EndLine: 12, Priority: n - i,
			Lines: []hunks.Line{{Op: hunks.Add, Text: fmt.Sprint("x := ", i), NewLine: 10}},
		}
	}
	return p
}

// TestStress10000 runs a 10,000-item review through the real engine and
// review.Run, with two routes of random faults (delays, hangs, 429s with
// and without Retry-After, 5xx, 400, garbled answers, panics, findings off
// the item's lines), once to the end and once cancelled midway. Inside
// testing/synctest, time is virtual and the bubble fails the test if any
// goroutine is left behind; outside, runtime.NumGoroutine is compared too.
// Under -race it takes a few seconds per run on two cores (instant
// provider; no real sleep).
func TestStress10000(t *testing.T) {
	const n = 10_000
	before := runtime.NumGoroutine()
	for _, tc := range []struct {
		name     string
		cancelAt time.Duration // 0: never
	}{
		{"to the end", 0},
		{"cancelled midway", 15 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			synctest.Test(t, func(t *testing.T) {
				primary := &chaosModel{name: "primary", seed: 1}
				fallback := &chaosModel{name: "fallback", seed: 2}
				pol := execution.DefaultPolicy()
				pol.Budget = 4 * time.Hour // virtual: room for all 10,000
				pol.MaxConcurrency = 16
				eng, err := execution.New([]execution.Route{
					{Name: "primary", Model: "m1", Provider: primary, MaxConcurrency: 8},
					{Name: "fallback", Model: "m2", Provider: fallback, MaxConcurrency: 4},
				}, pol, execution.Options{Rand: rand.New(rand.NewPCG(3, 4))})
				if err != nil {
					t.Fatal(err)
				}
				opts := Options{Skills: []*skills.Skill{{Name: "code-review", Instructions: "Find bugs."}}, MaxFindings: 0}
				p, err := NewPlan(stressPlan(n), eng, opts)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				if tc.cancelAt > 0 {
					time.AfterFunc(tc.cancelAt, cancel)
				}
				vstart := time.Now()
				r := Run(ctx, p, eng, opts)
				virtual := time.Since(vstart)

				if len(r.Items) != n {
					t.Fatalf("%d items in the report, want %d", len(r.Items), n)
				}
				s := r.Summary
				if s.Planned != n || s.Reviewed+s.Failed+s.Skipped != n {
					t.Errorf("summary %+v does not add up to %d items", s, n)
				}
				if r.Outcome != Decide(r.Items, &r.Coverage) {
					t.Errorf("outcome %s, Decide says %s", r.Outcome, Decide(r.Items, &r.Coverage))
				}
				reviewed := map[string]bool{}
				reasons := map[string]int{}
				for _, it := range r.Items {
					switch it.Status {
					case StatusReviewed:
						reviewed[it.Path] = true
					case StatusFailed, StatusSkipped:
						if it.Reason == "" {
							t.Fatalf("item %s %s without a reason", it.Path, it.Status)
						}
						reasons[string(it.Status)+":"+it.Reason]++
					default:
						t.Fatalf("item %s has status %q", it.Path, it.Status)
					}
				}
				for _, f := range r.Findings {
					if !reviewed[f.Path] || f.StartLine < 10 || f.EndLine > 12 || f.StartLine > f.EndLine {
						t.Fatalf("finding %s:%d-%d is not on a reviewed item's lines", f.Path, f.StartLine, f.EndLine)
					}
				}
				if tc.cancelAt > 0 && (s.Skipped == 0 || reasons["skipped:cancelled"] == 0) {
					t.Errorf("cancelled at %s: %+v, want items skipped as cancelled", tc.cancelAt, reasons)
				}
				if primary.peak > 8 || fallback.peak > 4 {
					t.Errorf("peak in flight %d/%d, want at most the routes' caps 8/4", primary.peak, fallback.peak)
				}
				t.Logf("%d items: %d reviewed, %d failed, %d skipped, %d findings (%d dropped); calls %d+%d; %s virtual; reasons %v",
					n, s.Reviewed, s.Failed, s.Skipped, s.Findings, s.FindingsDropped.Total(), primary.calls, fallback.calls, virtual.Round(time.Second), reasons)
			})
			t.Logf("wall time %s", time.Since(start).Round(time.Millisecond))
		})
	}
	// The bubble already failed the test if a goroutine it started was
	// left; this checks the process as a whole (test goroutines settle).
	var after int
	for range 50 {
		if after = runtime.NumGoroutine(); after <= before+2 {
			break
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if after > before+2 {
		t.Errorf("goroutines: %d before, %d after the reviews", before, after)
	}
}
