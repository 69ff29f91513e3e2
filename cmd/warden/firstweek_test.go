package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/internal/fakegithub"
	"github.com/org/warden/internal/fakeotlp"
	"github.com/org/warden/internal/testgit"
)

// A user's first week (issue 24): the rough edges a new user still hit.

// TestOutputErrorsNameThePath: --output naming a directory, a path whose
// directory is missing, or one under a file is one line naming the path as
// given and the problem, exit 2, no temporary name, nothing left behind;
// for review and for eval alike.
func TestOutputErrorsNameThePath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ output, want string }{
		{"out", "warden: --output out: is a directory, not a file\n"},
		{"out/", "warden: --output out/: is a directory, not a file\n"},
		{"nope/review.md", "warden: --output nope/review.md: its directory does not exist\n"},
		{"notes.txt/review.md", "warden: --output notes.txt/review.md: a parent is a file, not a directory\n"},
	}
	for _, c := range cases {
		res := runWarden(t, dir, nil, "", "review", "--diff", diff, "--dry-run", "--output", c.output)
		if res.code != exitUsage || res.stderr != c.want || res.stdout != "" {
			t.Errorf("review --output %s: exit %d, stderr %q; want 2 and %q", c.output, res.code, res.stderr, c.want)
		}
	}
	res := runWarden(t, shippedEval, nil, "", "eval", "--config", "warden.toml", "--skills", ".", "--skill", "synthetic-bugs",
		"--replay", "recording", "--output", filepath.Join(dir, "out"), "corpus")
	if want := "warden: --output " + filepath.Join(dir, "out") + ": is a directory, not a file\n"; res.code != exitUsage || res.stderr != want {
		t.Errorf("eval --output DIR: exit %d, stderr %q; want 2 and %q", res.code, res.stderr, want)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	all, _ := os.ReadDir(dir)
	for _, e := range all {
		if strings.HasPrefix(e.Name(), ".warden-report-") {
			t.Errorf("a temporary file was left behind: %s", e.Name())
		}
	}
	if len(entries) != 0 {
		t.Errorf("out/ holds %v; want nothing written", entries)
	}
}

// TestJSONItemsCarryReasonAndRoute: every item of the JSON report has the
// contract's reason and route (DESIGN.md §4, §5): "" and the route's name
// on a reviewed item, the class and the route on a failed one, "" on a
// planned one, answered from the results cache or not.
func TestJSONItemsCarryReasonAndRoute(t *testing.T) {
	t.Parallel()
	m := newFakeModel(t, "low")
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	env := m.env("sk-test")
	env["WARDEN_RESULTS_CACHE_DIR"] = filepath.Join(dir, "cache")
	for _, run := range []struct {
		name string
		args []string
		want map[string]any
	}{
		{"reviewed", []string{"--skill", "code-review"}, map[string]any{"status": "reviewed", "reason": "", "route": "env"}},
		{"cached", []string{"--skill", "code-review"}, map[string]any{"status": "reviewed", "reason": "", "route": "env"}},
		{"planned", []string{"--skill", "code-review", "--dry-run"}, map[string]any{"status": "planned", "reason": "", "route": ""}},
	} {
		res := runWarden(t, dir, env, "", append([]string{"review", "--diff", diff, "--format", "json"}, run.args...)...)
		if res.code != exitOK {
			t.Fatalf("%s: exit %d: %s", run.name, res.code, res.stderr)
		}
		var rep struct{ Items []map[string]any }
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil || len(rep.Items) == 0 {
			t.Fatalf("%s: %v, %d items", run.name, err, len(rep.Items))
		}
		for _, it := range rep.Items {
			got := map[string]any{"status": it["status"], "reason": it["reason"], "route": it["route"]}
			if _, ok := it["reason"]; !ok {
				got["reason"] = "(absent)"
			}
			if _, ok := it["route"]; !ok {
				got["route"] = "(absent)"
			}
			if diff := cmp.Diff(run.want, got); diff != "" {
				t.Errorf("%s: item %v (-want +got):\n%s", run.name, it["path"], diff)
			}
		}
	}
	m.status = 401
	res := runWarden(t, dir, env, "", "review", "--diff", diff, "--format", "json", "--skill", "security-review")
	rep := decodeReport(t, res.stdout)
	if len(rep.Items) == 0 || rep.Items[0].Reason != "auth" || rep.Items[0].Route != "env" {
		t.Errorf("failed items = %+v; want reason auth on route env", rep.Items)
	}
}

