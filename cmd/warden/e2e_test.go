package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/internal/testgit"
)

// result is what one run of warden did.
type result struct {
	code           int
	stdout, stderr string
}

// runWarden runs warden's run() in dir with the given environment.
func runWarden(t *testing.T, dir string, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	getenv := func(k string) string { return env[k] }
	code := run(context.Background(), append([]string{"-C", dir}, args...), strings.NewReader(stdin), &stdout, &stderr, getenv)
	return result{code, stdout.String(), stderr.String()}
}

// fakeModel is an OpenAI-compatible chat-completions server on loopback,
// on internal/fakeopenai's Script. For each request it answers with one
// finding on the first line the prompt allows, at the severity the test
// sets, or with the status it is told (the error echoes the credentials,
// as some real providers do); the script's ByFile answers come first.
type fakeModel struct {
	*httptest.Server
	script   *fakeopenai.Script
	severity string
	status   int    // when non-zero, answer this status with an OpenAI error body
	content  string // when non-empty, answer this content verbatim
	// findingsPerAnswer is how many findings each answer has (default 1),
	// spread over the lines the prompt allows.
	findingsPerAnswer int

	mu       sync.Mutex
	requests []chatRequest
	auth     []string
}

type chatRequest struct {
	Model          string `json:"model"`
	MaxTokens      int    `json:"max_tokens"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string `json:"name"`
			Strict bool   `json:"strict"`
		} `json:"json_schema"`
	} `json:"response_format"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
}

var linesRE = regexp.MustCompile(`(?s)The lines you may report on are (\d+) to (\d+) of the file in the data below.*?\nFile: ([^\n]+)\n`)

func newFakeModel(t *testing.T, severity string) *fakeModel {
	t.Helper()
	m := &fakeModel{severity: severity}
	m.script = &fakeopenai.Script{
		Default:          m.answer,
		ErrorMessage:     func(r *http.Request, _ int) string { return "injected failure for " + r.Header.Get("Authorization") },
		ErrorType:        "server_error",
		CompletionTokens: 20,
	}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

// serve records the request and its credentials and hands it to the script.
func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.auth = append(m.auth, r.Header.Get("Authorization"))
	m.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.script.ServeHTTP(w, r)
}

// answer is the default answer: the status the test set, its content, or
// findings on the lines the prompt allows.
func (m *fakeModel) answer(req fakeopenai.Request) fakeopenai.Answer {
	if m.status != 0 {
		return fakeopenai.Answer{Status: m.status, Code: strconv.Itoa(m.status)}
	}
	if m.content != "" {
		return fakeopenai.Answer{Content: m.content}
	}
	sub := linesRE.FindStringSubmatch(req.Prompt())
	start, _ := strconv.Atoi(sub[1])
	end, _ := strconv.Atoi(sub[2])
	var findings []map[string]any
	for i := range max(1, m.findingsPerAnswer) {
		line := start + i%(end-start+1)
		findings = append(findings, map[string]any{
			"severity": m.severity, "title": fmt.Sprintf("Problem %d in %s", i, sub[3]), "description": "Something is wrong here.",
			"start_line": line, "end_line": line, "suggestion": "", "confidence": 0.9,
		})
	}
	b, _ := json.Marshal(map[string]any{"findings": findings})
	return fakeopenai.Answer{Content: string(b)}
}

func promptChars(req chatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
	}
	return n
}

