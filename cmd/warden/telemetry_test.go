package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/internal/fakeotlp"
)

// Secrets the telemetry must never carry: the two routes' keys and the
// collector's own token (sent as a header, never in a payload).
const (
	primaryKey   = "sk-primary-SECRET-9f1c2e"
	fallbackKey  = "sk-fallback-SECRET-77ab30"
	otlpToken    = "otlp-token-SECRET-5e5e5e"
	secretMarker = "SECRET"
)

// scriptedModel is a fakeModel whose requests about a path in fail get
// that status, the first times[path] times (0: always); the error body
// echoes the Authorization header, as some providers do.
type scriptedModel struct {
	*fakeModel
	srv *httptest.Server
}

func newScriptedModel(t *testing.T, fail, times map[string]int) *scriptedModel {
	t.Helper()
	m := newFakeModel(t, "low")
	m.script.ByFile, m.script.Times = map[string]fakeopenai.Answer{}, times
	for path, status := range fail {
		m.script.ByFile[path] = fakeopenai.Answer{Status: status, Code: strconv.Itoa(status)}
	}
	return &scriptedModel{fakeModel: m, srv: m.Server}
}

// count is how many requests about path the script saw.
func (m *scriptedModel) count(path string) int { return m.script.Calls(path) }

// telemetryDiff is six new Go files, one work item each. The four under
// auth/ rank first (risky paths), so that with one item at a time the
// primary route has four successes before its three failures and its
// breaker (opening at half of at least five calls) stays closed.
func telemetryDiff(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range []string{"auth/a.go", "auth/b.go", "auth/c.go", "auth/d.go", "lib/retried.go", "lib/failedover.go"} {
		pkg := filepath.Base(filepath.Dir(p))
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nnew file mode 100644\n--- /dev/null\n+++ b/%s\n@@ -0,0 +1,3 @@\n+package %s\n+\n+func F() int { return 1 }\n", p, p, p, pkg)
	}
	path := filepath.Join(dir, "change.diff")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// telemetryReport is the part of the JSON report the telemetry test
// compares the spans with.
type telemetryReport struct {
	Outcome string `json:"outcome"`
	Items   []struct {
		Path     string           `json:"path"`
		Status   string           `json:"status"`
		Attempts []map[string]any `json:"attempts"`
	} `json:"items"`
}

// TestReviewTelemetry is the acceptance test of OpenTelemetry: a review with
// tracing on, against a loopback OTLP/HTTP collector that decodes the
// protobuf payloads. One file's request gets a 503 once (retried on the
// same route); another's gets 500 on the first route every time (failed
// over to the second). It checks the span tree against the report, the
// attributes of the retried and the failed-over attempts, the metrics, and
// that no payload holds a key.
func TestReviewTelemetry(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := telemetryDiff(t, dir)
	primary := newScriptedModel(t,
		map[string]int{"lib/retried.go": http.StatusServiceUnavailable, "lib/failedover.go": http.StatusInternalServerError},
		map[string]int{"lib/retried.go": 1})
	fallback := newScriptedModel(t, nil, nil)
	cfg := fmt.Sprintf(`[review]
max_concurrency = 1

[retry]
backoff = "1ms"
rate_limit_backoff = "1ms"

[[routes]]
name = "primary"
base_url = %q
model = "primary-model"
api_key_env = "PRIMARY_KEY"

[[routes]]
name = "fallback"
base_url = %q
model = "fallback-model"
api_key_env = "FALLBACK_KEY"
`, primary.srv.URL+"/v1", fallback.srv.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	collector := fakeotlp.New(t)
	env := map[string]string{
		"PRIMARY_KEY":                 primaryKey,
		"FALLBACK_KEY":                fallbackKey,
		"OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL,
		"OTEL_EXPORTER_OTLP_HEADERS":  "authorization=Bearer%20" + otlpToken,
		"OTEL_RESOURCE_ATTRIBUTES":    "deployment.environment.name=ci",
	}

	res := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	var rep telemetryReport
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != "complete" || len(rep.Items) != 6 {
		t.Fatalf("outcome %q with %d items; want complete with 6", rep.Outcome, len(rep.Items))
	}
	if bad := collector.Malformed(); len(bad) > 0 {
		t.Fatalf("the collector could not read %v", bad)
	}
	spans := collector.Spans()

	// The tree: one review, its items, each item's attempts, as the report
	// lists them.
	type attemptNode struct{ Route, Kind, Class string }
	type itemNode struct {
		Path     string
		Attempts []attemptNode
	}
	var want []itemNode
	for _, it := range rep.Items {
		n := itemNode{Path: it.Path}
		for _, a := range it.Attempts {
			n.Attempts = append(n.Attempts, attemptNode{a["route"].(string), a["kind"].(string), a["class"].(string)})
		}
		want = append(want, n)
	}
	children := map[string][]fakeotlp.Span{}
	var roots []fakeotlp.Span
	for _, s := range spans {
		if len(s.GetParentSpanId()) == 0 {
			roots = append(roots, s)
			continue
		}
		children[hex.EncodeToString(s.GetParentSpanId())] = append(children[hex.EncodeToString(s.GetParentSpanId())], s)
	}
	if len(roots) != 1 || roots[0].GetName() != "warden.review" {
		t.Fatalf("root spans = %d (%v); want one warden.review", len(roots), spanNames(roots))
	}
	root := roots[0]
	if a := fakeotlp.Attrs(root.GetAttributes()); a["warden.outcome"] != "complete" || a["warden.items.planned"] != int64(6) {
		t.Errorf("review span attributes %v; want outcome complete, 6 items planned", a)
	}
	var got []itemNode
	attemptSpans := map[string][]fakeotlp.Span{} // by item path
	for _, is := range children[hex.EncodeToString(root.GetSpanId())] {
		if is.GetName() != "warden.item" || !bytes.Equal(is.GetTraceId(), root.GetTraceId()) {
			t.Errorf("child of the review %q in trace %x; want warden.item in %x", is.GetName(), is.GetTraceId(), root.GetTraceId())
		}
		path, _ := fakeotlp.Attrs(is.GetAttributes())["warden.path"].(string)
		n := itemNode{Path: path}
		for _, as := range children[hex.EncodeToString(is.GetSpanId())] {
			a := fakeotlp.Attrs(as.GetAttributes())
			n.Attempts = append(n.Attempts, attemptNode{a["warden.route"].(string), a["warden.attempt.kind"].(string), a["warden.attempt.class"].(string)})
			attemptSpans[path] = append(attemptSpans[path], as)
			if len(children[hex.EncodeToString(as.GetSpanId())]) != 0 {
				t.Errorf("attempt span %s has children", as.GetName())
			}
		}
		got = append(got, n)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span tree differs from the report (-report +spans):\n%s", diff)
	}
	n := 1 + len(rep.Items)
	for _, it := range rep.Items {
		n += len(it.Attempts)
	}
	if len(spans) != n {
		t.Errorf("got %d spans, want %d: every span in the tree", len(spans), n)
	}

	// The retried attempt and the failed-over one carry what happened, the
	// same numbers as the report.
	port := func(u string) int64 {
		pu, _ := url.Parse(u)
		p, _ := strconv.Atoi(pu.Port())
		return int64(p)
	}
	reportAttempt := func(path string, i int) map[string]any {
		for _, it := range rep.Items {
			if it.Path == path {
				return it.Attempts[i]
			}
		}
		t.Fatalf("no item %s in the report", path)
		return nil
	}
	ms := func(v any) int64 { f, _ := v.(float64); return int64(f) }
	checks := []struct {
		name    string
		path    string
		attempt int
		want    map[string]any
		status  string // the span status's message when an error
	}{
		{"the 503", "lib/retried.go", 0, map[string]any{
			"warden.route": "primary", "warden.attempt": int64(1), "warden.attempt.kind": "primary",
			"warden.attempt.class": "overloaded", "warden.attempt.decision": "retry", "error.type": "overloaded",
			"gen_ai.request.model": "primary-model", "server.address": "127.0.0.1", "server.port": port(primary.srv.URL),
		}, "overloaded"},
		{"the retry", "lib/retried.go", 1, map[string]any{
			"warden.route": "primary", "warden.attempt": int64(2), "warden.attempt.kind": "retry",
			"warden.retry.reason": "overloaded", "warden.attempt.class": "success", "warden.attempt.decision": "done",
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "primary-model", "gen_ai.response.model": "primary-model",
			"server.address": "127.0.0.1", "server.port": port(primary.srv.URL), "warden.circuit.state": "closed",
		}, ""},
		{"the failover", "lib/failedover.go", 2, map[string]any{
			"warden.route": "fallback", "warden.attempt": int64(3), "warden.attempt.kind": "failover",
			"warden.failover.reason": "server_error", "warden.failover.from": "primary",
			"warden.attempt.class": "success", "warden.attempt.decision": "done",
			"gen_ai.request.model": "fallback-model", "gen_ai.response.model": "fallback-model",
			"server.address": "127.0.0.1", "server.port": port(fallback.srv.URL), "warden.circuit.state": "closed",
		}, ""},
	}
	for _, c := range checks {
		spans := attemptSpans[c.path]
		if len(spans) <= c.attempt {
			t.Errorf("%s: %s has %d attempt spans", c.name, c.path, len(spans))
			continue
		}
		s := spans[c.attempt]
		attrs := fakeotlp.Attrs(s.GetAttributes())
		ra := reportAttempt(c.path, c.attempt)
		want := c.want
		for k, v := range map[string]any{
			"warden.timeout.base_ms": ra["timeout_base_ms"], "warden.timeout.effective_ms": ra["timeout_effective_ms"],
			"warden.deadline_ms": ra["deadline_ms"], "warden.budget.remaining_ms": ra["item_remaining_ms"],
			"warden.budget.review_remaining_ms": ra["review_remaining_ms"],
		} {
			want[k] = ms(v)
		}
		if c.status == "" { // an answer: its tokens, as the server counted them
			want["gen_ai.usage.input_tokens"], want["gen_ai.usage.output_tokens"] = ms(ra["prompt_tokens"]), int64(20)
		}
		gotSome := map[string]any{}
		for k := range want {
			if v, ok := attrs[k]; ok {
				gotSome[k] = v
			}
		}
		if diff := cmp.Diff(want, gotSome); diff != "" {
			t.Errorf("%s: attempt span attributes (-want +got):\n%s", c.name, diff)
		}
		if ms(ra["timeout_effective_ms"]) <= 0 || ms(ra["item_remaining_ms"]) <= 0 {
			t.Errorf("%s: report attempt %v lacks its timeout or remaining budget", c.name, ra)
		}
		if got := s.GetStatus().GetMessage(); got != c.status {
			t.Errorf("%s: span status message %q, want %q", c.name, got, c.status)
		}
	}

	// Metrics.
	metrics := collector.Metrics()
	for _, c := range []struct {
		name  string
		match map[string]any
		want  int64
	}{
		{"warden.reviews", map[string]any{"warden.outcome": "complete"}, 1},
		{"warden.retries", map[string]any{"warden.route": "primary", "warden.retry.reason": "overloaded"}, 1},
		{"warden.retries", map[string]any{"warden.route": "primary", "warden.retry.reason": "server_error"}, 1},
		{"warden.failovers", map[string]any{"warden.route": "fallback", "warden.failover.from": "primary", "warden.failover.reason": "server_error"}, 1},
	} {
		if got, ok := fakeotlp.Sum(metrics, c.name, c.match); !ok || got != c.want {
			t.Errorf("metric %s%v = %d (received %v), want %d", c.name, c.match, got, ok, c.want)
		}
	}
	// 4 + 2 + 3 calls sent: one answer each, plus the 503 and two 500s.
	if got, ok := fakeotlp.HistogramCount(metrics, "warden.attempt.duration", nil); !ok || got != 9 {
		t.Errorf("warden.attempt.duration count = %d (received %v), want 9", got, ok)
	}
	if got, ok := fakeotlp.HistogramCount(metrics, "warden.attempt.duration", map[string]any{"warden.route": "fallback"}); !ok || got != 1 {
		t.Errorf("warden.attempt.duration{fallback} count = %d (received %v), want 1", got, ok)
	}
	if _, ok := fakeotlp.Sum(metrics, "warden.timeouts", nil); ok {
		t.Errorf("warden.timeouts received, but nothing timed out")
	}

	// Where it came from, and with the collector's token as a header.
	if a := fakeotlp.Attrs(root.Resource.GetAttributes()); a["service.name"] != "warden" || a["service.version"] != wardenBuild().Version || a["deployment.environment.name"] != "ci" {
		t.Errorf("resource %v; want service.name warden, service.version %s, deployment.environment.name ci", a, wardenBuild().Version)
	}
	for i, h := range collector.Headers() {
		if got := h.Get("Authorization"); got != "Bearer "+otlpToken {
			t.Errorf("export %d: Authorization %q, want the OTEL_EXPORTER_OTLP_HEADERS value", i, got)
		}
	}

	// No key, nor the collector's token, anywhere in what was sent: raw
	// bytes (every attribute, resource and status message included).
	if len(collector.Raw()) < 2 {
		t.Fatalf("the collector got %d exports, want traces and metrics", len(collector.Raw()))
	}
	for i, body := range collector.Raw() {
		for _, secret := range []string{primaryKey, fallbackKey, otlpToken, secretMarker} {
			if bytes.Contains(body, []byte(secret)) {
				t.Errorf("export %d holds %q", i, secret)
			}
		}
	}
	if r, f := primary.count("lib/retried.go"), primary.count("lib/failedover.go"); r != 2 || f != 2 {
		t.Errorf("the primary route served retried.go %d times and failedover.go %d times; want 2 and 2 (the script did not run)", r, f)
	}
	if strings.Contains(res.stderr, "telemetry") {
		t.Errorf("stderr mentions telemetry, but the export went well:\n%s", res.stderr)
	}
}

func spanNames(spans []fakeotlp.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.GetName())
	}
	return out
}

