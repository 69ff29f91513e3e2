package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPolicyAuditHasNoKey: the JSON report's policy lists the configured
// routes with their base timeouts and the name of each key's variable, and
// no format of the report holds the key or the base URL's credentials.
func TestPolicyAuditHasNoKey(t *testing.T) {
	t.Parallel()
	const key = "sk-audit-DO-NOT-PRINT-5e1"
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "low")
	base := strings.Replace(model.URL, "http://", "http://user:DO-NOT-PRINT@", 1) + "/v1"
	cfg := "[[routes]]\nname = \"primary\"\nbase_url = \"" + base + "\"\nmodel = \"kimi\"\napi_key_env = \"AUDIT_KEY\"\nrequest_timeout = \"90s\"\nmax_concurrency = 2\n"
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AUDIT_KEY": key}
	for _, format := range []string{"json", "text", "markdown", "sarif"} {
		res := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", format, "--skill", "code-review")
		if res.code != exitOK {
			t.Fatalf("warden review --format %s exit = %d, want 0\n%s", format, res.code, res.stderr)
		}
		if strings.Contains(res.stdout+res.stderr, "DO-NOT-PRINT") {
			t.Errorf("warden review --format %s printed the key or the URL's credentials", format)
		}
		if format != "json" {
			continue
		}
		var rep struct {
			Policy struct {
				Routes []struct {
					Name             string `json:"name"`
					Model            string `json:"model"`
					BaseURLHost      string `json:"base_url_host"`
					APIKeyEnv        string `json:"api_key_env"`
					RequestTimeoutMS int64  `json:"request_timeout_ms"`
					MaxConcurrency   int    `json:"max_concurrency"`
				} `json:"routes"`
			} `json:"policy"`
		}
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("report: %v", err)
		}
		host := strings.TrimPrefix(model.URL, "http://")
		want := []struct {
			Name             string `json:"name"`
			Model            string `json:"model"`
			BaseURLHost      string `json:"base_url_host"`
			APIKeyEnv        string `json:"api_key_env"`
			RequestTimeoutMS int64  `json:"request_timeout_ms"`
			MaxConcurrency   int    `json:"max_concurrency"`
		}{{"primary", "kimi", host, "AUDIT_KEY", 90000, 2}}
		if diff := cmp.Diff(want, rep.Policy.Routes); diff != "" {
			t.Errorf("policy.routes (-want +got):\n%s", diff)
		}
	}
}
