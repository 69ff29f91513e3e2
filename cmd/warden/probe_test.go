package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// probeServer is an OpenAI-compatible endpoint that answers every request
// the same way and records what it was sent.
type probeServer struct {
	delay  time.Duration
	status int
	code   string

	mu   sync.Mutex
	seen []probeRequest
}

type probeRequest struct {
	UserAgent, Auth, Model string
	MaxTokens              int
}

func (s *probeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model     string `json:"model"`
		MaxTokens int    `json:"max_tokens"`
	}
	b, _ := io.ReadAll(r.Body)
	json.Unmarshal(b, &body)
	s.mu.Lock()
	s.seen = append(s.seen, probeRequest{r.UserAgent(), r.Header.Get("Authorization"), body.Model, body.MaxTokens})
	s.mu.Unlock()
	if s.delay > 0 {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if s.status != 0 {
		w.WriteHeader(s.status)
		fmt.Fprintf(w, `{"error":{"message":"%s","type":"invalid_request_error","code":%q}}`, http.StatusText(s.status), s.code)
		return
	}
	fmt.Fprintf(w, `{"id":"c1","object":"chat.completion","created":1,"model":%q,"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":1,"total_tokens":13}}`, body.Model)
}

func (s *probeServer) requests() []probeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]probeRequest(nil), s.seen...)
}

// inMemory is a RoundTripper that runs a handler on the caller's goroutine,
// so that a probe can run inside a synctest bubble (no sockets). It gives
// up when the request's context ends, as a real transport does.
type inMemory struct{ h http.Handler }

func (t inMemory) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// closedPort returns a loopback URL on which nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// ignoreTimes leaves out the measured times of a loopback probe.
var ignoreTimes = cmpopts.IgnoreFields(probeResult{}, "FirstByteMS", "TotalMS")

