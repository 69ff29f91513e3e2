package review

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
)

// latencyModel gives each work item of a plan its own latency, drawn from a
// seeded log-normal distribution (median 20 s, p95 60 s), and maps a
// request back to its item.
type latencyModel struct {
	byPrompt map[string]int // promptKey → item index
	lat      []time.Duration
}

func newLatencyModel(p *Plan, seed uint64) *latencyModel {
	m := &latencyModel{byPrompt: map[string]int{}, lat: logNormal(seed, len(p.Items), 20*time.Second, 60*time.Second)}
	for i, wi := range p.Items {
		m.byPrompt[promptKey(wi.Request)] = i
	}
	return m
}

// of answers req after its item's latency.
func (m *latencyModel) of(req *execution.Request) fakeopenai.Answer {
	return fakeopenai.Answer{Delay: m.lat[m.byPrompt[promptKey(req)]]}
}

// runNaiveScheduler is the scheduling of reviewers in this field: files in
// fixed batches of 5 (in the diff's order), the files of a batch at once,
// and within a file one request at a time, hunk after hunk, skill after
// skill; the next batch starts when the slowest file of this one ends.
func runNaiveScheduler(p *Plan, files []*hunks.File, prov execution.Provider) {
	byFile := map[string][]WorkItem{}
	for _, wi := range p.Items {
		byFile[wi.Chunk.Path] = append(byFile[wi.Chunk.Path], wi)
	}
	for path := range byFile {
		slices.SortStableFunc(byFile[path], func(a, b WorkItem) int { return cmp.Compare(a.Chunk.StartLine, b.Chunk.StartLine) })
	}
	for b := 0; b < len(files); b += 5 {
		var wg sync.WaitGroup
		for _, f := range files[b:min(b+5, len(files))] {
			wg.Go(func() {
				for _, wi := range byFile[f.Path()] {
					prov.Complete(context.Background(), wi.Request)
				}
			})
		}
		wg.Wait()
	}
}

// TestSchedulingComparison reviews the fixture change (48 work items over 7
// files, one file with 13 chunks) on a log-normal latency model in virtual
// time, with warden's engine and with the naive scheduler, on the same
// latencies, and logs the table. warden's wall time must not exceed the
// naive one's; the ratio is reported, not asserted.
func TestSchedulingComparison(t *testing.T) {
	t.Parallel()
	files, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	type row struct {
		name string
		wall time.Duration
		done int
	}
	var rows []row
	var lat *latencyModel
	var plan *Plan
	for _, pool := range []int{8, 16} {
		synctest.Test(t, func(t *testing.T) {
			m := &fakeModel{origin: time.Now()}
			eng := newEngine(t, m, nil, func(p *execution.Policy) { p.MaxConcurrency = pool })
			p, err := NewPlan(hp, eng, Options{Skills: builtins(), Change: fixturePR})
			if err != nil {
				t.Fatal(err)
			}
			plan, lat = p, newLatencyModel(p, 7)
			m.script = lat.of
			r := Run(t.Context(), p, eng, Options{Skills: builtins()})
			rows = append(rows, row{fmt.Sprintf("warden, max_concurrency %d", pool), time.Since(m.origin), r.Summary.Reviewed})
		})
	}
	synctest.Test(t, func(t *testing.T) {
		m := &fakeModel{origin: time.Now(), script: lat.of}
		runNaiveScheduler(plan, files, m)
		rows = append(rows, row{"naive: 5 files at a time, hunks of a file in sequence", time.Since(m.origin), len(m.recorded())})
	})
	lower := slices.Max(lat.lat)
	var sum time.Duration
	for _, d := range lat.lat {
		sum += d
	}
	naive := rows[len(rows)-1].wall
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d work items, %d files; latency log-normal, median 20s, p95 60s (seed 7): sum %v, max %v\n\n", len(plan.Items), len(files), sum.Round(time.Second), lower.Round(time.Second))
	b.WriteString("| scheduler | items reviewed | wall time | naive ÷ this |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %v | %.2f× |\n", r.name, r.done, r.wall.Round(time.Second), float64(naive)/float64(r.wall))
	}
	fmt.Fprintf(&b, "| lower bound (slowest item, unbounded concurrency) | | %v | %.2f× |\n", lower.Round(time.Second), float64(naive)/float64(lower))
	t.Log(b.String())
	for _, r := range rows {
		if r.done != len(plan.Items) {
			t.Errorf("%s reviewed %d of %d items", r.name, r.done, len(plan.Items))
		}
	}
	if rows[0].wall > naive {
		t.Errorf("warden wall time %v > naive %v", rows[0].wall, naive)
	}
}

