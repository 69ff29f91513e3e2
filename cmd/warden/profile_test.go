package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
	policy := cfg.policy()
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
				routes, err := buildRoutes(cfg, func(string) string { return "key" }, true)
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

// TestComposedTimeScales: an impossible combination of budgets and route
// settings is one error naming the key, its line and the numbers.
func TestComposedTimeScales(t *testing.T) {
	t.Parallel()
	route := "\n[[routes]]\nname = \"slow\"\nbase_url = \"http://127.0.0.1:4000/v1\"\nmodel = \"m\"\n"
	tests := []struct {
		name, toml, want string
	}{
		{"profile in the default hunk budget", "version = 1\n" + route + "profile = \"litellm\"\n",
			`x.toml: review.hunk_budget: 5m0s cannot hold route "slow": 3 attempts × 5m0s + 1m0s backoff`},
		{"short hunk budget", "[review]\nhunk_budget = \"3m\"\n" + route + strings.Replace(route, `"slow"`, `"slow2"`, 1),
			`x.toml:2: review.hunk_budget: 3m0s cannot hold route "slow": 1 attempt × 2m0s (its retries share it) + 2m0s failover to "slow2"`},
		{"breaker window", "version = 1\n" + route + "breaker_window = \"1m\"\n",
			`x.toml:7: routes[0].breaker_window: 1m0s is shorter than twice route "slow"'s longest attempt (5m0s)`},
		{"unknown profile", "version = 1\n" + route + "profile = \"fast\"\n",
			`x.toml:3: routes[0].profile: unknown profile "fast" (want "litellm" or "litellm-aux")`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := parseConfig("x.toml", []byte(tt.toml))
			var ce *configError
			if !errors.As(err, &ce) || err.Error() != tt.want {
				t.Errorf("parseConfig = %v\nwant %s", err, tt.want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}