// rootSpan returns the one warden.review span the collector received.
func rootSpan(t *testing.T, c *fakeotlp.Collector) fakeotlp.Span {
	t.Helper()
	var roots []fakeotlp.Span
	for _, s := range c.Spans() {
		if s.GetName() == "warden.review" {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Fatalf("the collector got %d review spans (all spans: %v), want 1", len(roots), spanNames(c.Spans()))
	}
	return roots[0]
}

// TestTelemetryFlushedOnInterrupt: a review stopped by a signal still sends
// what it did, with a context of its own.
func TestTelemetryFlushedOnInterrupt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	arrived := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done() // never answers
	}))
	t.Cleanup(srv.Close)
	collector := fakeotlp.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel() // as SIGINT would
	}()
	env := map[string]string{"WARDEN_BASE_URL": srv.URL + "/v1", "WARDEN_MODEL": "m", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL}
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"-C", dir, "review", "--diff", diff, "--format", "json"}, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if code != exitInterrupted {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
	root := rootSpan(t, collector)
	if a := fakeotlp.Attrs(root.GetAttributes()); a["warden.outcome"] != "partial" {
		t.Errorf("review span outcome %v, want partial", a["warden.outcome"])
	}
	if got := root.GetStatus().GetMessage(); got != "partial" {
		t.Errorf("review span status message %q, want partial", got)
	}
	if _, ok := fakeotlp.Sum(collector.Metrics(), "warden.reviews", map[string]any{"warden.outcome": "partial"}); !ok {
		t.Errorf("no warden.reviews metric after the interrupt")
	}
	if lastLine(stderr.String()) != "warden: interrupted" {
		t.Errorf("stderr's last line = %q, want warden: interrupted", lastLine(stderr.String()))
	}
}

func TestTelemetryConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		wantErr  string // the last line of stderr
		wantSent bool
	}{
		{name: "http/json is refused before any call", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			wantCode: exitUsage, wantErr: `warden: OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" is not supported: use http/protobuf (the default) or grpc`},
		{name: "bad headers", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "authorization"},
			wantCode: exitUsage, wantErr: "warden: OTEL_EXPORTER_OTLP_HEADERS: entry 1 is not key=value"},
		{name: "disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true"}, wantCode: exitOK},
		{name: "dry run sends nothing", args: []string{"--dry-run"}, wantCode: exitOK},
		{name: "on", wantCode: exitOK, wantSent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			diff := sampleDiff(t, dir)
			model := newFakeModel(t, "low")
			collector := fakeotlp.New(t)
			env := model.env("k")
			env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL
			for k, v := range tt.env {
				env[k] = v
			}
			res := runWarden(t, dir, env, "", append([]string{"review", "--diff", diff, "--format", "json", "--skill", "code-review"}, tt.args...)...)
			if res.code != tt.wantCode {
				t.Fatalf("exit = %d, want %d; stderr:\n%s", res.code, tt.wantCode, res.stderr)
			}
			if tt.wantErr != "" {
				if got := lastLine(res.stderr); got != tt.wantErr {
					t.Errorf("stderr's last line = %q, want %q", got, tt.wantErr)
				}
				if model.calls() != 0 {
					t.Errorf("the model got %d calls, want none with a bad configuration", model.calls())
				}
			}
			if sent := len(collector.Raw()) > 0; sent != tt.wantSent {
				t.Errorf("telemetry sent = %v, want %v", sent, tt.wantSent)
			}
		})
	}
}