func TestProbeRoute(t *testing.T) {
	t.Parallel()
	const key = "sk-probe-SECRET-42"
	tests := []struct {
		name string
		srv  *probeServer
		url  string // when set, instead of a server
		want probeResult
	}{
		{
			name: "healthy",
			srv:  &probeServer{},
			want: probeResult{Name: "primary", Model: "moonshotai/kimi-k2", Status: 200, Class: "success", Healthy: true, Diagnosis: "ok"},
		},
		{
			name: "401",
			srv:  &probeServer{status: http.StatusUnauthorized, code: "invalid_api_key"},
			want: probeResult{Name: "primary", Model: "moonshotai/kimi-k2", Status: 401, Class: "auth",
				Diagnosis: "key problem (HTTP 401): check OPENROUTER_API_KEY"},
		},
		{
			name: "403",
			srv:  &probeServer{status: http.StatusForbidden},
			want: probeResult{Name: "primary", Model: "moonshotai/kimi-k2", Status: 403, Class: "auth",
				Diagnosis: "key problem (HTTP 403): check OPENROUTER_API_KEY"},
		},
		{
			name: "unknown model",
			srv:  &probeServer{status: http.StatusNotFound, code: "model_not_found"},
			want: probeResult{Name: "primary", Model: "moonshotai/kimi-k2", Status: 404, Class: "model_not_found",
				Diagnosis: `model not served (HTTP 404): "moonshotai/kimi-k2"`},
		},
		{
			name: "connection refused",
			url:  closedPort(t),
			want: probeResult{Name: "primary", Model: "moonshotai/kimi-k2", Class: "connection", Diagnosis: "unreachable (connection refused)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := tt.url
			if tt.srv != nil {
				ts := httptest.NewServer(tt.srv)
				t.Cleanup(ts.Close)
				base = ts.URL + "/v1"
			}
			target := probeTarget{name: "primary", baseURL: base, model: "moonshotai/kimi-k2", keyEnv: "OPENROUTER_API_KEY", key: key}
			got := probeRoute(t.Context(), target, &http.Client{})
			want := tt.want
			want.BaseURL = base
			if diff := cmp.Diff(want, got, ignoreTimes); diff != "" {
				t.Errorf("probeRoute(%s) mismatch (-want +got):\n%s", tt.name, diff)
			}
			if tt.srv == nil {
				return
			}
			wantReq := []probeRequest{{UserAgent: "warden/" + version + " (probe)", Auth: "Bearer " + key, Model: "moonshotai/kimi-k2", MaxTokens: probeMaxTokens}}
			if diff := cmp.Diff(wantReq, tt.srv.requests()); diff != "" {
				t.Errorf("probeRoute(%s) sent (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

// TestProbeSlow: a route that needs longer than the probe's 30 s is
// "backend slow (>30 s)", judged at exactly 30 s on the virtual clock; a
// route that answers in 29 s is healthy, with its time to first byte.
func TestProbeSlow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		delay time.Duration
		want  probeResult
	}{
		{"slow", 45 * time.Second, probeResult{Class: "timeout", TotalMS: 30000, Diagnosis: "backend slow (>30 s)"}},
		{"slow but in time", 29 * time.Second, probeResult{Status: 200, Class: "success", FirstByteMS: 29000, TotalMS: 29000, Healthy: true, Diagnosis: "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srv := &probeServer{delay: tt.delay}
				target := probeTarget{name: "local", baseURL: "http://ollama.internal:11434/v1", model: "qwen2.5-coder:7b"}
				got := probeRoute(t.Context(), target, &http.Client{Transport: inMemory{srv}})
				want := tt.want
				want.Name, want.Model, want.BaseURL = "local", "qwen2.5-coder:7b", "http://ollama.internal:11434/v1"
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("probeRoute(%s) mismatch (-want +got):\n%s", tt.name, diff)
				}
			})
		})
	}
}

// writeConfig writes warden.toml into a new directory and returns it.
func writeConfig(t *testing.T, toml string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func routeTOML(name, url, keyEnv string) string {
	return fmt.Sprintf("[[routes]]\nname = %q\nbase_url = %q\nmodel = \"m-%s\"\napi_key_env = %q\n\n", name, url, name, keyEnv)
}

// TestProbeCommand runs `warden probe` end to end: routes from warden.toml
// or the environment, exit codes, and both formats. No output holds a key.
func TestProbeCommand(t *testing.T) {
	t.Parallel()
	const key = "sk-probe-DO-NOT-PRINT"
	up := httptest.NewServer(&probeServer{})
	t.Cleanup(up.Close)
	denied := httptest.NewServer(&probeServer{status: http.StatusUnauthorized})
	t.Cleanup(denied.Close)
	keys := map[string]string{"PRIMARY_KEY": key, "FALLBACK_KEY": key}

	tests := []struct {
		name     string
		toml     string
		env      map[string]string
		args     []string
		code     int
		stdout   []string // substrings
		stderr   string   // substring
		wantJSON []probeResult
	}{
		{
			name:   "all healthy",
			toml:   routeTOML("primary", up.URL+"/v1", "PRIMARY_KEY") + routeTOML("fallback", up.URL+"/v1", "FALLBACK_KEY"),
			env:    keys,
			code:   exitOK,
			stdout: []string{"warden probe: all 2 routes are healthy", "primary", "fallback", "200"},
		},
		{
			name: "one key refused, json",
			toml: routeTOML("primary", up.URL+"/v1", "PRIMARY_KEY") + routeTOML("fallback", denied.URL+"/v1", "FALLBACK_KEY"),
			env:  keys,
			args: []string{"--format", "json"},
			code: exitUnhealthy,
			wantJSON: []probeResult{
				{Name: "primary", Model: "m-primary", BaseURL: up.URL + "/v1", Status: 200, Class: "success", Healthy: true, Diagnosis: "ok"},
				{Name: "fallback", Model: "m-fallback", BaseURL: denied.URL + "/v1", Status: 401, Class: "auth",
					Diagnosis: "key problem (HTTP 401): check FALLBACK_KEY"},
			},
		},
		{
			name:   "unreachable",
			toml:   routeTOML("primary", closedPort(t), "PRIMARY_KEY"),
			env:    keys,
			code:   exitUnhealthy,
			stdout: []string{"warden probe: 1 of 1 route unhealthy", "unreachable (connection refused)"},
		},
		{
			name:   "environment quick route",
			env:    map[string]string{"WARDEN_BASE_URL": up.URL + "/v1", "WARDEN_MODEL": "m", "WARDEN_API_KEY": key},
			code:   exitOK,
			stdout: []string{"warden probe: the route is healthy", "env"},
		},
		{
			name:   "missing key",
			toml:   routeTOML("primary", up.URL+"/v1", "PRIMARY_KEY"),
			code:   exitUsage,
			stderr: "environment variable PRIMARY_KEY is not set",
		},
		{
			name:   "no route",
			code:   exitUsage,
			stderr: "no model route",
		},
		{
			name:   "bad config",
			toml:   "[[routes]]\nname = \"primary\"\n",
			env:    keys,
			code:   exitUsage,
			stderr: "warden.toml:1: routes[0].base_url: missing",
		},
		{
			name:   "bad format",
			toml:   routeTOML("primary", up.URL+"/v1", "PRIMARY_KEY"),
			env:    keys,
			args:   []string{"--format", "sarif"},
			code:   exitUsage,
			stderr: `unknown format "sarif"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if tt.toml != "" {
				dir = writeConfig(t, tt.toml)
			}
			res := runWarden(t, dir, tt.env, "", append([]string{"probe"}, tt.args...)...)
			if res.code != tt.code {
				t.Fatalf("warden probe (%s) exit = %d, want %d\nstdout:\n%s\nstderr:\n%s", tt.name, res.code, tt.code, res.stdout, res.stderr)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(res.stdout, s) {
					t.Errorf("warden probe (%s) stdout lacks %q:\n%s", tt.name, s, res.stdout)
				}
			}
			if !strings.Contains(res.stderr, tt.stderr) {
				t.Errorf("warden probe (%s) stderr = %q, want it to contain %q", tt.name, res.stderr, tt.stderr)
			}
			if strings.Contains(res.stdout+res.stderr, "DO-NOT-PRINT") {
				t.Errorf("warden probe (%s) printed the key", tt.name)
			}
			if tt.wantJSON != nil {
				var got struct{ Routes []probeResult }
				if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
					t.Fatalf("warden probe --format json: %v\n%s", err, res.stdout)
				}
				if diff := cmp.Diff(tt.wantJSON, got.Routes, ignoreTimes); diff != "" {
					t.Errorf("warden probe (%s) JSON routes (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1"},
		{"https://user:sk-secret@llm.internal/v1?key=sk-secret#frag", "https://llm.internal/v1"},
		{"http://[::1]:11434/v1", "http://[::1]:11434/v1"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
