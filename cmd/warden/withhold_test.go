package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/internal/fakeotlp"
	"github.com/org/warden/internal/testsecret"
)

// planted are the secrets of a change under test, by name, each with the
// parts that must never appear anywhere warden writes or sends (a key
// block's every body line).
type planted map[string][]string

func (p planted) add(name, secret string) {
	for _, line := range strings.Split(strings.TrimSpace(secret), "\n") {
		if !strings.HasPrefix(line, "-----") { // the armour lines are no secret
			p[name] = append(p[name], line)
		}
	}
}

// leaks lists where a planted secret appears in data.
func (p planted) leaks(where string, data []byte) []string {
	var out []string
	for name, parts := range p {
		for _, part := range parts {
			if bytes.Contains(data, []byte(part)) {
				out = append(out, fmt.Sprintf("the %s appears in %s", name, where))
				break
			}
		}
	}
	return out
}

// echoModel answers every request with one finding on the first line it
// may report on, whose description quotes the request's whole user message:
// whatever a prompt carries reaches every report, so a secret in a prompt
// would show in them.
func echoModel(t *testing.T) *fakeModel {
	m := newFakeModel(t, "low")
	m.script.Default = func(req fakeopenai.Request) fakeopenai.Answer {
		sub := linesRE.FindStringSubmatch(req.Prompt())
		line := 1
		if sub != nil {
			fmt.Sscan(sub[1], &line)
		}
		user := req.Prompt()
		b, _ := json.Marshal(map[string]any{"findings": []map[string]any{{
			"severity": "low", "title": "Echo", "description": "The request said:\n" + user[max(0, len(user)-3900):],
			"start_line": line, "end_line": line, "suggestion": "", "confidence": 0.5,
		}}})
		return fakeopenai.Answer{Content: string(b)}
	}
	return m
}

// secretChange writes to repo's working tree a change that holds secrets:
// an untracked .env holding the configured model key (and a password), an
// untracked id_ed25519, and a source file whose changed lines paste a
// cloud key, a token of a well-known shape and a private key block.
func secretChange(repo *gitRepo, modelKey string) planted {
	p := planted{}
	aws, pat, pemKey, ssh := testsecret.AWSAccessKey(11), testsecret.GitHubToken(12), testsecret.PKCS8Key(), testsecret.OpenSSHKey(13)
	password := "DB_PASSWORD=" + testsecret.ModelKey(14)[6:30]
	p.add("model key", modelKey)
	p.add("cloud key", aws)
	p.add("GitHub token", pat)
	p.add("PEM key", pemKey)
	p.add("SSH key", ssh)
	p.add(".env password", password)
	repo.write(".env", "# local settings\nWARDEN_API_KEY="+modelKey+"\n"+password+"\n")
	repo.write("id_ed25519", ssh)
	src := "package app\n\n" + numbered(30, "// config")
	src = strings.Replace(src, "// config line 10\n", "// config line 10\nvar awsID = \""+aws+"\"\nvar token = \""+pat+"\"\nconst signingKey = `\n"+pemKey+"`\n", 1)
	repo.write("app/config.go", src)
	return p
}

