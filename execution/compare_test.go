package execution_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/org/warden/execution"
)

var update = flag.Bool("update", false, "rewrite the README's comparison table from TestCompareNaive's output")

// naiveJobTimeout is when the CI job kills a naive review that has not
// finished (the naive policy has no deadline of its own).
const naiveJobTimeout = 60 * time.Minute

// The naive stacked-retry policy of the review plan (seeds/004), as
// Sentry's Warden v0.1.0 behaved when measured against a loopback endpoint
// that injected faults (REFERENCE §I): the provider layer retries twice,
// the hunk layer three more times, and the review passes no deadline of
// its own; a call to an endpoint that never answers was cut after about
// 302 s per attempt (the measured figure, "302 s per attempt, up to 11
// attempts per hunk").
const (
	naiveProviderRetries = 2
	naiveHunkRetries     = 3
	naiveAttemptCut      = 302 * time.Second
)

// naiveBreaker is a global consecutive-failure breaker: after 5 failures in
// a row it rejects every call for 30s; any success resets it.
type naiveBreaker struct {
	mu          sync.Mutex
	consecutive int
	openUntil   time.Time
}

var errNaiveOpen = errors.New("naive breaker open")

func (b *naiveBreaker) allow() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !time.Now().Before(b.openUntil)
}

func (b *naiveBreaker) record(ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.consecutive = 0
		return
	}
	b.consecutive++
	if b.consecutive >= 5 {
		b.openUntil, b.consecutive = time.Now().Add(30*time.Second), 0
	}
}

