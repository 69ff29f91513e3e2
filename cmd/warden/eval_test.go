package main

import (
	"cmp"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/org/warden/eval"
	"github.com/org/warden/internal/evalmodel"
	"github.com/org/warden/internal/testgit"
)

// shippedEval is the synthetic mechanics corpus, its skill and its
// recording.
var shippedEval, _ = filepath.Abs("../../testdata/eval")

// scriptedServer is the scripted test reviewer on loopback, and dir's
// warden.toml naming it as the route "scripted" (model
// scripted-reviewer, key in EVAL_KEY); the server closes with the test.
func scriptedServer(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(evalmodel.New())
	t.Cleanup(srv.Close)
	cfg := "[[routes]]\nname = \"scripted\"\nbase_url = \"" + srv.URL + "/v1\"\nmodel = \"scripted-reviewer\"\napi_key_env = \"EVAL_KEY\"\n"
	if err := os.WriteFile(filepath.Join(dir, "warden.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestEvalReplayShippedCorpus is what CI runs: the shipped recording
// replayed with no model and no key, the same output twice, labelled
// replayed and synthetic, in every format.
func TestEvalReplayShippedCorpus(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json", "markdown"} {
		args := []string{"eval", "--config", "warden.toml", "--skills", ".", "--skill", "synthetic-bugs", "--replay", "recording", "--format", format, "corpus"}
		first := runWarden(t, shippedEval, nil, "", args...)
		second := runWarden(t, shippedEval, nil, "", args...)
		if first.code != exitOK || first.stderr != "" {
			t.Fatalf("warden %s = exit %d, stderr %q; want 0 and nothing", strings.Join(args, " "), first.code, first.stderr)
		}
		if first.stdout != second.stdout {
			t.Errorf("--format %s: two replays differ:\n%s\n---\n%s", format, first.stdout, second.stdout)
		}
		for _, want := range []string{"replayed", "not a measure of any model", "recall 67% (2/3)", "noise 16.7 per 100 clean lines"} {
			if format == "text" && !strings.Contains(first.stdout, want) {
				t.Errorf("text output lacks %q:\n%s", want, first.stdout)
			}
		}
		if format == "json" && !strings.Contains(first.stdout, `"mode": "replayed"`) {
			t.Errorf("JSON output is not labelled replayed:\n%s", first.stdout)
		}
	}
}

// TestEvalBaselineCatchesBrokenSkill records the good skill and the
// deliberately broken one (a finding on every line) against a scripted
// reviewer over loopback, then replays both: the good one passes its own
// baseline, the broken one fails it with exit 1.
func TestEvalBaselineCatchesBrokenSkill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := scriptedServer(t, dir)
	env := map[string]string{"EVAL_KEY": "sk-eval-DO-NOT-PRINT"}
	corpus := filepath.Join(shippedEval, "corpus")
	rec := filepath.Join(dir, "rec")
	good := runWarden(t, dir, env, "", "eval", "--skills", shippedEval, "--skill", "synthetic-bugs", "--record", rec, "--format", "json", "--output", "base.json", corpus)
	broken := runWarden(t, dir, env, "", "eval", "--skills", filepath.Join(shippedEval, "broken"), "--skill", "synthetic-bugs", "--record", rec, corpus)
	if good.code != exitOK || broken.code != exitOK {
		t.Fatalf("recording: exit %d (%s), %d (%s)", good.code, good.stderr, broken.code, broken.stderr)
	}
	if !strings.Contains(broken.stdout, "live, recorded (answers by route scripted, model scripted-reviewer)") {
		t.Errorf("a recording run is not labelled live and recorded:\n%s", broken.stdout)
	}
	srv.Close() // the replays must not need it
	same := runWarden(t, dir, nil, "", "eval", "--skills", shippedEval, "--skill", "synthetic-bugs", "--replay", rec, "--baseline", "base.json", corpus)
	if same.code != exitOK || !strings.Contains(same.stdout, "no regression") {
		t.Errorf("good skill against its own baseline: exit %d\n%s%s", same.code, same.stdout, same.stderr)
	}
	bad := runWarden(t, dir, nil, "", "eval", "--skills", filepath.Join(shippedEval, "broken"), "--skill", "synthetic-bugs", "--replay", rec, "--baseline", "base.json", corpus)
	if bad.code != exitFindings || !strings.Contains(bad.stdout, "REGRESSION synthetic-bugs on scripted (scripted-reviewer): noise_per_100_lines rose by") {
		t.Errorf("broken skill against the baseline: exit %d, want 1\n%s%s", bad.code, bad.stdout, bad.stderr)
	}
	for _, r := range []result{good, broken, same, bad} {
		if strings.Contains(r.stdout+r.stderr, "DO-NOT-PRINT") {
			t.Errorf("the key is in the output")
		}
	}
}

// TestEvalBadInput: each mistake is one line naming the input, exit 2.
func TestEvalBadInput(t *testing.T) {
	t.Parallel()
	broken := t.TempDir()
	for _, f := range []string{"case.toml", "change.diff", "files/stats/sum.go"} {
		b, err := os.ReadFile(filepath.Join(shippedEval, "corpus/go-loop-bound", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "files/stats/sum.go" {
			b = []byte(strings.Replace(string(b), "i <= len(xs)", "i < len(xs)", 1))
		}
		os.MkdirAll(filepath.Dir(filepath.Join(broken, f)), 0o755)
		if err := os.WriteFile(filepath.Join(broken, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unknown := t.TempDir()
	os.WriteFile(filepath.Join(unknown, "case.toml"), []byte("sevrity = 1\n"), 0o644)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no corpus", []string{"eval", "--replay", "recording"}, "eval: no corpus"},
		{"both modes", []string{"eval", "--replay", "a", "--record", "b", "corpus"}, "cannot be used together"},
		{"sarif", []string{"eval", "--format", "sarif", "corpus"}, `--format "sarif"`},
		{"missing replay dir", []string{"eval", "--config", "warden.toml", "--skills", ".", "--replay", "nope", "corpus"}, "--replay " + filepath.Join(shippedEval, "nope") + ": not a directory"},
		{"diff not against files", []string{"eval", "--config", "warden.toml", "--skills", ".", "--replay", "recording", broken}, "change.diff line 6 does not match files/stats/sum.go"},
		{"unknown key", []string{"eval", "--config", "warden.toml", "--replay", "recording", unknown}, "case.toml"},
		{"no case", []string{"eval", "--config", "warden.toml", "--replay", "recording", "recording"}, "no case"},
		{"baseline not a result", []string{"eval", "--config", "warden.toml", "--replay", "recording", "--baseline", "warden.toml", "corpus"}, "baseline"},
	}
	for _, tt := range tests {
		r := runWarden(t, shippedEval, nil, "", tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 3 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", tt.name, r.code, r.stderr, tt.want)
		}
	}
}

// TestEvalPointerCorpus: a pointer corpus whose repository URL git maps
// to a local bare repository through url.<base>.insteadOf in git's own
// configuration (GIT_CONFIG_GLOBAL, given to git only): warden eval
// fetches and materialises every case, records against the scripted
// reviewer, and two replays print the same scores; a commit the
// repository lacks is exit 2 naming the case and the commit.
func TestEvalPointerCorpus(t *testing.T) {
	t.Parallel()
	r := testgit.New(t)
	r.Write("stats/sum.go", "package stats\n\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n")
	base := r.Commit("sum")
	r.Write("stats/sum.go", "package stats\n\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor i := 0; i <= len(xs); i++ {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n")
	intro := r.Commit("index")
	r.Write("stats/sum.go", "package stats\n\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor i := 0; i < len(xs); i++ {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n")
	fix := r.Commit("bound")
	const url = "https://git.example.invalid/acme/stats.git"
	gitEnv := testgit.InsteadOf(t, map[string]string{url: r.Bare()}, "")
	dir := t.TempDir()
	corpus := fmt.Sprintf("[[cases]]\nname = \"loop\"\nrepository = %q\nlicense = \"MIT\"\nlanguage = \"go\"\ncommit = %q\nparent = %q\nfix = %q\n"+
		"description = \"the index loop reads one element past the end\"\n[[cases.findings]]\npath = \"stats/sum.go\"\nstart_line = 5\nend_line = 6\ncategory = \"bug\"\nseverity = \"high\"\n",
		url, intro, base, fix)
	if err := os.WriteFile(filepath.Join(dir, "acme.toml"), []byte(corpus), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := strings.Replace(corpus, fix, strings.Repeat("0", 40), 1)
	if err := os.WriteFile(filepath.Join(dir, "missing.toml"), []byte(missing), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := scriptedServer(t, dir)
	env := map[string]string{"EVAL_KEY": "sk-eval", "WARDEN_EVAL_CACHE_DIR": filepath.Join(dir, "cache")}
	for _, kv := range gitEnv {
		if k, v, _ := strings.Cut(kv, "="); k == "GIT_CONFIG_GLOBAL" || k == "GIT_CONFIG_NOSYSTEM" || k == "HOME" {
			env[k] = v
		}
	}
	skills := []string{"--skills", shippedEval, "--skill", "synthetic-bugs"}
	rec := runWarden(t, dir, env, "", append(append([]string{"eval"}, skills...), "--record", "rec", "acme.toml")...)
	if rec.code != exitOK || !strings.Contains(rec.stderr, "warden: eval: case acme/loop: fetched 3 commits from "+url) || !strings.Contains(rec.stdout, "recall 100% (1/1)") {
		t.Fatalf("record: exit %d\n%s%s", rec.code, rec.stdout, rec.stderr)
	}
	srv.Close()
	args := append(append([]string{"eval"}, skills...), "--replay", "rec", "--format", "json", "acme.toml")
	first, second := runWarden(t, dir, env, "", args...), runWarden(t, dir, env, "", args...)
	if first.code != exitOK || first.stdout != second.stdout || first.stderr != "" || !strings.Contains(first.stdout, `"commit": "`+intro+`"`) {
		t.Errorf("replays: exit %d, %d; stderr %q; same output %v\n%s", first.code, second.code, first.stderr, first.stdout == second.stdout, first.stdout)
	}
	bad := runWarden(t, dir, env, "", append(append([]string{"eval"}, skills...), "--replay", "rec", "missing.toml")...)
	if bad.code != exitUsage || !strings.Contains(bad.stderr, "case missing/loop: fix "+strings.Repeat("0", 40)+" is not in "+url) {
		t.Errorf("a missing commit: exit %d, stderr %q; want 2 naming the case and the commit", bad.code, bad.stderr)
	}
}

// TestEvalPublicCorpus runs `warden eval` over the shipped corpus of
// public changes as a user would, with git's own configuration (set
// GIT_CONFIG_GLOBAL to a file of url.<base>.insteadOf lines for local
// mirrors): every case is fetched and materialised, a recording against
// the scripted test reviewer over loopback, then two replays print the
// same scores. It reaches the corpus's repositories, so it runs only from
// scripts/check-eval-corpus.sh.
func TestEvalPublicCorpus(t *testing.T) {
	if os.Getenv("WARDEN_EVAL_PUBLIC_CORPUS") == "" {
		t.Skip("reaches the corpus's repositories: run scripts/check-eval-corpus.sh")
	}
	dir := t.TempDir()
	srv := scriptedServer(t, dir)
	env := map[string]string{"EVAL_KEY": "sk-eval", "WARDEN_EVAL_CACHE_DIR": cmp.Or(os.Getenv("WARDEN_EVAL_CACHE_DIR"), filepath.Join(dir, "cache"))}
	for _, k := range eval.GitConfigVars {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	corpus, _ := filepath.Abs("../../eval/corpus/public.toml")
	args := []string{"eval", "--skills", shippedEval, "--skill", "synthetic-bugs"}
	rec := runWarden(t, dir, env, "", append(args, "--record", "rec", corpus)...)
	if rec.code != exitOK {
		t.Fatalf("record: exit %d\n%s%s", rec.code, rec.stdout, rec.stderr)
	}
	srv.Close()
	replay := append(args, "--replay", "rec", "--format", "json", corpus)
	first, second := runWarden(t, dir, env, "", replay...), runWarden(t, dir, env, "", replay...)
	if first.code != exitOK || first.stdout != second.stdout {
		t.Errorf("replays: exit %d, %d; same output %v\n%s", first.code, second.code, first.stdout == second.stdout, first.stderr)
	}
	if n := strings.Count(first.stdout, `"repository": "https://github.com/`); n != 42 {
		t.Errorf("%d cases in the result, want the corpus's 42", n)
	}
	t.Logf("%s", strings.SplitN(rec.stdout, "\n", 4)[:3])
}

// TestEvalFaults runs the fault-scored eval from the command line, in
// virtual time: the shipped recording of the synthetic corpus under no
// faults and the shipped schedules prints the table of
// testdata/eval/faults.golden, and exits 0 (every outcome true, no review
// over its budget); a schedule file with a key warden.toml does not have
// is exit 2 naming the file and the key, and --faults without --replay is
// a usage error.
func TestEvalFaults(t *testing.T) {
	t.Parallel()
	args := []string{"eval", "--config", "warden.toml", "--skills", ".", "--skill", "synthetic-bugs", "--replay", "recording", "--faults", "faults", "corpus"}
	var got result
	synctest.Test(t, func(t *testing.T) { got = runWarden(t, shippedEval, nil, "", args...) })
	want, err := os.ReadFile(filepath.Join(shippedEval, "faults.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if got.code != exitOK || got.stdout != string(want) || got.stderr != "" {
		t.Errorf("warden %s = exit %d, stderr %q; want 0 and faults.golden:\n%s", strings.Join(args, " "), got.code, got.stderr, got.stdout)
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	if err := os.WriteFile(bad, []byte("[review]\nbudgt = \"1m\"\n[[routes]]\nname = \"a\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "--config", "warden.toml", "--skills", ".", "--replay", "recording", "--faults", bad, "corpus"}, "bad.toml:2: review.budgt: unknown key"},
		{[]string{"eval", "--config", "warden.toml", "--skills", ".", "--faults", "faults", "corpus"}, "--faults needs --replay DIR"},
		{[]string{"eval", "--config", "warden.toml", "--replay", "recording", "--faults", "nope", "corpus"}, "scenario " + filepath.Join(shippedEval, "nope")},
	} {
		r := runWarden(t, shippedEval, nil, "", tt.args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("warden %s = exit %d, stderr %q; want 2 and %q", strings.Join(tt.args, " "), r.code, r.stderr, tt.want)
		}
	}
}