// TestReviewWithholdsSecrets is issue 20's acceptance for `warden review`:
// a working tree with an untracked .env that holds the configured key, an
// id_ed25519, and secrets pasted into changed source lines. Nothing of any
// of them reaches a request (the fake model's received bodies), standard
// output or error (every format, the dry run, -v) or a telemetry export;
// the two files are reported withheld, each secret is a finding of skill
// secrets, and the prompt carries placeholders, which the echoing model
// copies into the reports (so the scan is not vacuous).
func TestReviewWithholdsSecrets(t *testing.T) {
	t.Parallel()
	repo := newGitRepo(t)
	repo.write("app/config.go", "package app\n\n"+numbered(30, "// config"))
	repo.git("add", "-A")
	repo.git("commit", "-qm", "base")
	modelKey := testsecret.ModelKey(10)
	secret := secretChange(repo, modelKey)

	model := echoModel(t)
	collector := fakeotlp.New(t)
	env := model.env(modelKey)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL

	var leaks []string
	check := func(where string, data []byte) { leaks = append(leaks, secret.leaks(where, data)...) }
	var jsonOut string
	for _, args := range [][]string{
		{"review", "--skill", "code-review", "--format", "json"},
		{"review", "--skill", "code-review", "--format", "text", "-v"},
		{"review", "--skill", "code-review", "--format", "markdown"},
		{"review", "--skill", "code-review", "--format", "sarif"},
		{"review", "--skill", "code-review", "--dry-run", "--format", "text"},
		{"review", "--skill", "code-review", "--dry-run", "--format", "json"},
	} {
		res := runWarden(t, repo.Dir, env, "", args...)
		dry := slices.Contains(args, "--dry-run")
		if want := map[bool]int{false: exitFindings, true: exitOK}[dry]; res.code != want {
			t.Fatalf("warden %s: exit %d, want %d; stderr:\n%s", strings.Join(args, " "), res.code, want, res.stderr)
		}
		check("the stdout of warden "+strings.Join(args, " "), []byte(res.stdout))
		check("the stderr of warden "+strings.Join(args, " "), []byte(res.stderr))
		if !strings.Contains(res.stdout, "never sent to a model") && !strings.Contains(res.stdout, `"reason": "secret:dotenv"`) && args[len(args)-1] != "sarif" {
			t.Errorf("warden %s does not say what was withheld:\n%s", strings.Join(args, " "), res.stdout)
		}
		if args[len(args)-1] == "json" && !dry {
			jsonOut = res.stdout
		}
	}
	model.mu.Lock()
	prompts := slices.Clone(model.requests)
	model.mu.Unlock()
	if len(prompts) == 0 {
		t.Fatal("no request reached the model: the scan proves nothing")
	}
	for i, req := range prompts {
		b, _ := json.Marshal(req)
		check(fmt.Sprintf("request %d to the model", i), b)
		if !bytes.Contains(b, []byte("[secret withheld: aws-access-token]")) || !bytes.Contains(b, []byte("[secret withheld: private-key]")) {
			t.Errorf("request %d has no placeholder for the pasted secrets:\n%s", i, b)
		}
	}
	if len(collector.Raw()) == 0 {
		t.Fatal("no telemetry was exported: the scan proves nothing")
	}
	for i, p := range collector.Raw() {
		check(fmt.Sprintf("OTLP payload %d", i), p)
	}
	for _, l := range leaks {
		t.Error(l)
	}

	var rep struct {
		Findings []struct{ Skill, Severity, Title, Path, Description string } `json:"findings"`
		Ignored  []struct{ Path, Reason string }                              `json:"ignored"`
		Redacted []struct{ Path, Rule, Where string }                         `json:"redacted"`
	}
	if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, jsonOut)
	}
	withheld := map[string]string{}
	for _, ig := range rep.Ignored {
		if strings.HasPrefix(ig.Reason, "secret:") {
			withheld[ig.Path] = ig.Reason
		}
	}
	if want := map[string]string{".env": "secret:dotenv", "id_ed25519": "secret:private-key"}; fmt.Sprint(withheld) != fmt.Sprint(want) {
		t.Errorf("withheld files = %v, want %v", withheld, want)
	}
	got := map[string]bool{}
	echoed := false
	for _, f := range rep.Findings {
		if f.Skill == "secrets" {
			got[f.Path+": "+f.Title+" ("+f.Severity+")"] = true
		}
		echoed = echoed || strings.Contains(f.Description, "[secret withheld: github-pat]")
	}
	for _, want := range []string{
		".env: Secret in the change: the value of WARDEN_API_KEY (high)",
		"id_ed25519: Secret in the change: private-key (high)",
		"app/config.go: Secret in the change: aws-access-token (high)",
		"app/config.go: Secret in the change: github-pat (high)",
		"app/config.go: Secret in the change: private-key (high)",
	} {
		if !got[want] {
			t.Errorf("no finding %q; the secrets' findings are %v", want, got)
		}
	}
	if !echoed {
		t.Errorf("no finding echoes the prompt's placeholder: the model's answers never reach the report, and the scan proves nothing")
	}
	if len(rep.Redacted) < 3 {
		t.Errorf("redacted = %+v, want the three pasted secrets", rep.Redacted)
	}
}

