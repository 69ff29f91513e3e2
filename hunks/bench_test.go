package hunks

import (
	"bytes"
	"fmt"
	"testing"
)

// benchDiff returns a diff of n files with two hunks each, every hunk with
// 3 context lines around 10 deleted and 10 added lines: 40 changed lines a
// file. Paths mix source, test, doc and config files.
func benchDiff(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		var p string
		switch i % 10 {
		case 0:
			p = fmt.Sprintf("docs/d%d/page%d.md", i%50, i)
		case 1, 2:
			p = fmt.Sprintf("pkg%d/file%d_test.go", i%50, i)
		case 3:
			p = fmt.Sprintf("deploy/env%d/config%d.yaml", i%50, i)
		case 4:
			p = fmt.Sprintf("internal/auth%d/token%d.go", i%50, i)
		default:
			p = fmt.Sprintf("pkg%d/sub/file%d.go", i%50, i)
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\nindex 1111111..2222222 100644\n--- a/%s\n+++ b/%s\n", p, p, p, p)
		for h := range 2 {
			start := 10 + 100*h
			fmt.Fprintf(&b, "@@ -%d,16 +%d,16 @@ func f%d() {\n", start, start, h)
			for j := range 3 {
				fmt.Fprintf(&b, " \tctx := before(%d) // unchanged line\n", j)
			}
			for j := range 10 {
				fmt.Fprintf(&b, "-\tvalue%d := compute(%d, %q)\n", j, j, p)
			}
			for j := range 10 {
				fmt.Fprintf(&b, "+\tvalue%d := computeBetter(%d, %q, opts)\n", j, j, p)
			}
			for j := range 3 {
				fmt.Fprintf(&b, " \tctx = after(%d) // unchanged line\n", j)
			}
		}
	}
	return b.Bytes()
}

// BenchmarkPlan measures Parse and Prepare of 5,000 files and 200,000
// changed lines; the parse and prepare sub-benchmarks split the cost.
func BenchmarkPlan(b *testing.B) {
	const nFiles = 5000
	data := benchDiff(nFiles)
	all := Options{MaxFiles: nFiles, MaxChangedLines: 1 << 30}
	files, err := Parse(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	plan, err := Prepare(files, all)
	if err != nil || len(plan.Ignored) != 0 || len(plan.Chunks) != 2*nFiles {
		b.Fatalf("Prepare = %d chunks, %d ignored, %v; want %d chunks, none ignored", len(plan.Chunks), len(plan.Ignored), err, 2*nFiles)
	}
	run := func(name string, parse bool, opts *Options) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				fs := files
				if parse {
					if fs, err = Parse(bytes.NewReader(data)); err != nil {
						b.Fatal(err)
					}
				}
				if opts != nil {
					if _, err := Prepare(fs, *opts); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
	run("parse+prepare/all", true, &all)
	run("parse+prepare/defaults", true, &Options{})
	run("parse", true, nil)
	run("prepare/all", false, &all)
}
