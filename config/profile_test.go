package config

import (
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/fakeopenai"
)

// TestLiteLLMProfile loads the documented profile file (one route setting,
// profile = "litellm") and shows the engine following the standard, through
// the real client against a scripted endpoint on virtual time: 408 and 5xx
// retried twice after 15 s and 45 s, 401/403 never retried, each attempt
// with its own 300 s deadline.
func TestLiteLLMProfile(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "litellm-profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse("litellm-profile.toml", data)
	if err != nil {
		t.Fatalf("Parse(litellm-profile.toml): %v", err)
	}
	tests := []struct {
		name      string
		answers   []fakeopenai.Answer // call n gets answers[n]; past the end, a good answer
		wantCalls []time.Duration
		wantDone  bool
	}{
		{"503 then 502 then success", []fakeopenai.Answer{{Status: 503}, {Status: 502}}, []time.Duration{0, 15 * time.Second, 60 * time.Second}, true},
		{"408 is retried", []fakeopenai.Answer{{Status: 408}}, []time.Duration{0, 15 * time.Second}, true},
		// After its two retries the item does not give up on a route that
		// has not answered since: it waits for it (the outage patience of
		// issue 22) and is readmitted after the schedule's 45 s.
		{"500 three times: two retries, then readmitted", []fakeopenai.Answer{{Status: 500}, {Status: 500}, {Status: 500}}, []time.Duration{0, 15 * time.Second, 60 * time.Second, 105 * time.Second}, true},
		{"401 is not retried", []fakeopenai.Answer{{Status: 401}}, []time.Duration{0}, false},
		{"403 is not retried", []fakeopenai.Answer{{Status: 403}}, []time.Duration{0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				routes, err := cfg.EngineRoutes(func(string) string { return "key" }, true, "test")
				if err != nil {
					t.Fatal(err)
				}
				if routes[0].Profile != execution.ProfileLiteLLM {
					t.Fatalf("route profile = %q, want litellm", routes[0].Profile)
				}
				var mu sync.Mutex
				var calls []time.Duration
				start := time.Now()
				script := &fakeopenai.Script{Default: func(fakeopenai.Request) fakeopenai.Answer {
					mu.Lock()
					defer mu.Unlock()
					calls = append(calls, time.Since(start))
					if n := len(calls) - 1; n < len(tt.answers) {
						return tt.answers[n]
					}
					return fakeopenai.Answer{}
				}}
				routes[0].Provider, err = openai.New(openai.Config{BaseURL: routes[0].BaseURL, APIKey: "key",
					HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: script}}})
				if err != nil {
					t.Fatal(err)
				}
				eng, err := execution.New(routes, cfg.Policy(), execution.Options{})
				if err != nil {
					t.Fatal(err)
				}
				req := &execution.Request{Messages: []execution.Message{{Role: "user", Content: "x"}}}
				res := eng.Run(t.Context(), []execution.Item{{Request: req}}, nil)[0]
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
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