// runNaive is the policy of reviewers without an execution engine, on the
// same routes as warden (fallback included, in order): no request deadline
// but the measured 302-second cut of each attempt; per route an "SDK" that
// retries naiveProviderRetries times (1s, 2s
// backoff, whatever the error, Retry-After ignored); when every route
// failed, naiveHunkRetries more tries of the whole chain (2s apart); a
// global consecutive-failure breaker; the review's max_concurrency items at
// a time; killed by the job timeout. It returns how many items got an
// answer, how many failed, and whether the job timeout killed it.
func runNaive(ctx context.Context, routes []execution.Route, its []execution.Item, concurrency int) (reviewed, failed int, killed bool) {
	ctx, cancel := context.WithTimeout(ctx, naiveJobTimeout)
	defer cancel()
	var br naiveBreaker
	var mu sync.Mutex
	sleep := func(d time.Duration) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	provider := func(r execution.Route, req execution.Request) error {
		req.Model, req.Stream = r.Model, r.Stream
		var err error
		for k := range naiveProviderRetries + 1 {
			if k > 0 {
				sleep(time.Duration(k) * time.Second)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if !br.allow() {
				err = errNaiveOpen
				continue
			}
			actx, cancel := context.WithTimeout(ctx, naiveAttemptCut)
			_, err = r.Provider.Complete(actx, &req)
			cancel()
			br.record(err == nil)
			if err == nil {
				return nil
			}
		}
		return err
	}
	p := pool.New().WithMaxGoroutines(concurrency)
	for i, it := range its {
		p.Go(func() {
			// The job starts its items one after another, 1ms apart, so
			// that no two of its calls act at the same virtual instant and
			// its figures do not depend on goroutine order.
			sleep(time.Duration(i%concurrency) * time.Millisecond)
			for try := range naiveHunkRetries + 1 {
				if try > 0 {
					sleep(2 * time.Second)
				}
				for _, r := range routes {
					if provider(r, *it.Request) == nil {
						mu.Lock()
						reviewed++
						mu.Unlock()
						return
					}
					if ctx.Err() != nil {
						return
					}
				}
			}
			mu.Lock()
			failed++
			mu.Unlock()
		})
	}
	p.Wait()
	return reviewed, failed, errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// runNaiveScenario runs the scenario with the naive policy; call it in a
// bubble.
func runNaiveScenario(t *testing.T, sc *scenarioFile) *figures {
	t.Helper()
	w, p := sc.world(t)
	its := sc.items()
	f := &figures{items: len(its)}
	f.reviewed, _, f.killed = runNaive(t.Context(), w.routes, its, p.MaxConcurrency)
	f.failed = f.items - f.reviewed // naive skips nothing: an item without an answer failed, killed or not
	f.wall = time.Since(w.origin)
	synctest.Wait() // the servers record the calls cut at the end after the run returns
	measure(w, f)
	return f
}

// TestCompareNaive runs every scenario file twice, with warden's engine and
// with the naive policy, on the same routes and fault schedules; checks
// both sides against the file's [expect] and [naive] figures; and checks
// that the README's comparison table is this output (-update rewrites it).
func TestCompareNaive(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("| scenario | items | warden wall | warden calls | warden reviewed | naive wall | naive calls | naive reviewed |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	own := filepath.Join("testdata", "scenarios")
	for _, sc := range loadScenarios(t) {
		var wf, nf *figures
		synctest.Test(t, func(t *testing.T) { wf = runScenario(t, sc) })
		if wf == nil {
			continue // refused at load time, as the file expects: nothing to compare
		}
		synctest.Test(t, func(t *testing.T) { nf = runNaiveScenario(t, sc) })
		t.Logf("%s: warden %s; naive %s", sc.name, wf, nf)
		for _, msg := range checkBounds(&sc.Expect, wf, true) {
			t.Errorf("%s: warden: %s", sc.name, msg)
		}
		mine := filepath.Dir(sc.path) == own
		if sc.Naive == nil && mine {
			t.Errorf("%s: no [naive] figures: say what the naive policy does on this schedule", sc.name)
		} else if sc.Naive != nil {
			for _, msg := range checkBounds(sc.Naive, nf, false) {
				t.Errorf("%s: naive: %s", sc.name, msg)
			}
		}
		if !mine {
			continue // a user's scenario: checked ([naive] optional), not in the README
		}
		nWall := nf.wall.Round(time.Second).String()
		if nf.killed {
			nWall = "≥ " + nWall + " (killed)"
		}
		fmt.Fprintf(&b, "| %s | %d | %v | %d | %d | %s | %d | %d |\n", sc.name, wf.items,
			wf.wall.Round(time.Second), wf.calls, wf.reviewed, nWall, nf.calls, nf.reviewed)
	}
	checkReadmeTable(t, b.String())
}

// The README's comparison table sits between these markers.
const (
	tableBegin = "<!-- TestCompareNaive table: generated by `go test ./execution -run TestCompareNaive -update`; do not edit -->\n"
	tableEnd   = "<!-- end of TestCompareNaive table -->\n"
)

// checkReadmeTable fails the test when the README's table is not table;
// with -update it rewrites it. Every cell must match exactly except
// warden's call counts, which may differ by max(2, 10%), and warden's wall,
// by a second (closeCells): the engine's
// goroutines that act at the same virtual instant (8 timeouts at once)
// run in either order, and a breaker may see the 5th failure before or
// after the next admission.
func checkReadmeTable(t *testing.T, table string) {
	t.Helper()
	path := filepath.Join("..", "README.md")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(tableBegin))
	j := bytes.Index(data, []byte(tableEnd))
	if i < 0 || j < i {
		t.Fatalf("README.md has no comparison table between %q and %q", strings.TrimSpace(tableBegin), strings.TrimSpace(tableEnd))
	}
	got := string(data[i+len(tableBegin) : j])
	if sameTable(got, table) && !(*update && got != table) {
		return
	}
	if *update {
		out := slices.Concat(data[:i+len(tableBegin)], []byte(table), data[j:])
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's comparison table is not the test's output; run go test ./execution -run TestCompareNaive -update\nREADME:\n%s\noutput:\n%s", got, table)
}

// sameTable compares two tables cell by cell, warden's calls and wall
// within closeCells.
func sameTable(a, b string) bool {
	ra, rb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		ca, cb := strings.Split(ra[i], "|"), strings.Split(rb[i], "|")
		if len(ca) != len(cb) {
			return false
		}
		for k := range ca {
			if ca[k] == cb[k] {
				continue
			}
			if i < 2 || !closeCells(k, ca[k], cb[k]) {
				return false
			}
		}
	}
	return true
}

// closeCells reports whether two cells of column k differ only as far as
// the same-instant orders allow: warden's calls (column 4) by max(2, 10%),
// warden's wall (column 3) by one second (it is rounded to the second, and
// a limit the 429s cut, AIMD, may regrow a call earlier or later).
func closeCells(k int, a, b string) bool {
	switch k {
	case 3:
		x, errX := time.ParseDuration(strings.TrimSpace(a))
		y, errY := time.ParseDuration(strings.TrimSpace(b))
		return errX == nil && errY == nil && max(x-y, y-x) <= time.Second
	case 4:
		var x, y int
		_, errX := fmt.Sscan(a, &x)
		_, errY := fmt.Sscan(b, &y)
		return errX == nil && errY == nil && abs(x-y) <= max(2, x/10)
	}
	return false
}

func abs(n int) int { return max(n, -n) }