// TestActionWithholdsSecrets is the same through the Action, for a pull
// request that adds the .env (holding the configured model key), the
// id_ed25519 and the pasted secrets: nothing of them in a request to the
// model, a request to GitHub (the check run, the review and its comments),
// the job summary, the step outputs, the report file, the log or a
// telemetry export; the check run's summary says what was withheld and the
// secrets are findings.
func TestActionWithholdsSecrets(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "low")
	h.model = echoModel(t)
	h.env["WARDEN_BASE_URL"] = h.model.URL + "/v1"
	modelKey := h.env["WARDEN_API_KEY"]
	collector := fakeotlp.New(t)
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL
	secret := secretChange(h.repo, modelKey)
	h.repo.git("add", "-A")
	h.repo.git("commit", "-qm", "add settings")
	h.refreshPR()
	h.event("synchronize", nil)

	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("exit %d, want %d (the secrets are high findings); stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	var leaks []string
	check := func(where string, data []byte) { leaks = append(leaks, secret.leaks(where, data)...) }
	var logged []string
	for _, l := range strings.Split(res.stdout, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			logged = append(logged, l)
		}
	}
	check("stdout", []byte(strings.Join(logged, "\n")))
	check("stderr", []byte(res.stderr))
	out := h.outputs()
	for name, path := range map[string]string{"the report file": out["report-file"], "the job summary": h.env["GITHUB_STEP_SUMMARY"], "the step outputs": h.env["GITHUB_OUTPUT"]} {
		data, err := os.ReadFile(path)
		if err != nil || len(data) == 0 {
			t.Fatalf("%s %q: %v (empty: %t)", name, path, err, len(data) == 0)
		}
		check(name, data)
	}
	for i, r := range h.gh.Requests() {
		check(fmt.Sprintf("GitHub request %d (%s %s)", i, r.Method, r.Path), r.Body)
	}
	h.model.mu.Lock()
	prompts := slices.Clone(h.model.requests)
	h.model.mu.Unlock()
	if len(prompts) == 0 || len(collector.Raw()) == 0 {
		t.Fatalf("%d requests to the model, %d telemetry exports: the scan proves nothing", len(prompts), len(collector.Raw()))
	}
	for i, req := range prompts {
		b, _ := json.Marshal(req)
		check(fmt.Sprintf("request %d to the model", i), b)
	}
	for i, p := range collector.Raw() {
		check(fmt.Sprintf("OTLP payload %d", i), p)
	}
	for _, l := range leaks {
		t.Error(l)
	}
	cr := h.checkRun()
	for _, want := range []string{"2 files never sent to a model", ".env (dotenv)", "id\\_ed25519 (private-key)"} {
		if !strings.Contains(cr.Summary, want) {
			t.Errorf("the check run's summary does not say %q:\n%s", want, cr.Summary)
		}
	}
	comments := 0
	for _, c := range h.gh.ReviewComments(testPR) {
		if strings.Contains(c.Body, "Secret in the change") {
			comments++
		}
	}
	if comments < 5 {
		t.Errorf("%d review comments about secrets, want one per secret (5)", comments)
	}
}

// TestActionWithholdsRenamedSecretFile: a pull request that renames
// deploy/.env to deploy/env.txt (and edits a line of it) sends nothing of
// it to the model: its new name says nothing, its old one makes it a
// secret by name. The low-entropy password on a context line, which no
// content rule knows, is in no request, and the check run's summary says
// the file was withheld, naming both paths.
func TestActionWithholdsRenamedSecretFile(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "low")
	h.model = echoModel(t)
	h.env["WARDEN_BASE_URL"] = h.model.URL + "/v1"
	password := testsecret.Password(21)
	env := "SMTP_HOST=mail.example.com\nSMTP_USER=deploy\nSMTP_PASS=" + password + "\nSMTP_PORT=587\n"
	h.commitBase(map[string]string{"deploy/.env": env})
	h.repo.git("mv", "deploy/.env", "deploy/env.txt")
	h.commitHead(map[string]string{"deploy/env.txt": strings.Replace(env, "SMTP_PORT=587", "SMTP_PORT=2525", 1)})
	if diff := h.repo.git("diff", "-M", "main", "feature", "--", "deploy"); !strings.Contains(diff, "rename from deploy/.env") {
		t.Fatalf("the pull request does not rename deploy/.env:\n%s", diff)
	}

	if res := h.run(context.Background()); res.code > exitFindings {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	h.model.mu.Lock()
	prompts := slices.Clone(h.model.requests)
	h.model.mu.Unlock()
	if len(prompts) == 0 {
		t.Fatal("no request to the model: the scan proves nothing")
	}
	for i, req := range prompts {
		if b, _ := json.Marshal(req); bytes.Contains(b, []byte(password)) || bytes.Contains(b, []byte("SMTP_")) {
			t.Errorf("request %d to the model holds the renamed .env's lines", i)
		}
	}
	cr := h.checkRun()
	if want := "1 file never sent to a model, secrets by its name: deploy/env.txt (dotenv, by its name before the rename, deploy/.env)"; !strings.Contains(cr.Summary, want) {
		t.Errorf("the check run's summary does not say %q:\n%s", want, cr.Summary)
	}
	if strings.Contains(cr.Summary, password) {
		t.Errorf("the check run's summary holds the password")
	}
}
