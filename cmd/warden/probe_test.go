package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/probe"
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
	a := fakeopenai.Answer{Delay: s.delay, Status: s.status, Code: s.code}
	fakeopenai.Serve(w, r.Context(), a, fakeopenai.Wire{Model: body.Model, Content: `{"findings":[]}`,
		PromptTokens: 12, CompletionTokens: 1, ErrorMessage: http.StatusText(s.status), ErrorType: "invalid_request_error"})
}

func (s *probeServer) requests() []probeRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]probeRequest(nil), s.seen...)
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
var ignoreTimes = cmpopts.IgnoreFields(probe.Result{}, "FirstByteMS", "TotalMS")

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
		wantJSON []probe.Result
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
			wantJSON: []probe.Result{
				{Name: "primary", Model: "m-primary", BaseURL: up.URL + "/v1", Status: 200, Class: "success", Contract: "ok", Healthy: true, Diagnosis: "ok"},
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
				var got struct{ Routes []probe.Result }
				if err := json.Unmarshal([]byte(res.stdout), &got); err != nil {
					t.Fatalf("warden probe --format json: %v\n%s", err, res.stdout)
				}
				if diff := gocmp.Diff(tt.wantJSON, got.Routes, ignoreTimes); diff != "" {
					t.Errorf("warden probe (%s) JSON routes (-want +got):\n%s", tt.name, diff)
				}
			}
		})
	}
}

// TestProbeCommandKeyAndGuard: a route's probe_api_key_env and probe_model
// are what the probe sends (a route without them warns and uses its own);
// a second probe within the hour is refused (exit 2, nothing sent) unless
// --force; the guard's state is in the cache directory the environment
// names, never the real one.
func TestProbeCommandKeyAndGuard(t *testing.T) {
	t.Parallel()
	srv := &probeServer{}
	up := httptest.NewServer(srv)
	t.Cleanup(up.Close)
	cache := t.TempDir()
	toml := routeTOML("primary", up.URL+"/v1", "PRIMARY_KEY") +
		"probe_api_key_env = \"PROBE_KEY\"\nprobe_model = \"tiny-model\"\n\n" +
		routeTOML("fallback", up.URL+"/v1", "FALLBACK_KEY")
	dir := writeConfig(t, toml)
	env := map[string]string{"PRIMARY_KEY": "sk-review-DO-NOT-PRINT", "PROBE_KEY": "sk-probe-DO-NOT-PRINT", "FALLBACK_KEY": "sk-fb-DO-NOT-PRINT", "XDG_CACHE_HOME": cache}

	res := runWarden(t, dir, env, "", "probe")
	if res.code != exitOK {
		t.Fatalf("warden probe exit = %d, want 0\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	want := []probeRequest{
		{UserAgent: "warden/" + wardenBuild().Version + " (probe)", Auth: "Bearer sk-probe-DO-NOT-PRINT", Model: "tiny-model", MaxTokens: probe.MaxTokens},
		{UserAgent: "warden/" + wardenBuild().Version + " (probe)", Auth: "Bearer sk-fb-DO-NOT-PRINT", Model: "m-fallback", MaxTokens: probe.MaxTokens},
	}
	got := srv.requests()
	slices.SortFunc(got, func(a, b probeRequest) int { return cmp.Compare(b.Model, a.Model) })
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("warden probe sent (-want +got):\n%s", diff)
	}
	if w := `route "fallback" has no probe_api_key_env: probing with its own key (FALLBACK_KEY); no probe_model: probing its review model (m-fallback)`; !strings.Contains(res.stderr, w) || strings.Contains(res.stderr, `route "primary" has`) {
		t.Errorf("warden probe stderr = %q, want the fallback's warning only", res.stderr)
	}
	if _, err := os.Stat(filepath.Join(cache, "warden", "probe", "probes.json")); err != nil {
		t.Errorf("no probe state in the cache directory: %v", err)
	}

	res = runWarden(t, dir, env, "", "probe")
	if res.code != exitUsage || !strings.Contains(res.stderr, "probe refused: route \"primary\"") || !strings.Contains(res.stderr, "--force") {
		t.Errorf("second warden probe exit = %d, stderr %q; want 2 and a refusal naming the route and --force", res.code, res.stderr)
	}
	if n := len(srv.requests()); n != 2 {
		t.Errorf("the refused probe sent requests: %d in all, want 2", n)
	}

	res = runWarden(t, dir, env, "", "probe", "--force")
	if res.code != exitOK || len(srv.requests()) != 4 {
		t.Errorf("warden probe --force exit = %d after %d requests, want 0 and 4\nstderr:\n%s", res.code, len(srv.requests()), res.stderr)
	}
	if strings.Contains(res.stdout+res.stderr, "DO-NOT-PRINT") {
		t.Errorf("warden probe printed a key")
	}
}