func (m *fakeModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

func (m *fakeModel) env(key string) map[string]string {
	return map[string]string{"WARDEN_BASE_URL": m.URL + "/v1", "WARDEN_MODEL": "test-model", "WARDEN_API_KEY": key}
}

// sampleDiff copies the repository's sample diff into dir.
func sampleDiff(t *testing.T, dir string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample.diff"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sample.diff")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// noWaiting writes a warden.toml that keeps retries but makes their waits
// negligible, so tests of failure paths spend no real time sleeping (the
// waits themselves are tested on virtual time in execution/).
func noWaiting(t *testing.T, dir string) {
	t.Helper()
	// No wait is worth real time in a test: retries after 1 ms, and a route
	// that stops answering is given up after 1 s (the outage patience).
	cfg := "[retry]\nbackoff = \"1ms\"\nrate_limit_backoff = \"1ms\"\noutage_patience = \"1s\"\n"
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// jsonReport is the part of the JSON report the tests read.
type jsonReport struct {
	Schema  string `json:"schema"`
	Outcome string `json:"outcome"`
	Summary struct {
		Planned, Reviewed, Failed, Skipped, Findings int
	} `json:"summary"`
	Findings []struct {
		Skill, Severity, Title, Path, Route, Model string
		StartLine                                  int `json:"start_line"`
		EndLine                                    int `json:"end_line"`
	} `json:"findings"`
	Items []struct {
		Skill, Path, Status, Reason, Route string
		StartLine                          int   `json:"start_line"`
		EndLine                            int   `json:"end_line"`
		TimeoutEffectiveMS                 int64 `json:"timeout_effective_ms"`
		Attempts                           []struct {
			Route, Model, Kind, Class string
		} `json:"attempts"`
	} `json:"items"`
	Ignored []struct{ Path, Reason string } `json:"ignored"`
	Routes  []struct {
		Name     string
		Calls    int
		OK       int `json:"ok"`
		Failed   int
		Timeouts int
	} `json:"routes"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func decodeReport(t *testing.T, s string) jsonReport {
	t.Helper()
	var r jsonReport
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, s)
	}
	if r.Schema != "warden.report/v1" {
		t.Fatalf("schema = %q, want warden.report/v1", r.Schema)
	}
	return r
}

func TestReviewDiffAgainstLoopbackModel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "high")
	const key = "sk-test-SECRET-0123456789"

	res := runWarden(t, dir, model.env(key), "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitFindings {
		t.Fatalf("exit = %d, want %d (a high finding, default fail-on high); stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	r := decodeReport(t, res.stdout)
	if r.Outcome != "complete" {
		t.Errorf("outcome = %q, want complete", r.Outcome)
	}
	if r.Summary.Planned == 0 || r.Summary.Reviewed != r.Summary.Planned || len(r.Findings) != r.Summary.Planned {
		t.Errorf("summary = %+v with %d findings; want every item reviewed and one finding per item", r.Summary, len(r.Findings))
	}
	if got := model.calls(); got != r.Summary.Planned {
		t.Errorf("model got %d calls, want one per item (%d)", got, r.Summary.Planned)
	}
	for _, f := range r.Findings {
		if f.Severity != "high" || f.Skill != "code-review" || f.Route != "env" || f.Model != "test-model" || f.StartLine < 1 || !strings.HasPrefix(f.Title, "Problem 0 in "+f.Path) {
			t.Errorf("finding %+v does not carry what the server sent", f)
		}
	}
	// Every request asked for the strict schema and sent the key.
	for i, req := range model.requests {
		if req.Model != "test-model" || req.ResponseFormat == nil || req.ResponseFormat.Type != "json_schema" || !req.ResponseFormat.JSONSchema.Strict {
			t.Errorf("request %d = model %q format %+v; want test-model with a strict json_schema", i, req.Model, req.ResponseFormat)
		}
		if model.auth[i] != "Bearer "+key {
			t.Errorf("request %d Authorization = %q, want the key", i, model.auth[i])
		}
	}
	wantTokens := 0
	for _, req := range model.requests {
		wantTokens += promptChars(req) / 4
	}
	if r.Usage.PromptTokens != wantTokens || r.Usage.CompletionTokens != 20*r.Summary.Planned {
		t.Errorf("usage = %+v, want %d prompt and %d completion tokens, as the server said", r.Usage, wantTokens, 20*r.Summary.Planned)
	}
	if strings.Contains(res.stdout+res.stderr, key) {
		t.Errorf("the API key appears in warden's output")
	}
	// Standard error is not a terminal here: no progress without -v.
	if strings.Contains(res.stderr, "items done") {
		t.Errorf("progress on a standard error that is not a terminal, without -v:\n%s", res.stderr)
	}

	// The same review with a higher threshold passes; -v shows the progress.
	res = runWarden(t, dir, model.env(key), "", "review", "-v", "--diff", diff, "--format", "json", "--skill", "code-review", "--fail-on", "critical")
	if res.code != exitOK {
		t.Errorf("exit with --fail-on critical = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	if want := fmt.Sprintf("%d/%d items done", r.Summary.Planned, r.Summary.Planned); !strings.Contains(res.stderr, want) {
		t.Errorf("stderr under -v has no progress line %q:\n%s", want, res.stderr)
	}
}

func TestInterruptedReviewKeepsTheReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	arrived := make(chan struct{}, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // the server notices a closed connection only once the body is read
		arrived <- struct{}{}
		<-r.Context().Done() // never answers; the client gives up
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel() // as SIGINT would
	}()
	var stdout, stderr bytes.Buffer
	env := map[string]string{"WARDEN_BASE_URL": srv.URL + "/v1", "WARDEN_MODEL": "m"}
	code := run(ctx, []string{"-C", dir, "review", "--diff", diff, "--format", "json"}, strings.NewReader(""), &stdout, &stderr, func(k string) string { return env[k] })
	if code != exitInterrupted {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", code, exitInterrupted, stderr.String())
	}
	r := decodeReport(t, stdout.String())
	if r.Outcome != "partial" || r.Summary.Reviewed != 0 || r.Summary.Skipped != r.Summary.Planned {
		t.Errorf("outcome %q summary %+v; want partial with every item skipped", r.Outcome, r.Summary)
	}
	for _, it := range r.Items {
		if it.Reason != "cancelled" {
			t.Errorf("item %s:%d reason %q, want cancelled", it.Path, it.StartLine, it.Reason)
		}
	}
	if lastLine(stderr.String()) != "warden: interrupted" {
		t.Errorf("stderr's last line = %q, want warden: interrupted", lastLine(stderr.String()))
	}
}

func TestReviewProviderDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	noWaiting(t, dir)
	model := newFakeModel(t, "high")
	model.status = http.StatusUnauthorized

	res := runWarden(t, dir, model.env("sk-bad"), "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitIncomplete {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", res.code, exitIncomplete, res.stderr)
	}
	r := decodeReport(t, res.stdout)
	if r.Outcome != "provider-unavailable" || r.Summary.Reviewed != 0 || len(r.Findings) != 0 {
		t.Errorf("outcome %q summary %+v; want provider-unavailable with nothing reviewed", r.Outcome, r.Summary)
	}
	for _, it := range r.Items {
		if it.Status == "reviewed" || it.Reason == "" {
			t.Errorf("item %s:%d status %q reason %q; an unreviewed item must say why", it.Path, it.StartLine, it.Status, it.Reason)
		}
	}
}

func TestSecretsNeverPrinted(t *testing.T) {
	t.Parallel()
	const key = "sk-live-DO-NOT-PRINT-7f3a9c"
	// A one-item review per status and format: its calls stay under the
	// breaker's minimum, so no cool-down is waited out on the clock. The
	// breaker's own path (open, its trial calls, the route given up after
	// the outage patience: probe_failed) is one review more, of the whole
	// sample.
	oneItem := []string{"--diff", "session_test.diff", "--skill", "code-review"}
	cases := map[string][]string{"500/breaker/json": {"--diff", "sample.diff", "--format", "json"}}
	for _, status := range []int{0, http.StatusUnauthorized, http.StatusInternalServerError, http.StatusTooManyRequests} {
		for _, format := range []string{"text", "json", "markdown", "sarif"} {
			cases[strconv.Itoa(status)+"/"+format] = slices.Concat(oneItem, []string{"--format", format})
		}
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			sample := sampleDiff(t, dir)
			data, _ := os.ReadFile(sample)
			i := strings.Index(string(data), "diff --git a/auth/session_test.go")
			j := strings.Index(string(data), "diff --git a/docs/auth.md")
			if err := os.WriteFile(filepath.Join(dir, "session_test.diff"), data[i:j], 0o644); err != nil {
				t.Fatal(err)
			}
			noWaiting(t, dir)
			model := newFakeModel(t, "low")
			model.status, _ = strconv.Atoi(strings.Split(name, "/")[0])
			out := filepath.Join(dir, "report")
			res := runWarden(t, dir, model.env(key), "", append([]string{"review", "-v", "--output", out}, args...)...)
			report, err := os.ReadFile(out)
			if err != nil {
				t.Fatalf("no report file (exit %d): %v\n%s", res.code, err, res.stderr)
			}
			for name, text := range map[string]string{"stdout": res.stdout, "stderr": res.stderr, "report": string(report)} {
				if strings.Contains(text, key) || strings.Contains(text, "DO-NOT-PRINT") {
					t.Errorf("the API key appears in %s", name)
				}
			}
			if model.calls() == 0 {
				t.Error("the model was never called, so nothing was tested")
			}
			if strings.Contains(name, "breaker") && (!strings.Contains(res.stderr, "to=open") || !strings.Contains(res.stderr, "reason=probe_failed")) {
				t.Errorf("the breaker did not open and give the route up:\n%s", res.stderr)
			}
		})
	}
}

func TestRouteWithoutJSONSchema(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	model := newFakeModel(t, "low")
	cfg := fmt.Sprintf("[[routes]]\nname = \"plain\"\nbase_url = %q\nmodel = \"m\"\njson_schema = false\n", model.URL+"/v1")
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	for i, req := range model.requests {
		if req.ResponseFormat != nil {
			t.Errorf("request %d has response_format %+v, want none on a json_schema = false route", i, req.ResponseFormat)
		}
		if model.auth[i] != "" {
			t.Errorf("request %d sent Authorization %q, want none for a route without api_key_env", i, model.auth[i])
		}
	}
}

func TestReviewBadAnswerIsNeverClean(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	noWaiting(t, dir)
	model := newFakeModel(t, "high")
	model.content = "I reviewed it and it looks fine!"

	res := runWarden(t, dir, model.env("k"), "", "review", "--diff", diff, "--format", "json", "--skill", "code-review")
	if res.code != exitIncomplete {
		t.Fatalf("exit = %d, want %d; stderr:\n%s", res.code, exitIncomplete, res.stderr)
	}
	r := decodeReport(t, res.stdout)
	for _, it := range r.Items {
		if it.Status != "failed" || it.Reason != "bad_response" {
			t.Errorf("item %s:%d = %s/%s, want failed/bad_response", it.Path, it.StartLine, it.Status, it.Reason)
		}
	}
}

func TestDryRunNeedsNoKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)

	res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--format", "json")
	if res.code != exitOK {
		t.Fatalf("exit = %d, want 0; stderr:\n%s", res.code, res.stderr)
	}
	r := decodeReport(t, res.stdout)
	if r.Outcome != "dry-run" || r.Summary.Planned == 0 {
		t.Errorf("outcome %q planned %d; want dry-run with items", r.Outcome, r.Summary.Planned)
	}
	for _, it := range r.Items {
		if it.Status != "planned" || it.TimeoutEffectiveMS <= 0 {
			t.Errorf("item %+v: want status planned and an effective timeout", it)
		}
	}
	if got := ignoredReasons(r); got["go.sum"] != "lockfile" {
		t.Errorf("ignored = %v, want go.sum as a lockfile", got)
	}
	// The most relevant work comes first: source before tests before docs.
	if r.Items[0].Path != "auth/session.go" {
		t.Errorf("first item is %s, want auth/session.go", r.Items[0].Path)
	}

	// A route whose key variable is unset is fine for a dry run...
	cfg := "[[routes]]\nname = \"primary\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"UNSET_KEY\"\n"
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	res = runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run")
	if res.code != exitOK || !strings.Contains(res.stdout, "auth/session.go") {
		t.Errorf("dry run with an unset key: exit %d, stdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
	}
	// ...but not for a review.
	res = runWarden(t, dir, nil, "", "review", "--diff", diff)
	want := `warden: route "primary": environment variable UNSET_KEY is not set (it holds the route's API key)` + "\n"
	if res.code != exitUsage || res.stderr != want {
		t.Errorf("review with an unset key: exit %d, stderr %q; want %d, %q", res.code, res.stderr, exitUsage, want)
	}
}

func ignoredReasons(r jsonReport) map[string]string {
	m := map[string]string{}
	for _, ig := range r.Ignored {
		m[ig.Path] = ig.Reason
	}
	return m
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	write := func(name, content string) string {
		t.Helper()
		path := filepath.Join(t.TempDir(), name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	badSkillRepo := t.TempDir()
	if err := os.MkdirAll(filepath.Join(badSkillRepo, ".warden", "skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badSkillRepo, ".warden", "skills", "mine.md"), []byte("Just instructions, no frontmatter.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	garbage := string([]byte{0x00, 0xff, 0x13, 0x37, 0x89, 'P', 'N', 'G', 0x00, 0x01})
	tests := []struct {
		name    string
		dir     string
		stdin   string
		args    []string
		mention []string
	}{
		{"missing diff file", dir, "", []string{"review", "--diff", "nope.diff", "--dry-run"}, []string{"nope.diff", "no such file"}},
		{"binary garbage on stdin", dir, garbage, []string{"review", "--diff", "-", "--dry-run"}, []string{"standard input", "diff"}},
		{"malformed toml", dir, "", []string{"review", "--diff", diff, "--dry-run", "--config", write("bad.toml", "[review\nbudget = 1\n")}, []string{"bad.toml:1"}},
		{"unknown key", dir, "", []string{"review", "--diff", diff, "--dry-run", "--config", write("w.toml", "version = 1\n[review]\nbugdet = \"1m\"\n")}, []string{"w.toml:3", "review.bugdet", "unknown key"}},
		{"missing config", dir, "", []string{"review", "--diff", diff, "--dry-run", "--config", "missing.toml"}, []string{"missing.toml", "no such file"}},
		{"skill without frontmatter, asked for", badSkillRepo, "", []string{"review", "--diff", diff, "--dry-run", "--skill", "mine"}, []string{"mine.md:1", "frontmatter"}},
		{"unknown skill", dir, "", []string{"review", "--diff", diff, "--dry-run", "--skill", "nope"}, []string{"nope"}},
		{"unknown format", dir, "", []string{"review", "--diff", diff, "--format", "xml"}, []string{"xml"}},
		{"unknown flag", dir, "", []string{"review", "--frobnicate"}, []string{"frobnicate"}},
		{"diff and base", dir, "", []string{"review", "--diff", diff, "--base", "main"}, []string{"--diff", "--base"}},
		{"unknown command", dir, "", []string{"reveiw"}, []string{"reveiw"}},
		{"not a git repository", t.TempDir(), "", []string{"review", "--dry-run"}, []string{"git"}},
		{"bad fail-on", dir, "", []string{"review", "--diff", diff, "--fail-on", "urgent"}, []string{"urgent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runWarden(t, tt.dir, nil, tt.stdin, tt.args...)
			if res.code != exitUsage {
				t.Errorf("exit = %d, want %d; stderr:\n%s", res.code, exitUsage, res.stderr)
			}
			last := lastLine(res.stderr)
			if !strings.HasPrefix(last, "warden: ") {
				t.Errorf("stderr's last line = %q, want a one-line warden error", last)
			}
			for _, m := range tt.mention {
				if !strings.Contains(last, m) {
					t.Errorf("error %q does not mention %q", last, m)
				}
			}
			if strings.Contains(res.stderr, "goroutine ") || strings.Contains(res.stderr, "panic") {
				t.Errorf("stderr shows a panic:\n%s", res.stderr)
			}
			if res.stdout != "" && tt.name != "unknown command" {
				t.Errorf("stdout = %q, want nothing on an input error", res.stdout)
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// gitRepo is internal/testgit's hermetic repository, with the names these
// tests use.
type gitRepo struct{ *testgit.Repo }

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	return &gitRepo{testgit.New(t)}
}

func (r *gitRepo) git(args ...string) string  { r.T().Helper(); return r.Git(args...) }
func (r *gitRepo) write(path, content string) { r.T().Helper(); r.Write(path, content) }

func numbered(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return b.String()
}

// plannedPaths lists the paths the report's items cover, sorted, once each.
func plannedPaths(r jsonReport) []string {
	var out []string
	for _, it := range r.Items {
		out = append(out, it.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func TestGitRepositoryPlans(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	r.write("app/server.go", "package app\n\n"+numbered(60, "// server"))
	r.write("app/old_name.go", "package app\n\n"+numbered(30, "// mover"))
	r.write("docs/guide.md", "# Guide\n")
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00binary")
	r.git("add", "-A")
	r.git("commit", "-qm", "init")

	// Uncommitted edits: a changed file, a staged new file, an untracked file.
	r.write("app/server.go", strings.Replace("package app\n\n"+numbered(60, "// server"), "// server line 30\n", "// server line 30 changed\n", 1))
	r.write("app/staged.go", "package app\n\nfunc Staged() {}\n")
	r.git("add", "app/staged.go")
	r.write("app/untracked.go", "package app\n\nfunc Untracked() {}\n")
	res := runWarden(t, r.Dir, nil, "", "review", "--dry-run", "--format", "json", "--skill", "code-review")
	if res.code != exitOK {
		t.Fatalf("uncommitted: exit %d, stderr:\n%s", res.code, res.stderr)
	}
	rep := decodeReport(t, res.stdout)
	if diff := cmp.Diff([]string{"app/server.go", "app/staged.go", "app/untracked.go"}, plannedPaths(rep)); diff != "" {
		t.Errorf("uncommitted plan paths (-want +got):\n%s", diff)
	}
	for _, it := range rep.Items {
		if it.Path == "app/server.go" && (it.StartLine > 32 || it.EndLine < 32) {
			t.Errorf("server.go item covers %d-%d, want it to include the changed line 32", it.StartLine, it.EndLine)
		}
	}

	// A feature branch with a rename, a binary change and an edit, against main.
	r.git("stash", "-u", "-q")
	r.git("checkout", "-q", "-b", "feature")
	r.git("mv", "app/old_name.go", "app/new_name.go")
	r.write("app/new_name.go", strings.Replace("package app\n\n"+numbered(30, "// mover"), "// mover line 5\n", "// mover line 5 edited\n", 1))
	r.write("logo.png", "\x89PNG\r\n\x1a\n\x00\x00other binary")
	r.write("docs/guide.md", "# Guide\n\nMore words.\n")
	r.git("add", "-A")
	r.git("commit", "-qm", "feature")
	r.write("app/server.go", "package app\n// uncommitted, not part of --base\n")

	res = runWarden(t, r.Dir, nil, "", "review", "--base", "main", "--dry-run", "--format", "json", "--skill", "code-review")
	if res.code != exitOK {
		t.Fatalf("--base main: exit %d, stderr:\n%s", res.code, res.stderr)
	}
	rep = decodeReport(t, res.stdout)
	if diff := cmp.Diff([]string{"app/new_name.go", "docs/guide.md"}, plannedPaths(rep)); diff != "" {
		t.Errorf("--base main plan paths (-want +got):\n%s", diff)
	}
	if got := ignoredReasons(rep); got["logo.png"] != "binary" {
		t.Errorf("ignored = %v, want logo.png as binary", got)
	}
	for _, it := range rep.Items {
		if it.Path == "app/new_name.go" && (it.StartLine > 7 || it.EndLine < 7) {
			t.Errorf("renamed file's item covers %d-%d, want the edited line 7", it.StartLine, it.EndLine)
		}
	}
}