// TestTelemetryExportFailureIsReported: a collector that refuses the export
// is reported on stderr and does not change the review's exit code.
func TestTelemetryExportFailureIsReported(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "low")
	collector := fakeotlp.New(t)
	collector.Status = http.StatusBadRequest // not retried
	env := model.env(primaryKey)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL
	env["OTEL_EXPORTER_OTLP_HEADERS"] = "api-key=" + otlpToken
	res := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0 (telemetry never fails a review); stderr:\n%s", res.code, res.stderr)
	}
	if !strings.Contains(res.stderr, "warden: telemetry: traces: ") || !strings.Contains(res.stderr, "warden: telemetry: metrics: ") {
		t.Errorf("stderr does not report the failed exports:\n%s", res.stderr)
	}
	if strings.Contains(res.stderr, secretMarker) {
		t.Errorf("stderr shows a secret:\n%s", res.stderr)
	}
}

func TestActionTelemetry(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "low")
	collector := fakeotlp.New(t)
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL
	res := h.run(context.Background())
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	root := rootSpan(t, collector)
	if a := fakeotlp.Attrs(root.GetAttributes()); a["warden.outcome"] != "complete" || a["warden.items.reviewed"] != int64(h.model.calls()) {
		t.Errorf("review span %v; want outcome complete and one reviewed item per model call (%d)", a, h.model.calls())
	}
	for i, body := range collector.Raw() {
		if bytes.Contains(body, []byte(h.env["WARDEN_API_KEY"])) || bytes.Contains(body, []byte(h.env["INPUT_GITHUB_TOKEN"])) {
			t.Errorf("export %d holds the model key or the GitHub token", i)
		}
	}
}
