package execution

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sourcegraph/conc/pool"
)

// Run executes items and returns one Result per item, in the items' order.
// Items are started in the order given (callers put the most relevant
// first). progress, when non-nil, is called after each item ends; calls are
// serialized.
//
// This is the simple bounded executor: one attempt per route in order, each
// with its adaptive deadline inside the item and review budgets.
func (e *Engine) Run(ctx context.Context, items []Item, progress func(done, total int)) []Result {
	start := time.Now()
	results := make([]Result, len(items))
	reviewCtx, cancel := context.WithTimeout(ctx, e.policy.Budget-e.policy.Reserve)
	defer cancel()
	var mu sync.Mutex
	finished := 0
	p := pool.New().WithMaxGoroutines(e.policy.MaxConcurrency)
	for i := range items {
		p.Go(func() {
			defer func() {
				if progress != nil {
					mu.Lock()
					finished++
					progress(finished, len(items))
					mu.Unlock()
				}
			}()
			defer func() {
				if v := recover(); v != nil {
					results[i] = Result{Status: StatusFailed, Class: ClassUnknown, Err: errors.New("panic while running item")}
				}
			}()
			results[i] = e.runItem(reviewCtx, ctx, start, items[i])
		})
	}
	p.Wait()
	return results
}

func (e *Engine) runItem(reviewCtx, parent context.Context, start time.Time, it Item) Result {
	if err := parent.Err(); err != nil {
		return Result{Status: StatusSkipped, Reason: ReasonCancelled}
	}
	if dl, ok := reviewCtx.Deadline(); ok && time.Until(dl) < e.policy.MinAttempt {
		return Result{Status: StatusSkipped, Reason: ReasonBudget}
	}
	itemCtx, cancel := context.WithTimeout(reviewCtx, e.policy.ItemBudget)
	defer cancel()
	var res Result
	for i, r := range e.routes {
		kind := KindPrimary
		if i > 0 {
			kind = KindFailover
		}
		req := *it.Request
		req.Model = r.Model
		req.ResponseHealing = r.ResponseHealing
		req.Stream = r.Stream
		base, eff, err := e.Timeout(r, &req)
		if err != nil {
			return Result{Status: StatusFailed, Class: ClassBadRequest, Err: err}
		}
		a := Attempt{Route: r.Name, Model: r.Model, Kind: kind, Start: time.Since(start), TimeoutBase: base, TimeoutEffective: eff}
		attemptCtx, cancelAttempt := context.WithTimeout(itemCtx, eff)
		t0 := time.Now()
		resp, err := r.Provider.Complete(attemptCtx, &req)
		a.Duration = time.Since(t0)
		cancelAttempt()
		if err == nil && it.Accept != nil {
			err = it.Accept(resp)
			if err != nil {
				a.Class = ClassBadResponse
			}
		}
		if resp != nil {
			a.Usage = resp.Usage
		}
		switch {
		case err == nil:
			a.Class = ClassSuccess
		case parent.Err() != nil:
			a.Class = ClassCancelled
		case errors.Is(err, context.DeadlineExceeded):
			a.Class = ClassTimeout
		case a.Class == 0:
			a.Class = ClassServerError
		}
		a.Err = err
		res.Attempts = append(res.Attempts, a)
		if err == nil {
			res.Status, res.Response, res.Route = StatusDone, resp, r.Name
			return res
		}
		res.Status, res.Class, res.Err = StatusFailed, a.Class, err
		if a.Class == ClassCancelled {
			return res
		}
	}
	return res
}