// TestSARIFNamesOddFiles: a change to files whose names are not UTF-8 or
// hold a newline, reviewed from git, gives SARIF locations whose URIs
// decode to exactly those names (files that exist in the checkout).
func TestSARIFNamesOddFiles(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	names := []string{"caf\xe9.go", "new\nline.go", "ok.go"}
	for _, n := range names {
		r.write(n, "package a\n")
	}
	r.Commit("first")
	for _, n := range names {
		r.write(n, "package a\n\nfunc F() int { return 1 }\n")
	}
	r.Commit("change")
	m := newFakeModel(t, "high")
	res := runWarden(t, r.Dir, m.env("k"), "", "review", "--base", "HEAD~1", "--format", "sarif", "--skill", "code-review", "--fail-on", "off")
	if res.code != exitOK {
		t.Fatalf("exit %d: %s", res.code, res.stderr)
	}
	var sarif struct {
		Runs []struct {
			Results []struct {
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string } `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &sarif); err != nil || len(sarif.Runs) != 1 {
		t.Fatalf("not SARIF: %v\n%s", err, res.stdout)
	}
	var got []string
	for _, x := range sarif.Runs[0].Results {
		uri := x.Locations[0].PhysicalLocation.ArtifactLocation.URI
		path, err := url.PathUnescape(uri)
		if err != nil {
			t.Errorf("URI %q: %v", uri, err)
		}
		if _, err := os.Stat(filepath.Join(r.Dir, path)); err != nil {
			t.Errorf("URI %q names no file of the checkout: %v", uri, err)
		}
		got = append(got, path)
	}
	slices.Sort(got)
	if want := []string{"caf\xe9.go", "new\nline.go", "ok.go"}; !slices.Equal(got, want) {
		t.Errorf("the SARIF locations name %q, want %q", got, want)
	}
}

// TestOTELErrorsAreWardenLines: warden run as a process, with the OTEL_*
// variables in its real environment where the OpenTelemetry SDK reads
// them: a value the SDK could not use is one warden line naming the
// variable, exit 2, before any model call, never a raw SDK log line; good
// values of the same variables export with nothing but warden's own lines
// on standard error.
func TestOTELErrorsAreWardenLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	diff := sampleDiff(t, dir)
	m := newFakeModel(t, "low")
	collector := fakeotlp.New(t)
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "WARDEN_RESULTS_CACHE=off",
		"WARDEN_BASE_URL=" + m.URL + "/v1", "WARDEN_MODEL=test-model", "WARDEN_API_KEY=k", "OTEL_EXPORTER_OTLP_ENDPOINT=" + collector.URL}
	for _, c := range []struct{ kv, want string }{
		{"OTEL_EXPORTER_OTLP_TIMEOUT=abc", `warden: OTEL_EXPORTER_OTLP_TIMEOUT: "abc" is not a whole number of milliseconds`},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE=" + filepath.Join(dir, "missing.pem"), "warden: OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read " + filepath.Join(dir, "missing.pem") + ": no such file or directory"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION=zstd", `warden: OTEL_EXPORTER_OTLP_COMPRESSION: "zstd" is not gzip or none`},
		{"OTEL_TRACES_SAMPLER=bogus", `warden: OTEL_TRACES_SAMPLER: "bogus" is not always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio`},
		{"OTEL_SDK_DISABLED=yes", `warden: OTEL_SDK_DISABLED: "yes" is not true or false`},
		{"OTEL_BSP_SCHEDULE_DELAY=soon", `warden: OTEL_BSP_SCHEDULE_DELAY: "soon" is not a whole number of milliseconds`},
	} {
		var stdout, stderr strings.Builder
		cmd := wardenProcess(dir, append(slices.Clone(base), c.kv), "review", "--diff", diff, "--skill", "code-review")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitUsage || stderr.String() != c.want+"\n" {
			t.Errorf("%s: %v, stderr:\n%s\nwant exit 2 and the one line %q", c.kv, err, stderr.String(), c.want)
		}
	}
	if n := m.calls(); n != 0 {
		t.Errorf("%d model calls with a bad telemetry configuration; want none", n)
	}
	good := append(slices.Clone(base), "OTEL_EXPORTER_OTLP_TIMEOUT=5000", "OTEL_EXPORTER_OTLP_COMPRESSION=gzip", "OTEL_BSP_SCHEDULE_DELAY=100",
		"OTEL_TRACES_SAMPLER=parentbased_always_on", "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=delta")
	var stderr strings.Builder
	cmd := wardenProcess(dir, good, "review", "--diff", diff, "--skill", "code-review")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("good configuration: %v\n%s", err, stderr.String())
	}
	for l := range strings.Lines(stderr.String()) {
		if !strings.HasPrefix(l, "warden: ") {
			t.Errorf("a line on standard error that is not warden's: %q", l)
		}
	}
	if len(collector.Spans()) == 0 || len(collector.Metrics()) == 0 {
		t.Errorf("the collector got %d spans and %d metrics; want the review's", len(collector.Spans()), len(collector.Metrics()))
	}
}

// shallowOrigin is a repository with a main branch of twelve commits and a
// feature branch that left it three commits before its tip, with two
// commits of its own: the shape of a pull request.
func shallowOrigin(t *testing.T) *gitRepo {
	t.Helper()
	r := newGitRepo(t)
	for i := range 12 {
		r.write("main.go", "package main\n\n"+numbered(i+1, "// main"))
		r.Commit(fmt.Sprintf("main %d", i))
	}
	r.git("checkout", "-q", "-b", "feature", "HEAD~3")
	for i := range 2 {
		r.write("feature.go", "package main\n\n"+numbered(i+1, "// feature"))
		r.Commit(fmt.Sprintf("feature %d", i))
	}
	r.git("checkout", "-q", "main")
	return r
}

// clone clones origin into a new directory with git's extra arguments and
// checks out branch.
func clone(t *testing.T, origin *gitRepo, branch string, args ...string) *gitRepo {
	t.Helper()
	ws := &gitRepo{testgit.New(t)}
	ws.git("remote", "add", "origin", "file://"+origin.Dir)
	ws.git(append([]string{"fetch", "-q"}, args...)...)
	ws.git("checkout", "-q", "-b", branch, "origin/"+branch)
	return ws
}

// TestShallowBaseExplained: --base in a shallow clone (git clone --depth
// 1, the Actions checkout's default) says that the history is missing and
// how to fetch it, for a base outside the clone and for one whose common
// ancestor was not fetched; following the advice makes the same command
// work.
func TestShallowBaseExplained(t *testing.T) {
	t.Parallel()
	origin := shallowOrigin(t)
	both := clone(t, origin, "feature", "--depth", "1", "origin", "+refs/heads/*:refs/remotes/origin/*")
	res := runWarden(t, both.Dir, nil, "", "review", "--base", "origin/main", "--dry-run")
	for _, want := range []string{"warden: --base origin/main: ", "no common ancestor of origin/main and HEAD", "this is a shallow clone",
		"git fetch --deepen=", "git fetch --unshallow", "fetch-depth: 0"} {
		if res.code != exitUsage || !strings.Contains(res.stderr, want) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("--base origin/main in a depth-1 clone: exit %d, stderr %q; want 2 and one line saying %q", res.code, res.stderr, want)
		}
	}
	both.git("fetch", "-q", "--deepen=100")
	if res := runWarden(t, both.Dir, nil, "", "review", "--base", "origin/main", "--dry-run", "--format", "json"); res.code != exitOK ||
		len(decodeReport(t, res.stdout).Items) == 0 {
		t.Errorf("after git fetch --deepen=100: exit %d, stderr %q; want the plan", res.code, res.stderr)
	}

	single := clone(t, origin, "feature", "--depth", "1", "origin", "feature:refs/remotes/origin/feature")
	res = runWarden(t, single.Dir, nil, "", "review", "--base", "main", "--dry-run")
	fix := "git fetch --unshallow origin main:refs/remotes/origin/main, then --base origin/main"
	for _, want := range []string{`warden: --base main: no revision "main" in this clone, which is shallow`, fix, "fetch-depth: 0"} {
		if res.code != exitUsage || !strings.Contains(res.stderr, want) || strings.Count(res.stderr, "\n") != 1 {
			t.Errorf("--base main in a single-branch depth-1 clone: exit %d, stderr %q; want 2 and one line saying %q", res.code, res.stderr, want)
		}
	}
	single.git("fetch", "-q", "--unshallow", "origin", "main:refs/remotes/origin/main")
	if res := runWarden(t, single.Dir, nil, "", "review", "--base", "origin/main", "--dry-run", "--format", "json"); res.code != exitOK ||
		len(decodeReport(t, res.stdout).Items) == 0 {
		t.Errorf("after %s: exit %d, stderr %q; want the plan", fix, res.code, res.stderr)
	}

	// A full clone with unrelated histories: no common ancestor, and not for want of history.
	full := newGitRepo(t)
	full.write("a.go", "package a\n")
	full.Commit("a")
	full.git("checkout", "-q", "--orphan", "other")
	full.write("b.go", "package b\n")
	full.Commit("b")
	res = runWarden(t, full.Dir, nil, "", "review", "--base", "main", "--dry-run")
	if want := "warden: --base main: main and HEAD have no common ancestor (unrelated histories)\n"; res.code != exitUsage || res.stderr != want {
		t.Errorf("--base of an unrelated history: exit %d, stderr %q; want %q", res.code, res.stderr, want)
	}
	res = runWarden(t, full.Dir, nil, "", "review", "--base", "mian", "--dry-run")
	if want := "warden: --base mian: no branch, tag or commit \"mian\" in this repository\n"; res.code != exitUsage || res.stderr != want {
		t.Errorf("--base of a revision a repository without a remote lacks: exit %d, stderr %q; want %q", res.code, res.stderr, want)
	}
}

// TestActionFetchesShallowHistoryWithToken: the Action in the checkout
// GitHub's default gives (the head alone, fetch-depth: 1) of a private
// repository whose checkout kept no credential (persist-credentials:
// false) fetches what it needs itself with the github-token, from a git
// server that refuses anyone without it: the base revision (its
// configuration applies) and history down to the merge base, not the
// repository's whole history; the change comes from the checkout, not the
// files API, the log says what was fetched, and the token is nowhere in
// what warden wrote.
func TestActionFetchesShallowHistoryWithToken(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "medium")
	const history = 300
	longHistory(t, h.repo, history)
	h.commitBase(map[string]string{"warden.toml": "[review]\nfail_on = \"medium\"\n"})
	token := h.env["INPUT_GITHUB_TOKEN"]
	srv := testgit.Serve(t, h.repo.Repo, token)
	ws := &gitRepo{testgit.New(t)}
	ws.git("remote", "add", "origin", srv.URL+"/"+h.repo.Name())
	auth := "http.extraheader=AUTHORIZATION: basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	ws.git("-c", auth, "fetch", "-q", "--depth", "1", "origin", h.pr.HeadSHA)
	ws.git("checkout", "-q", "--detach", h.pr.HeadSHA)
	if n := strings.TrimSpace(ws.git("rev-list", "--count", "--all")); n != "1" {
		t.Fatalf("the checkout has %s commits, want 1", n)
	}
	h.env["GITHUB_WORKSPACE"] = ws.Dir
	h.env["GITHUB_SERVER_URL"] = srv.URL

	res := h.run(context.Background())
	if res.code != exitFindings || !strings.Contains(res.stderr, "of the base revision") {
		t.Errorf("exit %d, want %d with the base revision's fail_on; stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	if n := len(h.gh.RequestsTo(fakegithub.RouteListFiles)); n != 0 {
		t.Errorf("the files API was used (%d requests): the checkout did not give the change; stderr:\n%s", n, res.stderr)
	}
	if srv.Authorized.Load() == 0 || srv.Denied.Load() != 0 {
		t.Errorf("git server: %d requests with the token, %d refused", srv.Authorized.Load(), srv.Denied.Load())
	}
	n, _ := strconv.Atoi(strings.TrimSpace(ws.git("rev-list", "--count", "--all")))
	t.Logf("the checkout holds %d of the %d commits after the review", n, history+3)
	if n >= history/2 {
		t.Errorf("the checkout holds %d commits after the review: the history was fetched whole, not down to the merge base", n)
	}
	if !strings.Contains(res.stderr, "warden: the checkout is shallow: fetched history 50 commits deeper to find where the pull request left its base") {
		t.Errorf("the log does not say what was fetched:\n%s", res.stderr)
	}
	// The runner masks what follows an ::add-mask:: line: that one line may name it.
	stdout := strings.ReplaceAll(res.stdout, "::add-mask::"+token+"\n", "")
	for what, s := range map[string]string{"stdout": stdout, "stderr": res.stderr, "summary": h.summary()} {
		if strings.Contains(s, token) {
			t.Errorf("the token is in the %s", what)
		}
	}
}

// longHistory adds n empty commits to r's main branch, in one git
// fast-import.
func longHistory(t *testing.T, r *gitRepo, n int) {
	t.Helper()
	parent := strings.TrimSpace(r.git("rev-parse", "main"))
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "commit refs/heads/main\ncommitter T <t@example.com> %d +0000\ndata <<EOM\nhistory %d\nEOM\n", 1700000000+i, i)
		if i == 0 {
			fmt.Fprintf(&b, "from %s\n", parent)
		}
		b.WriteString("\n")
	}
	cmd := exec.Command("git", "-C", r.Dir, "fast-import", "--quiet")
	cmd.Env = testgit.Env(r.Dir)
	cmd.Stdin = strings.NewReader(b.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git fast-import: %v\n%s", err, out)
	}
}
