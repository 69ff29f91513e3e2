package review

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/testgit"
)

// gitRepo is internal/testgit's hermetic repository, with the names these
// tests use.
type gitRepo struct {
	*testgit.Repo
	t   *testing.T
	dir string
}

func newGitRepo(t *testing.T) *gitRepo {
	t.Helper()
	r := testgit.New(t)
	return &gitRepo{Repo: r, t: t, dir: r.Dir}
}

func (g *gitRepo) run(args ...string) string { g.t.Helper(); return strings.TrimSpace(g.Git(args...)) }
func (g *gitRepo) raw(args ...string) string { g.t.Helper(); return g.Git(args...) }
func (g *gitRepo) write(path, text string)   { g.t.Helper(); g.Write(path, text) }
func (g *gitRepo) commit(msg string) string  { g.t.Helper(); return g.Commit(msg) }

// plan prepares the diff from..to, reading sources at to.
func (g *gitRepo) plan(from, to string) (*hunks.Plan, []*hunks.File) {
	g.t.Helper()
	diff := g.raw("diff", "--no-color", "--no-ext-diff", from, to)
	files, err := hunks.Parse(strings.NewReader(diff))
	if err != nil {
		g.t.Fatal(err)
	}
	hp, err := hunks.Prepare(files, hunks.Options{Source: func(p string) ([]byte, error) {
		return []byte(g.raw("show", to+":"+p)), nil
	}})
	if err != nil {
		g.t.Fatal(err)
	}
	return hp, files
}

// goFile is a Go file of n functions, with the functions in changed
// returning x+<version> instead of x.
func goFile(n int, version int, changed ...int) string {
	var b bytes.Buffer
	b.WriteString("package p\n\n")
	for i := range n {
		ret := "x"
		if slices.Contains(changed, i) {
			ret = fmt.Sprintf("x + %d", version)
		}
		fmt.Fprintf(&b, "// F%d returns its argument.\nfunc F%d(x int) int {\n\tif x < 0 {\n\t\treturn 0\n\t}\n\treturn %s\n}\n\n", i, i, ret)
	}
	return b.String()
}

// TestIncrementalPush: a ten-file pull request is reviewed whole; a push
// that changes one function of one file reviews only that chunk (a model
// call per skill for it, none for the rest); a force-push that rewrites the
// branch reviews the whole change again.
func TestIncrementalPush(t *testing.T) {
	t.Parallel()
	g := newGitRepo(t)
	for i := range 10 {
		g.write(fmt.Sprintf("pkg%d/f.go", i), goFile(12, 0))
	}
	base := g.commit("base")
	g.run("checkout", "-q", "-b", "feature")
	for i := range 10 {
		g.write(fmt.Sprintf("pkg%d/f.go", i), goFile(12, 1, 1, 6, 11))
	}
	head1 := g.commit("change every file")
	whole, _ := g.plan(base, head1)
	if len(whole.Chunks) < 20 {
		t.Fatalf("the whole change has %d chunks, want several per file", len(whole.Chunks))
	}

	// The push: one function of pkg3 changes again.
	g.write("pkg3/f.go", strings.Replace(goFile(12, 1, 1, 6, 11), "return x + 1\n}\n\n// F7", "return x + 2\n}\n\n// F7", 1))
	head2 := g.commit("fix F6 in pkg3")
	since, why := IncrementalFrom(head1, true, g.ancestor(head1, head2))
	if since != head1 || why != "" {
		t.Fatalf("IncrementalFrom = %q, %q; want the last head", since, why)
	}
	full, _ := g.plan(base, head2)
	_, inter := g.plan(head1, head2)
	narrow, dropped := Since(full, inter, since)
	if len(narrow.Chunks) != 1 || narrow.Chunks[0].Path != "pkg3/f.go" || dropped != len(full.Chunks)-1 {
		t.Fatalf("Since kept %d chunks (%v), dropped %d of %d; want only pkg3's changed chunk", len(narrow.Chunks), chunkNames(narrow), dropped, len(full.Chunks))
	}
	if c := narrow.Chunks[0]; !strings.Contains(renderChange(&c, Change{}), "return x + 2") {
		t.Errorf("kept chunk %s:%d-%d is not the changed function", c.Path, c.StartLine, c.EndLine)
	}
	ignored := 0
	for _, ig := range narrow.Ignored {
		if ig.Reason == "unchanged since "+head1[:7] {
			ignored++
		}
	}
	if ignored != 9 {
		t.Errorf("%d paths ignored as unchanged, want the 9 other files: %v", ignored, narrow.Ignored)
	}
	synctest.Test(t, func(t *testing.T) {
		model := &fakeModel{}
		eng := newEngine(t, model, nil, nil)
		opts := Options{Skills: builtins()}
		p, err := NewPlan(narrow, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		r := Run(context.Background(), p, eng, opts)
		if r.Outcome != OutcomeComplete || len(model.recorded()) != len(builtins()) {
			t.Errorf("incremental run: outcome %s, %d model calls; want complete with one call per skill", r.Outcome, len(model.recorded()))
		}
	})

	// A force-push: the branch is rewritten from base; head2 is no longer
	// an ancestor, so the whole change is reviewed.
	g.run("checkout", "-q", base)
	g.run("checkout", "-q", "-B", "feature")
	for i := range 10 {
		g.write(fmt.Sprintf("pkg%d/f.go", i), goFile(12, 3, 2, 6))
	}
	head3 := g.commit("rewritten")
	since, why = IncrementalFrom(head2, true, g.ancestor(head2, head3))
	if since != "" || !strings.Contains(why, "force-push") {
		t.Errorf("IncrementalFrom after a force-push = %q, %q; want the whole change", since, why)
	}
	if since, why := IncrementalFrom(head2, false, true); since != "" || why != "the last review was not complete" {
		t.Errorf("IncrementalFrom after an incomplete review = %q, %q", since, why)
	}
}

func (g *gitRepo) ancestor(a, b string) bool {
	cmd := exec.Command("git", "merge-base", "--is-ancestor", a, b)
	cmd.Dir, cmd.Env = g.dir, testgit.Env(g.dir)
	return cmd.Run() == nil
}

func chunkNames(p *hunks.Plan) []string {
	var out []string
	for _, c := range p.Chunks {
		out = append(out, fmt.Sprintf("%s:%d-%d", c.Path, c.StartLine, c.EndLine))
	}
	return out
}
