package hunks

import (
	"bytes"
	"testing"

	"github.com/org/warden/internal/gendiff"
)

// benchDiff returns gendiff's change of n files (40 changed lines a file).
func benchDiff(n int) []byte {
	var b bytes.Buffer
	if err := gendiff.Write(&b, n); err != nil {
		panic(err) // a bytes.Buffer does not fail
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

// BenchmarkPlanSkewed measures Parse and Prepare, under the default limits,
// of a change shaped like a large project's long-lived branch (Prometheus
// v2.40.0..HEAD: 1,500 files, 300,000 changed lines, a Zipf curve of file
// sizes). TestPlanSkewedMemory gives its peak memory.
func BenchmarkPlanSkewed(b *testing.B) {
	var buf bytes.Buffer
	if err := gendiff.WriteSkewed(&buf, 1500, 300_000); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		files, err := Parse(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Prepare(files, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
