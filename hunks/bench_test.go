package hunks

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

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

// BenchmarkPlanLargeDiff plans a diff of 20,000 files of 40 changed lines
// (gendiff.Write, about 58 MB, read from a file so that it is not in the
// heap) under the default limits, two ways: parse+prepare holds every file
// until planning (ParseLimit, then Prepare), prepare-diff plans it as it
// streams (PrepareDiff, what warden review does). peak-heap-MiB is the
// most heap in use, sampled every millisecond while the loop runs.
func BenchmarkPlanLargeDiff(b *testing.B) {
	path := filepath.Join(b.TempDir(), "large.diff")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := gendiff.Write(f, 20_000); err != nil {
		b.Fatal(err)
	}
	size, err := f.Seek(0, io.SeekCurrent)
	if err != nil || f.Close() != nil {
		b.Fatal(err)
	}
	run := func(name string, plan func(io.Reader) (*Plan, error)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			runtime.GC()
			peak := sampleHeap(func() {
				for b.Loop() {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					p, err := plan(f)
					f.Close()
					if err != nil || len(p.Chunks) != 2*DefaultMaxFiles {
						b.Fatalf("plan = %v, want %d chunks", err, 2*DefaultMaxFiles)
					}
				}
			})
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
	run("parse+prepare", func(r io.Reader) (*Plan, error) {
		files, err := ParseLimit(r, 0)
		if err != nil {
			return nil, err
		}
		return Prepare(files, Options{})
	})
	run("prepare-diff", func(r io.Reader) (*Plan, error) { return PrepareDiff(r, 0, Options{}) })
}

// sampleHeap runs f and returns the most heap in use (live and not yet
// swept objects) seen by a sampler that reads runtime/metrics every
// millisecond until f returns.
func sampleHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() { // lives until f returns
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak
}
