package eval_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/eval"
	"github.com/org/warden/execution"
	"github.com/org/warden/internal/evalmodel"
	"github.com/org/warden/internal/testgit"
)

// upstream is a public repository as the tests fake it: a bare repository
// in a temporary directory that git reaches through url.<base>.insteadOf
// from the clone URL, set in a configuration file given to the git child
// only (GIT_CONFIG_GLOBAL); nothing global changes.
type upstream struct {
	url    string
	bare   string
	gitEnv []string
	// the commits: base, a bug brought in by intro, its fix, a clean
	// change after it
	base, intro, fix, clean string
}

const upstreamURL = "https://git.example.invalid/acme/stats.git"

// newUpstream makes the repository: stats.go with a correct sum, then a
// change that brings in a loop bound one past the end (lines 6-7 of its
// new side), then the fix, then a clean change adding a mean; extra is
// more of git's configuration.
func newUpstream(t *testing.T, extra string) *upstream {
	t.Helper()
	r := testgit.New(t)
	r.Write("stats/stats.go", "package stats\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n\t\ts += x\n\t}\n\treturn s\n}\n")
	u := &upstream{url: upstreamURL}
	u.base = r.Commit("sum")
	r.Write("stats/stats.go", "package stats\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor i := 0; i <= len(xs); i++ {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n")
	u.intro = r.Commit("index loop")
	r.Write("stats/stats.go", "package stats\n\n// Sum adds xs.\nfunc Sum(xs []int) int {\n\ts := 0\n\tfor i := 0; i < len(xs); i++ {\n\t\ts += xs[i]\n\t}\n\treturn s\n}\n")
	u.fix = r.Commit("bound")
	r.Write("stats/mean.go", "package stats\n\n// Mean is the average of xs; 0 for none.\nfunc Mean(xs []int) float64 {\n\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n\treturn float64(Sum(xs)) / float64(len(xs))\n}\n")
	u.clean = r.Commit("mean")
	u.bare = r.Bare()
	u.gitEnv = testgit.InsteadOf(t, map[string]string{u.url: u.bare}, extra)
	return u
}

