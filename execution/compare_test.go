package execution_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/sourcegraph/conc/pool"

	"github.com/org/warden/execution"
)

// naiveJobTimeout is when the CI job kills a naive review that has not
// finished (the naive policy has no deadline of its own).
const naiveJobTimeout = 60 * time.Minute

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
// primary route only: no request deadline, 2 provider retries (1s, 2s
// backoff, whatever the error, Retry-After ignored) under 3 item retries
// (2s apart), a global consecutive-failure breaker, 8 items at a time. It
// returns how many items got an answer and whether the job timeout killed it.
func runNaive(ctx context.Context, r execution.Route, its []execution.Item) (reviewed int, killed bool) {
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
	provider := func(req *execution.Request) error { // "SDK" with 2 retries
		var err error
		for k := range 3 {
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
			_, err = r.Provider.Complete(ctx, req)
			br.record(err == nil)
			if err == nil {
				return nil
			}
		}
		return err
	}
	p := pool.New().WithMaxGoroutines(8)
	for _, it := range its {
		p.Go(func() {
			req := *it.Request
			req.Model = r.Model
			for try := range 3 {
				if try > 0 {
					sleep(2 * time.Second)
				}
				if provider(&req) == nil {
					mu.Lock()
					reviewed++
					mu.Unlock()
					return
				}
				if ctx.Err() != nil {
					return
				}
			}
		})
	}
	p.Wait()
	return reviewed, errors.Is(ctx.Err(), context.DeadlineExceeded)
}

// TestCompareNaive runs every scenario twice, with warden's engine and with
// the naive policy, on the same fault schedules, and logs the table.
func TestCompareNaive(t *testing.T) {
	t.Parallel()
	type row struct {
		name                 string
		wWall, nWall         time.Duration
		wCalls, nCalls       int
		wReviewed, nReviewed int
		items                int
		nKilled              bool
	}
	var rows []row
	for _, sc := range scenarios() {
		rw := row{name: sc.name, items: sc.items}
		synctest.Test(t, func(t *testing.T) {
			o := runWarden(t, sc)
			rw.wWall, rw.wCalls = o.wall, o.w.totalCalls()
			rw.wReviewed, _, _ = tally(o.results)
		})
		synctest.Test(t, func(t *testing.T) {
			w := newWorld(t, sc.specs)
			rw.nReviewed, rw.nKilled = runNaive(t.Context(), w.routes[0], items(sc.items))
			rw.nWall, rw.nCalls = time.Since(w.origin), w.totalCalls()
		})
		if rw.wWall > 15*time.Minute {
			t.Errorf("%s: warden took %v, over the 15 min budget", sc.name, rw.wWall)
		}
		rows = append(rows, rw)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| scenario | items | warden wall | warden calls | warden reviewed | naive wall | naive calls | naive reviewed |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		nWall := r.nWall.Round(time.Second).String()
		if r.nKilled {
			nWall = "≥ " + nWall + " (killed by the job timeout)"
		}
		fmt.Fprintf(&b, "| %s | %d | %v | %d | %d | %s | %d | %d |\n", r.name, r.items, r.wWall.Round(time.Second), r.wCalls, r.wReviewed, nWall, r.nCalls, r.nReviewed)
	}
	t.Log(b.String())
}
