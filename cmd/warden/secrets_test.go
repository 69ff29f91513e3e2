package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeotlp"
)

// TestActionNeverWritesASecret runs `warden action` with two routes whose
// provider echoes the Authorization header in its error bodies (as some
// real ones do): the primary fails with a 500 (a 401 for one file, if its
// breaker lets a request through), and the fallback answers. Telemetry is on. It then scans every
// byte warden wrote (standard output but its ::add-mask:: lines, standard
// error, the report file, the job summary, the step outputs, every GitHub
// request's body and headers, every OTLP payload and header, every prompt
// sent to a model) for the route keys and the GitHub token, and checks
// that each of them was masked.
func TestActionNeverWritesASecret(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	const (
		wardenKey = "sk-model-key-123456" // the harness's WARDEN_API_KEY
		token     = fakegithub.DefaultToken
	)
	secrets := map[string]string{"primary key": primaryKey, "fallback key": fallbackKey, "WARDEN_API_KEY": wardenKey, "GitHub token": token}

	primary := newScriptedModel(t,
		map[string]int{"auth/session.go": http.StatusInternalServerError, "store/query.go": http.StatusUnauthorized, "README.md": http.StatusInternalServerError},
		nil)
	fallback := newScriptedModel(t, nil, nil)
	fallback.severity = "high"
	secretsBaseConfig(h, fmt.Sprintf(`[review]
max_concurrency = 1

[retry]
backoff = "1ms"
rate_limit_backoff = "1ms"

[[routes]]
name = "primary"
base_url = %q
model = "primary-model"
api_key_env = "PRIMARY_KEY"
failover_on_auth = true

[[routes]]
name = "fallback"
base_url = %q
model = "fallback-model"
api_key_env = "FALLBACK_KEY"
`, primary.srv.URL+"/v1", fallback.srv.URL+"/v1"))
	collector := fakeotlp.New(t)
	h.env["PRIMARY_KEY"] = primaryKey
	h.env["FALLBACK_KEY"] = fallbackKey
	h.env["INPUT_SKILLS"] = "code-review,security-review"
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL
	h.env["OTEL_EXPORTER_OTLP_HEADERS"] = "authorization=Bearer%20" + otlpToken

	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit = %d, want %d (the fallback's high findings); stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	// The provider did echo the keys: the scan below is not vacuous.
	if primary.count("auth/session.go") == 0 {
		t.Fatalf("the primary route failed no request; the test proves nothing; stderr:\n%s\nstdout:\n%s", res.stderr, res.stdout)
	}
	if len(collector.Raw()) == 0 {
		t.Fatalf("no telemetry was exported; the test proves nothing")
	}

	// What warden wrote, by where it went.
	written := map[string][]byte{}
	var logged []string
	for _, l := range strings.Split(res.stdout, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			logged = append(logged, l)
		}
	}
	written["stdout"] = []byte(strings.Join(logged, "\n"))
	written["stderr"] = []byte(res.stderr)
	out := h.outputs()
	for name, path := range map[string]string{"report file": out["report-file"], "job summary": h.env["GITHUB_STEP_SUMMARY"], "step outputs": h.env["GITHUB_OUTPUT"]} {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			t.Fatalf("%s %q: %v (empty: %t)", name, path, err, len(data) == 0)
		}
		written[name] = data
	}
	for i, r := range h.gh.Requests() {
		var hdr bytes.Buffer
		r.Header.Write(&hdr)
		written[fmt.Sprintf("GitHub request %d (%s %s) body", i, r.Method, r.Path)] = r.Body
		written[fmt.Sprintf("GitHub request %d (%s %s) header", i, r.Method, r.Path)] = hdr.Bytes()
	}
	for i, p := range collector.Raw() {
		written[fmt.Sprintf("OTLP payload %d", i)] = p
	}
	for i, hd := range collector.Headers() {
		hd = hd.Clone()
		hd.Del("Authorization") // the collector's own token, which it was given to send
		var b bytes.Buffer
		hd.Write(&b)
		written[fmt.Sprintf("OTLP request %d header", i)] = b.Bytes()
	}
	for _, m := range []*scriptedModel{primary, fallback} {
		m.mu.Lock()
		for i, req := range m.requests {
			for _, msg := range req.Messages {
				written[fmt.Sprintf("prompt %d to %s", i, m.srv.URL)] = append(written[fmt.Sprintf("prompt %d to %s", i, m.srv.URL)], msg.Content...)
			}
		}
		m.mu.Unlock()
	}
	if len(h.gh.Requests()) < 4 {
		t.Fatalf("only %d GitHub requests; want the check run, the review and the reads", len(h.gh.Requests()))
	}
	for where, data := range written {
		for name, secret := range secrets {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("the %s appears in the %s", name, where)
			}
		}
		if bytes.Contains(data, []byte(secretMarker)) {
			t.Errorf("part of a key (%q) appears in the %s: %q", secretMarker, where, excerpt(data, secretMarker))
		}
	}

	// Every key and the token are masked, each on its own line.
	for name, secret := range secrets {
		if !strings.Contains(res.stdout, "::add-mask::"+secret+"\n") {
			t.Errorf("the %s is not masked (no ::add-mask:: line)", name)
		}
	}
	// The report still says what happened, without the key: the echoed
	// error is there, redacted.
	if !bytes.Contains(written["report file"], []byte(`"class": "server_error"`)) || !bytes.Contains(written["report file"], []byte(`"route": "fallback"`)) {
		t.Errorf("the report file does not show the primary's failures and the fallback")
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", res.stderr)
	}

	// The Action logs no provider error text; `warden review -v` logs
	// every attempt's error, the echoed header included: redacted.
	cli := runWarden(t, h.repo.Dir, h.env, "", "review", "--base", h.pr.BaseSHA, "-v", "--format", "json", "--skill", "code-review")
	if cli.code != exitFindings {
		t.Fatalf("warden review -v: exit %d, want %d; stderr:\n%s", cli.code, exitFindings, cli.stderr)
	}
	if !strings.Contains(cli.stderr, "injected failure for") {
		t.Fatalf("warden review -v logged no provider error; the scan proves nothing:\n%s", cli.stderr)
	}
	for where, data := range map[string]string{"stdout of warden review -v": cli.stdout, "stderr of warden review -v": cli.stderr} {
		for name, secret := range secrets {
			if strings.Contains(data, secret) {
				t.Errorf("the %s appears in the %s", name, where)
			}
		}
		if strings.Contains(data, secretMarker) {
			t.Errorf("part of a key (%q) appears in the %s: %q", secretMarker, where, excerpt([]byte(data), secretMarker))
		}
	}
}

// secretsBaseConfig puts toml as warden.toml into the pull request's base
// revision (where the Action reads its configuration from), rebasing the
// pull request's commit onto it.
func secretsBaseConfig(h *actionHarness, toml string) {
	h.t.Helper()
	r := h.repo
	r.git("checkout", "-q", h.pr.BaseSHA)
	r.write("warden.toml", toml)
	r.git("add", "warden.toml")
	r.git("commit", "-qm", "configure warden")
	base := strings.TrimSpace(r.git("rev-parse", "HEAD"))
	r.git("checkout", "-q", "feature")
	r.git("rebase", "-q", base)
	h.pr.BaseSHA, h.pr.HeadSHA = base, strings.TrimSpace(r.git("rev-parse", "HEAD"))
	h.gh.AddPullRequest(h.pr)
	h.event("opened", nil)
	if _, err := os.Stat(filepath.Join(r.Dir, "warden.toml")); err != nil {
		h.t.Fatal(err)
	}
}

// excerpt is the text around the first s in data.
func excerpt(data []byte, s string) string {
	i := bytes.Index(data, []byte(s))
	return string(data[max(0, i-80):min(len(data), i+len(s)+80)])
}
