package review

import (
	"testing"
	"testing/fstest"

	"github.com/org/warden/hunks"
	"github.com/org/warden/related"
)

// BenchmarkPlanContext plans the fixture (7 files, 24 chunks, two skills)
// without and with context beyond the hunk, the other files read from an
// in-memory repository: the cost of Gather on top of planning.
func BenchmarkPlanContext(b *testing.B) {
	_, hp, source := fixture(b, fixtureFiles, hunks.Options{})
	repo := fstest.MapFS{}
	for p, text := range source {
		repo[p] = &fstest.MapFile{Data: []byte(text)}
	}
	eng := newEngine(b, &fakeModel{}, nil, nil)
	src := func(p string) ([]byte, error) { return []byte(source[p]), nil }
	for _, bc := range []struct {
		name string
		cx   *related.Options
	}{{"off", nil}, {"auto", &related.Options{Source: src, Repo: repo}}} {
		b.Run(bc.name, func(b *testing.B) {
			opts := Options{Skills: builtins(), Context: bc.cx}
			for b.Loop() {
				if _, err := NewPlan(hp, eng, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