// corpus writes a pointer corpus of the upstream's two cases (extra is
// appended as it is) and returns its path.
func (u *upstream) corpus(t *testing.T, extra string) string {
	t.Helper()
	body := fmt.Sprintf(`[[cases]]
name = "loop-bound"
repository = %[1]q
license = "MIT"
language = "go"
commit = %[2]q
parent = %[3]q
fix = %[4]q
description = "the index loop runs one step past the slice"
[[cases.findings]]
path = "stats/stats.go"
start_line = 6
end_line = 7
category = "bug"
severity = "high"

[[cases]]
name = "mean"
repository = %[1]q
license = "MIT"
language = "go"
commit = %[5]q
parent = %[4]q
description = "a mean built on the sum, guarded for no input"
`, u.url, u.intro, u.base, u.fix, u.clean) + extra
	p := filepath.Join(t.TempDir(), "acme.toml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPointerCorpus materialises a pointer corpus from a local bare
// repository through insteadOf, scores it (record, then two replays give
// the same bytes), and reads the cache again with the repository gone:
// nothing is fetched twice.
func TestPointerCorpus(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, "")
	path := u.corpus(t, "")
	var fetched []string
	src := eval.Sources{Cache: t.TempDir(), GitEnv: u.gitEnv, Progress: func(m string) { fetched = append(fetched, m) }}
	cases, err := src.Load(context.Background(), []string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 2 || cases[0].Name != "acme/loop-bound" || cases[1].Name != "acme/mean" {
		t.Fatalf("cases = %v", names(cases))
	}
	if c := cases[0]; c.Changed != 2 || c.Clean() || c.Pointer.Fix != u.fix || !strings.Contains(c.Meta.Provenance, u.intro) {
		t.Errorf("loop-bound: %d changed lines, clean %v, provenance %q", c.Changed, c.Clean(), c.Meta.Provenance)
	}
	if src, err := cases[1].Source("stats/mean.go"); err != nil || !strings.Contains(string(src), "func Mean") {
		t.Errorf("mean's new side: %q, %v", src, err)
	}
	if len(fetched) != 2 {
		t.Errorf("progress = %q, want one line per case fetched", fetched)
	}

	rec := t.TempDir()
	sks := skillsOf(t, shipped)
	run := func(rt execution.Route, tape *eval.Tape) string {
		res, err := eval.Run(context.Background(), cases, eval.Options{Skills: sks, Routes: []execution.Route{rt}, Policy: execution.DefaultPolicy(), Tape: tape})
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Scores[0]; s.Failed != 0 || s.Known != 1 || s.Detected != 1 || s.CleanChanged != 9 {
			t.Errorf("scores: %d failed, %d of %d detected, %d clean lines", s.Failed, s.Detected, s.Known, s.CleanChanged)
		}
		if res.Synthetic || res.Cases[0].Repository != upstreamURL || res.Cases[0].Commit != u.intro {
			t.Errorf("result cases = %+v, synthetic %v", res.Cases, res.Synthetic)
		}
		return jsonOf(t, res, nil)
	}
	run(scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
	first := run(replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	second := run(replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	if first != second {
		t.Errorf("two replays differ:\n%s", cmp.Diff(first, second))
	}

	// Offline: the upstream is gone, the cache has everything.
	if err := os.RemoveAll(u.bare); err != nil {
		t.Fatal(err)
	}
	fetched = nil
	again, err := src.Load(context.Background(), []string{path})
	if err != nil || len(again) != 2 || len(fetched) != 0 {
		t.Errorf("from the cache: %d cases, %v, fetched %q", len(again), err, fetched)
	}
}

func names(cases []*eval.Case) []string {
	var out []string
	for _, c := range cases {
		out = append(out, c.Name)
	}
	return out
}

// TestPointerFetchFallback: a server that refuses to send a commit by its
// id (git's protocol v0 without uploadpack.allowAnySHA1InWant) gets one
// fetch of every branch instead, and the case is made the same.
func TestPointerFetchFallback(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, "[protocol]\n\tversion = 0\n")
	cases, err := eval.Sources{Cache: t.TempDir(), GitEnv: u.gitEnv}.Load(context.Background(), []string{u.corpus(t, "")})
	if err != nil || len(cases) != 2 || cases[0].Changed != 2 {
		t.Fatalf("Load = %v, %v", names(cases), err)
	}
}

// TestPointerErrors: a commit the repository does not have names the case
// and the commit; a wrong parent, a short id, a missing field, an unknown
// key and a duplicate name are each one error naming the file and case.
func TestPointerErrors(t *testing.T) {
	t.Parallel()
	u := newUpstream(t, "")
	missing := strings.Repeat("ab", 20)
	pointer := func(commit, parent, fix string) string {
		return fmt.Sprintf("\n[[cases]]\nname = \"bad\"\nrepository = %q\nlicense = \"MIT\"\nlanguage = \"go\"\ncommit = %q\nparent = %q\nfix = %q\ndescription = \"x\"\n"+
			"[[cases.findings]]\npath = \"stats/stats.go\"\nstart_line = 6\nend_line = 7\ncategory = \"bug\"\nseverity = \"high\"\n", u.url, commit, parent, fix)
	}
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"missing fix commit", pointer(u.intro, u.base, missing), []string{"case acme/bad", "fix " + missing, "is not in " + u.url}},
		{"missing commit", pointer(missing, u.base, u.fix), []string{"case acme/bad", "commit " + missing}},
		{"wrong parent", pointer(u.fix, u.base, u.fix), []string{"case acme/bad", "parent " + u.base + " is not the first parent of commit " + u.fix}},
		{"short id", pointer(u.intro[:12], u.base, u.fix), []string{"cases[2] (bad)", "commit \"" + u.intro[:12] + "\": want a full 40-character commit id"}},
		{"no fix", strings.Replace(pointer(u.intro, u.base, u.fix), "fix = \""+u.fix+"\"\n", "", 1), []string{"cases[2] (bad)", "findings[0]: name the commit that fixed it"}},
		{"bad severity", strings.Replace(pointer(u.intro, u.base, u.fix), "\"high\"", "\"grave\"", 1), []string{"cases[2] (bad)", "findings[0]"}},
		{"remote helper", strings.Replace(pointer(u.intro, u.base, u.fix), u.url, "ext::sh -c touch% /tmp/pwned", 1), []string{"cases[2] (bad)", "a remote helper address"}},
		{"option", strings.Replace(pointer(u.intro, u.base, u.fix), u.url, "--upload-pack=touch /tmp/pwned", 1), []string{"cases[2] (bad)", "want a clone URL"}},
		{"unknown key", "\n[[cases]]\nname = \"bad\"\nsha = \"x\"\n", []string{"acme.toml:", "cases.sha: unknown key"}},
		{"twice", strings.Replace(pointer(u.intro, u.base, u.fix), "\"bad\"", "\"mean\"", 1), []string{"case mean is named twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := eval.Sources{Cache: t.TempDir(), GitEnv: u.gitEnv}.Load(context.Background(), []string{u.corpus(t, tt.extra)})
			if err == nil {
				t.Fatalf("Load = nil error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Load = %v\nwant it to say %q", err, w)
				}
			}
			var mc *eval.MissingCommitError
			if strings.HasPrefix(tt.name, "missing") && (!errors.As(err, &mc) || mc.SHA != missing) {
				t.Errorf("Load = %v, want a *MissingCommitError for %s", err, missing)
			}
		})
	}
	if _, err := eval.LoadCorpus([]string{u.corpus(t, "")}); err == nil || !strings.Contains(err.Error(), "no cache directory") {
		t.Errorf("LoadCorpus(pointers) with no cache = %v, want an error saying so", err)
	}
}

// TestGitEnv: git's configuration variables come from getenv (set, or
// unset when getenv has none), everything else from the environment as
// it is.
func TestGitEnv(t *testing.T) {
	t.Parallel()
	environ := []string{"PATH=/bin", "HOME=/home/me", "GIT_CONFIG_GLOBAL=/home/me/.gitconfig", "GIT_CONFIG_KEY_0=stale", "GIT_SSH_COMMAND=ssh -i k"}
	getenv := func(k string) string {
		return map[string]string{"GIT_CONFIG_GLOBAL": "/tmp/mirrors", "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "url./m.insteadOf", "GIT_CONFIG_VALUE_0": "https://x/"}[k]
	}
	want := []string{"PATH=/bin", "GIT_SSH_COMMAND=ssh -i k", "GIT_CONFIG_GLOBAL=/tmp/mirrors", "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=url./m.insteadOf", "GIT_CONFIG_VALUE_0=https://x/"}
	if diff := cmp.Diff(want, eval.GitEnv(environ, getenv)); diff != "" {
		t.Errorf("GitEnv (-want +got):\n%s", diff)
	}
}