// TestEveryItemEligibleAtOnce proves the scheduling claim on the fixture:
// every item of every file is eligible from the start, bounded only by the
// pool and the route's cap, and dispatched in priority order. From the
// provider's record of each call: bound = min(pool, route cap, items) calls
// start at once, all among the first pool items; every later call starts
// the instant an earlier one ends (no slot is left idle while work waits);
// at most bound calls are in flight; and the file with many chunks has
// several in flight at once (its hunks are not serialized). Calls start in
// plan order; with a route cap below the pool, the pool's items wait for
// the route in arrival order, so the order holds across windows of pool
// items (item j starts no earlier than any item before j − pool + 1).
func TestEveryItemEligibleAtOnce(t *testing.T) {
	t.Parallel()
	_, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	tests := []struct {
		name      string
		pool, cap int // cap: the route's MaxConcurrency (0: the pool's)
		bound     int
		window    int // calls start in plan order across this many items
	}{
		{"pool 8", 8, 0, 8, 1},
		{"pool 8, route cap 3", 8, 3, 3, 8},
		{"pool 64 (more than the items)", 64, 0, 48, 1},
		{"pool 1", 1, 0, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := &fakeModel{origin: time.Now()}
				eng := newEngine(t, m, func(r *execution.Route) { r.MaxConcurrency = tt.cap }, func(p *execution.Policy) {
					p.MaxConcurrency = tt.pool
					p.Budget = 2 * time.Hour // room for pool 1: this test is about order, not budgets
				})
				p, err := NewPlan(hp, eng, Options{Skills: builtins(), Change: fixturePR})
				if err != nil {
					t.Fatal(err)
				}
				lat := newLatencyModel(p, 11)
				m.script = lat.of
				Run(t.Context(), p, eng, Options{Skills: builtins()})
				calls := m.recorded()
				if len(calls) != len(p.Items) {
					t.Fatalf("%d calls, want %d", len(calls), len(p.Items))
				}
				start := make([]time.Duration, len(p.Items))
				ends := map[time.Duration]int{}
				for _, c := range calls {
					start[lat.byPrompt[c.prompt]] = c.start
					ends[c.end]++
				}
				latest := time.Duration(0) // the latest start of the items before j − window + 1
				atZero := 0
				for j, s := range start {
					if i := j - tt.window; i >= 0 {
						latest = max(latest, start[i])
					}
					if s < latest {
						t.Errorf("item %d started at %v, before an item %d or more places ahead of it (%v): not in priority order", j, s, tt.window, latest)
					}
					switch {
					case s == 0 && j >= min(tt.pool, len(start)):
						t.Errorf("item %d started at once, but only the first %d are dispatched at once", j, tt.pool)
					case s == 0:
						atZero++
					case ends[s] == 0:
						t.Errorf("item %d started at %v, when no call ended: a slot was idle", j, s)
					}
				}
				if atZero != tt.bound {
					t.Errorf("%d calls started at once, want %d", atZero, tt.bound)
				}
				peak, peakFile := 0, 0
				many := p.Items[0].Chunk.Path
				for _, c := range calls {
					in, inFile := 0, 0
					for _, d := range calls {
						if d.start <= c.start && c.start < d.end {
							in++
							if strings.Contains(d.prompt, many) {
								inFile++
							}
						}
					}
					peak, peakFile = max(peak, in), max(peakFile, inFile)
				}
				if peak != tt.bound {
					t.Errorf("peak calls in flight = %d, want %d", peak, tt.bound)
				}
				if tt.bound > 1 && peakFile < 2 {
					t.Errorf("peak calls in flight for %s = %d, want several", many, peakFile)
				}
			})
		})
	}
}
