package workdiff

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/gitrepo"
	"github.com/org/warden/internal/testgit"
)

// branchRepo is a repository whose branch changed n files of 300 lines
// since main, in three places each (one changed line in ten of 30).
func branchRepo(b *testing.B, n int) *testgit.Repo {
	b.Helper()
	r := testgit.New(b)
	file := func(i int, changed bool) string {
		var s strings.Builder
		fmt.Fprintf(&s, "package pkg%d\n\n", i%20)
		for ln := 3; ln <= 300; ln++ {
			if changed && (ln/100 == 1 || ln/100 == 2 || ln < 100) && ln%100 >= 40 && ln%100 < 70 && ln%10 == 0 {
				fmt.Fprintf(&s, "\tv%d := compute(%d, opts) // changed in file %d\n", ln, ln, i)
			} else {
				fmt.Fprintf(&s, "\tv%d := compute(%d) // line of file %d\n", ln, ln, i)
			}
		}
		return s.String()
	}
	for i := range n {
		r.Write(fmt.Sprintf("pkg%d/f%04d.go", i%20, i), file(i, false))
	}
	r.Commit("base")
	r.Git("checkout", "-q", "-b", "topic")
	for i := range n {
		r.Write(fmt.Sprintf("pkg%d/f%04d.go", i%20, i), file(i, true))
	}
	r.Commit("change every file in three places")
	return r
}

// BenchmarkPlanFromGit plans `warden review --base main` of a branch that
// changed 1,000 files, two ways over the same repository: git-diff is git's
// own diff of the range read to its end (what planning from git is
// measured against); plan is Read and Plan as the command does them (the
// checks, the diff streamed through the planner, every reviewed file read
// through one cat-file process and checked against the diff).
// git-processes/op counts the git processes each started; cpu-ms/op is the
// CPU time of the benchmark and of the git processes it waited for, which
// a machine's load does not change as it changes ns/op.
func BenchmarkPlanFromGit(b *testing.B) {
	const files = 1000
	r := branchRepo(b, files)
	mb := strings.TrimSpace(r.Git("merge-base", "main", "HEAD"))
	b.Run("git-diff", func(b *testing.B) {
		before, cpu := gitrepo.Started(), cpuTime()
		for b.Loop() {
			rc, err := gitrepo.Stream(b.Context(), r.Dir, append(slices.Clone(gitrepo.DiffArgs), mb, "HEAD", "--")...)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, rc)
			if err != nil || n == 0 {
				b.Fatalf("git diff: %d bytes, %v", n, err)
			}
			if err := rc.Close(); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(n)
		}
		b.ReportMetric(float64(gitrepo.Started()-before)/float64(b.N), "git-processes/op")
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
	b.Run("plan", func(b *testing.B) {
		before, cpu := gitrepo.Started(), cpuTime()
		for b.Loop() {
			ch, err := Read(b.Context(), Options{Dir: r.Dir, Base: "main"})
			if err != nil {
				b.Fatal(err)
			}
			p, err := ch.Plan(hunks.Options{Source: ch.Source, VerifySource: true})
			if err != nil || len(p.Files) != 300 || len(p.Chunks) != 3*300 {
				b.Fatalf("Plan = %d files, %d chunks, %v; want 300 files (max_files) in 900 chunks", len(p.Files), len(p.Chunks), err)
			}
			if err := ch.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(gitrepo.Started()-before)/float64(b.N), "git-processes/op")
		b.ReportMetric(float64((cpuTime()-cpu).Milliseconds())/float64(b.N), "cpu-ms/op")
	})
}
