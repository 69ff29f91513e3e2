package review

import (
	"context"
	"testing"

	"github.com/org/warden/hunks"
)

// BenchmarkRunResults compares a review of the fixture's 48 items whose
// answers all come from the results cache with the same review answered by
// an instant in-memory model: the cache's cost per review (reading and
// verifying 48 entries) against the engine's own overhead, which a real
// model's seconds per call dwarf.
func BenchmarkRunResults(b *testing.B) {
	_, hp, _ := fixture(b, fixtureFiles, hunks.Options{})
	for _, bc := range []struct {
		name   string
		cached bool
	}{{"model", false}, {"cache", true}} {
		b.Run(bc.name, func(b *testing.B) {
			eng := newEngine(b, &fakeModel{script: findingAnswer("real")}, nil, nil)
			opts := Options{Skills: builtins()}
			if bc.cached {
				opts.Cache = &Cache{Dir: b.TempDir(), Domain: "trusted", Secret: []byte("s")}
			}
			p, err := NewPlan(hp, eng, opts)
			if err != nil {
				b.Fatal(err)
			}
			Run(context.Background(), p, eng, opts) // fills the cache
			for b.Loop() {
				r := Run(context.Background(), p, eng, opts)
				if bc.cached && r.Summary.Cached != len(p.Items) {
					b.Fatalf("cached %d of %d", r.Summary.Cached, len(p.Items))
				}
			}
		})
	}
}
