package probe_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/probe"
)

// model is an OpenAI-compatible endpoint that answers every request the
// same way, after delay, and records what it was sent.
type model struct {
	fakeopenai.Answer // Content: the answer; default the contract's empty result

	mu   sync.Mutex
	seen []sent
}

type sent struct {
	UserAgent, Auth, Model string
	MaxTokens              int
	Schema                 bool // response_format json_schema
	Contract               bool // the system message holds the output contract
}

func (m *model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
		MaxCompl  int    `json:"max_completion_tokens"`
		Messages  []struct {
			Content string `json:"content"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type string `json:"type"`
		} `json:"response_format"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	contract := len(body.Messages) > 0 && strings.Contains(body.Messages[0].Content, `{"findings":[{"severity"`)
	m.mu.Lock()
	m.seen = append(m.seen, sent{r.UserAgent(), r.Header.Get("Authorization"), body.Model, max(body.MaxTokens, body.MaxCompl),
		body.ResponseFormat != nil && body.ResponseFormat.Type == "json_schema", contract})
	m.mu.Unlock()
	content := m.Content
	if content == "" {
		content = `{"findings":[]}`
	}
	fakeopenai.Serve(w, r.Context(), m.Answer, fakeopenai.Wire{Model: body.Model, Content: content,
		PromptTokens: 12, CompletionTokens: 5, ErrorMessage: http.StatusText(m.Status), ErrorType: "invalid_request_error"})
}

func (m *model) requests() []sent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]sent(nil), m.seen...)
}

// target is a probe target on m through the real go-openai adapter over an
// in-memory transport (virtual time inside a bubble).
func target(t *testing.T, m *model) probe.Target {
	t.Helper()
	p, err := openai.New(openai.Config{
		BaseURL: "https://user:sk-in-url@llm.example.com/v1?key=sk-in-query", APIKey: "sk-probe-SECRET",
		UserAgent: "warden/test (probe)", HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: m}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return probe.Target{
		Route: execution.Route{
			Name: "primary", BaseURL: "https://user:sk-in-url@llm.example.com/v1?key=sk-in-query", Model: "probe-model", Provider: p,
			// The route's review settings do not reach the probe.
			Profile: execution.ProfileLiteLLM, RequestTimeout: 5 * time.Minute, Stream: true, MinInterval: time.Minute,
		},
		KeyEnv: "PROBE_KEY",
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		m    *model
		want probe.Result
	}{
		{"healthy, follows the contract", &model{Answer: fakeopenai.Answer{Delay: 400 * time.Millisecond}},
			probe.Result{Status: 200, Class: "success", Contract: "ok", FirstByteMS: 400, TotalMS: 400, Healthy: true, Diagnosis: "ok"}},
		{"slow but in time", &model{Answer: fakeopenai.Answer{Delay: 29 * time.Second}},
			probe.Result{Status: 200, Class: "success", Contract: "ok", FirstByteMS: 29000, TotalMS: 29000, Healthy: true, Diagnosis: "ok"}},
		{"slow: judged at exactly 30 s", &model{Answer: fakeopenai.Answer{Delay: 45 * time.Second}},
			probe.Result{Class: "timeout", TotalMS: 30000, Diagnosis: "backend slow (>30s)"}},
		{"answers prose", &model{Answer: fakeopenai.Answer{Delay: time.Second, Content: "Sure! Everything looks fine to me."}},
			probe.Result{Status: 200, Class: "bad_response", Contract: "ignored", FirstByteMS: 1000, TotalMS: 1000, Diagnosis: "answers but ignores the output contract"}},
		{"401", &model{Answer: fakeopenai.Answer{Delay: 80 * time.Millisecond, Status: 401, Code: "invalid_api_key"}},
			probe.Result{Status: 401, Class: "auth", TotalMS: 80, FirstByteMS: 80, Diagnosis: "key problem (HTTP 401): check PROBE_KEY"}},
		{"401 whose body says rate_limit_exceeded", &model{Answer: fakeopenai.Answer{Delay: 80 * time.Millisecond, Status: 401, Code: "rate_limit_exceeded"}},
			probe.Result{Status: 401, Class: "auth", TotalMS: 80, FirstByteMS: 80, Diagnosis: "key problem (HTTP 401): check PROBE_KEY"}},
		{"unknown model", &model{Answer: fakeopenai.Answer{Delay: 50 * time.Millisecond, Status: 404, Code: "model_not_found"}},
			probe.Result{Status: 404, Class: "model_not_found", FirstByteMS: 50, TotalMS: 50, Diagnosis: `model not served (HTTP 404): "probe-model"`}},
		{"503", &model{Answer: fakeopenai.Answer{Delay: time.Second, Status: 503}},
			probe.Result{Status: 503, Class: "overloaded", TotalMS: 1000, FirstByteMS: 1000, Diagnosis: "overloaded (HTTP 503)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				got := probe.Route(t.Context(), target(t, tt.m))
				want := tt.want
				want.Name, want.Model, want.BaseURL = "primary", "probe-model", "https://llm.example.com/v1"
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Route(%s) mismatch (-want +got):\n%s", tt.name, diff)
				}
				if el := time.Since(start); el > probe.Timeout {
					t.Errorf("Route(%s) took %v, over the %v probe timeout", tt.name, el, probe.Timeout)
				}
				// One request (never a retry), identified, with the probe
				// model and key, in the output contract with its schema.
				wantSent := []sent{{UserAgent: "warden/test (probe)", Auth: "Bearer sk-probe-SECRET", Model: "probe-model",
					MaxTokens: probe.MaxTokens, Schema: true, Contract: true}}
				if diff := cmp.Diff(wantSent, tt.m.requests()); diff != "" {
					t.Errorf("Route(%s) sent (-want +got):\n%s", tt.name, diff)
				}
				if b, _ := json.Marshal(got); strings.Contains(string(b), "sk-") {
					t.Errorf("Route(%s) result holds a secret: %s", tt.name, b)
				}
			})
		})
	}
}

