package main

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
)

// scriptedProvider answers call n with statuses[n] (0: success), recording
// when each call came, on the bubble's virtual clock.
type scriptedProvider struct {
	start    time.Time
	statuses []int
	mu       sync.Mutex
	calls    []time.Duration
}

func (p *scriptedProvider) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	p.mu.Lock()
	n := len(p.calls)
	p.calls = append(p.calls, time.Since(p.start))
	p.mu.Unlock()
	if n < len(p.statuses) && p.statuses[n] != 0 {
		return nil, &execution.ProviderError{Status: p.statuses[n], Message: "scripted"}
	}
	return &execution.Response{Content: `{"findings":[]}`}, nil
}

// TestLiteLLMProfile loads the documented profile file (one route setting,
// profile = "litellm") and shows the engine following the standard: 408
// and 5xx retried twice after 15 s and 45 s, 401/403 never retried, each
// attempt with its own 300 s deadline.
func TestLiteLLMProfile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "litellm-profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig("litellm-profile.toml", data)
	if err != nil {
		t.Fatalf("parseConfig(litellm-profile.toml): %v", err)
	}
	policy := cfg.Policy()
	tests := []struct {
		name      string
		statuses  []int
		wantCalls []time.Duration
		wantDone  bool
	}{
		{"503 then 502 then success", []int{503, 502}, []time.Duration{0, 15 * time.Second, 60 * time.Second}, true},
		{"408 is retried", []int{408}, []time.Duration{0, 15 * time.Second}, true},
		{"500 three times fails after two retries", []int{500, 500, 500}, []time.Duration{0, 15 * time.Second, 60 * time.Second}, false},
		{"401 is not retried", []int{401}, []time.Duration{0}, false},
		{"403 is not retried", []int{403}, []time.Duration{0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				routes, err := cfg.EngineRoutes(func(string) string { return "key" }, true, version)
				if err != nil {
					t.Fatal(err)
				}
				if routes[0].Profile != execution.ProfileLiteLLM {
					t.Fatalf("route profile = %q, want litellm", routes[0].Profile)
				}
				fake := &scriptedProvider{start: time.Now(), statuses: tt.statuses}
				routes[0].Provider = fake
				eng, err := execution.New(routes, policy, execution.Options{})
				if err != nil {
					t.Fatal(err)
				}
				req := &execution.Request{Messages: []execution.Message{{Role: "user", Content: "x"}}}
				res := eng.Run(t.Context(), []execution.Item{{Request: req}}, nil)[0]
				if diff := cmp.Diff(tt.wantCalls, fake.calls); diff != "" {
					t.Errorf("call times (-want +got):\n%s", diff)
				}
				if done := res.Status == execution.StatusDone; done != tt.wantDone {
					t.Errorf("item status %s (%s), want done=%v", res.Status, res.Class, tt.wantDone)
				}
				for _, a := range res.Attempts {
					if a.TimeoutBase != 300*time.Second || a.Deadline != 300*time.Second {
						t.Errorf("attempt base %v deadline %v; want 300s each", a.TimeoutBase, a.Deadline)
					}
				}
			})
		})
	}
}
