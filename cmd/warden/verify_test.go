package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/org/warden/internal/evalmodel"
	"github.com/org/warden/review"
)

// TestVerifyEndToEnd: `warden review` with [review] verify against a
// loopback model that flags every line and, as verifier, confirms only the
// loop bound past the end: the report shows the confirmed finding only,
// counts the two rejected, and says what verification did; with required
// and a verify_route that cannot answer, the findings stay, not verified,
// and the review is partial (exit 3). Bad settings are one line, exit 2.
func TestVerifyEndToEnd(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(evalmodel.New())
	defer srv.Close()
	r := newGitRepo(t)
	r.write(".warden/skills/every/SKILL.md", "---\nname: every\ndescription: Flags every line (a test skill).\n---\n\nReport a finding on every line of the change.\n")
	r.write("sum.go", "package sum\n\nfunc Sum(xs []int) int {\n\treturn 0\n}\n")
	route := "[[routes]]\nname = \"main\"\nbase_url = \"" + srv.URL + "/v1\"\nmodel = \"m\"\napi_key_env = \"K\"\n\n" +
		"[[routes]]\nname = \"dead\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\napi_key_env = \"K\"\n"
	r.write("warden.toml", "[review]\nverify = \"auto\"\n\n"+route)
	r.git("add", "-A")
	r.Commit("sum")
	r.write("sum.go", "package sum\n\nfunc Sum(xs []int) int {\n\ttotal := 0\n\tfor i := 0; i <= len(xs); i++ {\n\t\ttotal += xs[i]\n\t}\n\treturn total\n}\n")
	env := map[string]string{"K": "sk-verify"}

	res := runWarden(t, r.Dir, env, "", "review", "--skill", "every", "--format", "json", "--fail-on", "off")
	var rep review.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s", res.code, err, res.stderr)
	}
	if res.code != exitOK || len(rep.Findings) != 1 || rep.Findings[0].StartLine != 5 || rep.Findings[0].Verification != review.Verified {
		t.Fatalf("exit %d, findings %+v; want the loop bound only, verified", res.code, rep.Findings)
	}
	if v := rep.Verification; v == nil || v.Rejected != 4 || rep.Summary.FindingsDropped.Rejected != 4 || len(v.RejectedFindings) != 4 {
		t.Errorf("verification %+v, dropped %+v; want 4 rejected", rep.Verification, rep.Summary.FindingsDropped)
	}
	text := runWarden(t, r.Dir, env, "", "review", "--skill", "every", "--fail-on", "off")
	if !strings.Contains(text.stdout, "verification (auto): 1 verified, 4 rejected and not shown, 0 not verified") {
		t.Errorf("the text report does not say what verification did:\n%s", text.stdout)
	}

	// (warden.toml is now part of the change: 5 more findings. A dead
	// verifier on its last route would be waited for the outage patience,
	// by default the item budget: 1 s here.)
	r.write("warden.toml", "[review]\nverify = \"required\"\nverify_route = \"dead\"\n[retry]\nmax_per_route = 0\noutage_patience = \"1s\"\n\n"+route)
	req := runWarden(t, r.Dir, env, "", "review", "--skill", "every", "--fail-on", "off")
	if req.code != exitIncomplete || !strings.Contains(req.stdout, "0 verified, 0 rejected and not shown, 10 not verified") {
		t.Errorf("required, dead verifier: exit %d, want 3\n%s\n%s", req.code, req.stdout, req.stderr)
	}

	for _, tt := range []struct{ toml, want string }{
		{"[review]\nverify = \"maybe\"\n", "review.verify"},
		{"[review]\nverify_route = \"main\"\n", "review.verify_route"},
		{"[review]\nverify = \"auto\"\nverify_route = \"nope\"\n" + route, `no route named "nope"`},
	} {
		r.write("warden.toml", tt.toml)
		bad := runWarden(t, r.Dir, env, "", "review", "--skill", "every")
		if bad.code != exitUsage || !strings.Contains(bad.stderr, tt.want) || strings.Count(bad.stderr, "\n") > 2 {
			t.Errorf("%q: exit %d, %q; want 2 naming %s", tt.toml, bad.code, bad.stderr, tt.want)
		}
	}
}

// TestVerifyInDryRun: a dry run says what verification would do, in the
// plan's text and Markdown and in the JSON report, with the route it would
// run on.
func TestVerifyInDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	cfg := "[review]\nverify = \"required\"\nverify_route = \"strong\"\n\n[[routes]]\nname = \"strong\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n"
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "verification (required) would run after the review: one request per chunk with findings, on route strong, when 2 × its deadline is left"
	for _, format := range []string{"text", "markdown"} {
		res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--format", format)
		if res.code != exitOK || !strings.Contains(res.stdout, want) {
			t.Errorf("%s dry run: exit %d, does not say %q:\n%s", format, res.code, want, res.stdout)
		}
	}
	res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--format", "json")
	var rep review.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || rep.Verification == nil || rep.Verification.Mode != review.VerifyRequired || rep.Verification.Ran {
		t.Errorf("JSON dry run: %v, verification %+v", err, rep.Verification)
	}
}