func TestWrite(t *testing.T) {
	t.Parallel()
	results := []probe.Result{
		{Name: "primary", Model: "kimi", Status: 200, Class: "success", Contract: "ok", FirstByteMS: 412, TotalMS: 1300, Healthy: true, Diagnosis: "ok"},
		{Name: "fallback", Model: "gpt", Class: "timeout", TotalMS: 30000, Diagnosis: "backend slow (>30s)"},
	}
	var b strings.Builder
	if err := probe.Write(&b, "text", results); err != nil {
		t.Fatal(err)
	}
	want := `warden probe: 1 of 2 routes unhealthy
  ROUTE     MODEL  STATUS  FIRST BYTE  TOTAL  RESULT
  primary   kimi   200     412ms       1.3s   ok
  fallback  gpt    -       -           30s    backend slow (>30s)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("Write(text) mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := probe.Write(&b, "json", results[:1]); err != nil {
		t.Fatal(err)
	}
	var got struct{ Routes []probe.Result }
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil || len(got.Routes) != 1 || got.Routes[0] != results[0] {
		t.Errorf("Write(json) = %s (%v), want {routes: [primary]}", b.String(), err)
	}
}

func TestGuard(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "warden", "probe")
	now := time.Date(2026, 9, 8, 15, 4, 0, 0, time.UTC)
	g := probe.Guard{Dir: dir, Now: func() time.Time { return now }}
	a := probe.Target{Route: execution.Route{Name: "a", BaseURL: "https://a.example/v1", Model: "m"}}
	b := probe.Target{Route: execution.Route{Name: "b", BaseURL: "https://b.example/v1", Model: "m"}}
	if err := g.Check([]probe.Target{a, b}); err != nil {
		t.Fatalf("Check before any probe = %v, want nil", err)
	}
	if err := g.Record([]probe.Target{a}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(12 * time.Minute)
	err := g.Check([]probe.Target{a, b})
	want := `probe refused: route "a" 12m0s ago was probed (the LiteLLM standard allows one probe an hour; the next at 16:04 UTC, or use --force)`
	if err == nil || err.Error() != want {
		t.Errorf("Check 12 min after = %v, want %s", err, want)
	}
	if err := g.Check([]probe.Target{b}); err != nil {
		t.Errorf("Check of another route = %v, want nil", err)
	}
	// The same name on another endpoint or model is another route.
	a2 := a
	a2.Route.Model = "other"
	if err := g.Check([]probe.Target{a2}); err != nil {
		t.Errorf("Check of route a with another model = %v, want nil", err)
	}
	now = now.Add(48 * time.Minute)
	if err := g.Check([]probe.Target{a}); err != nil {
		t.Errorf("Check an hour after = %v, want nil", err)
	}
	// A damaged state file does not stop probing for ever.
	if err := os.WriteFile(filepath.Join(dir, "probes.json"), []byte("{garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Check([]probe.Target{a}); err != nil {
		t.Errorf("Check with a damaged state = %v, want nil", err)
	}
	if err := g.Record([]probe.Target{a}); err != nil {
		t.Errorf("Record over a damaged state = %v", err)
	}
	if err := (probe.Guard{}).Check([]probe.Target{a}); err != nil {
		t.Errorf("a Guard without a directory refused: %v", err)
	}
}

func TestCacheDir(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got, err := probe.CacheDir(env(map[string]string{"XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u", "LocalAppData": `C:\cache`})); err != nil || !strings.HasSuffix(got, filepath.Join("warden", "probe")) {
		t.Errorf("CacheDir = %q, %v; want …/warden/probe", got, err)
	}
	if _, err := probe.CacheDir(env(nil)); err == nil {
		t.Errorf("CacheDir with no environment = nil error, want one")
	}
}

// A route with json_schema = false gets the contract in the prompt only,
// as a review would send it; a cancelled probe says so.
func TestRouteNoSchemaAndCancel(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := &model{Answer: fakeopenai.Answer{Delay: time.Second}}
		tg := target(t, m)
		tg.Route.NoSchema = true
		if got := probe.Route(t.Context(), tg); !got.Healthy || got.Contract != "ok" {
			t.Errorf("Route(no schema) = %+v, want healthy, contract ok", got)
		}
		if reqs := m.requests(); len(reqs) != 1 || reqs[0].Schema {
			t.Errorf("Route(no schema) sent %+v, want one request without response_format", reqs)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(10*time.Second, cancel)
		start := time.Now()
		got := probe.Route(ctx, target(t, &model{Answer: fakeopenai.Answer{Delay: time.Minute}}))
		if got.Healthy || got.Diagnosis != "interrupted" || time.Since(start) != 10*time.Second {
			t.Errorf("Route(cancelled at 10s) = %+v after %v, want interrupted at once", got, time.Since(start))
		}
	})
}
