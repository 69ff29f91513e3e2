// Package gendiff generates large, realistic unified diffs for benchmarks
// and scale tests: one generator, so that the planning benchmark and the
// memory test measure the same change. Only tests import it; it uses the
// standard library only.
package gendiff

import (
	"bufio"
	"fmt"
	"io"
)

// Write writes a change of n files, each with two hunks of 10 deleted and
// 10 added lines between 3 context lines: 40 changed lines a file. Paths mix
// source, test, doc and config files, a tenth of them risk-bearing.
func Write(w io.Writer, n int) error {
	b := bufio.NewWriter(w)
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
		fmt.Fprintf(b, "diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n", p)
		for h := range 2 {
			start := 10 + 100*h
			fmt.Fprintf(b, "@@ -%d,16 +%d,16 @@ func f%d() {\n", start, start, h)
			for j := range 3 {
				fmt.Fprintf(b, " \tctx := before(%d) // unchanged line\n", j)
			}
			for j := range 10 {
				fmt.Fprintf(b, "-\tvalue%d := compute(%d, %q)\n", j, j, p)
			}
			for j := range 10 {
				fmt.Fprintf(b, "+\tvalue%d := computeBetter(%d, %q, opts)\n", j, j, p)
			}
			for j := range 3 {
				fmt.Fprintf(b, " \tctx = after(%d) // unchanged line\n", j)
			}
		}
	}
	return b.Flush()
}

// WriteSkewed writes a change of n files and about lines changed lines
// whose sizes fall off like a large project's long-lived branch (a Zipf
// curve: the i-th largest file has about lines/(i·H(n)) changed lines, at
// least 2): a few files of tens of thousands of lines, a long tail of small
// ones. Paths mix source, test, doc and config files, some risk-bearing,
// and the largest is a lexer's "tokens.js" (not a credential). Hunks hold
// up to 20 deleted and 20 added lines, 3 context lines each side.
func WriteSkewed(w io.Writer, n, lines int) error {
	b := bufio.NewWriter(w)
	h := 0.0
	for i := 1; i <= n; i++ {
		h += 1 / float64(i)
	}
	for i := range n {
		var p string
		switch {
		case i == 0:
			p = "web/ui/module/lezer-promql/src/tokens.js"
		case i%10 == 0:
			p = fmt.Sprintf("docs/d%d/page%d.md", i%50, i)
		case i%10 == 1 || i%10 == 2:
			p = fmt.Sprintf("pkg%d/file%d_test.go", i%50, i)
		case i%10 == 3:
			p = fmt.Sprintf("deploy/env%d/config%d.yaml", i%50, i)
		case i%10 == 4:
			p = fmt.Sprintf("internal/auth%d/session%d.go", i%50, i)
		default:
			p = fmt.Sprintf("pkg%d/sub/file%d.go", i%50, i)
		}
		changed := max(2, int(float64(lines)/(float64(i+1)*h)))
		fmt.Fprintf(b, "diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n", p)
		line := 10
		for changed > 0 {
			k := min(changed/2, 20)
			if k == 0 {
				k = 1
			}
			changed -= 2 * k
			fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@ func f%d() {\n", line, k+6, line, k+6, line)
			for j := range 3 {
				fmt.Fprintf(b, " \tctx := before(%d) // unchanged line\n", j)
			}
			for j := range k {
				fmt.Fprintf(b, "-\tvalue%d := compute(%d, %q)\n", j, j, p)
			}
			for j := range k {
				fmt.Fprintf(b, "+\tvalue%d := computeBetter(%d, %q, opts)\n", j, j, p)
			}
			for j := range 3 {
				fmt.Fprintf(b, " \tctx = after(%d) // unchanged line\n", j)
			}
			line += k + 6 + 30
		}
	}
	return b.Flush()
}

// WriteNewFile writes a change that adds one file of n lines (a data dump:
// "INSERT INTO t VALUES (i, 'a value');"), all of it one hunk.
func WriteNewFile(w io.Writer, n int) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "diff --git a/data/dump.sql b/data/dump.sql\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/data/dump.sql\n@@ -0,0 +1,%d @@\n", n)
	for i := range n {
		fmt.Fprintf(b, "+INSERT INTO t VALUES (%d, 'a value');\n", i)
	}
	return b.Flush()
}
