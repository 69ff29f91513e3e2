package execution_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
)

var hostileN = flag.Int("hostile", 0, "hostile schedules checked by TestHostileSchedules (0: 1000, or 100 under -race; .ci/run runs the 1000 without -race)")

// hostile is one seeded random review against routes that misbehave in the
// ways that defeat naive clients: headers then a stall, an answer trickled
// a byte at a time, streams of empty events, one token every 25 s, 429 and
// 503 with long Retry-After; request timeouts of 0 to 20 minutes, 20 to
// 100 items, caps of 1 or 2 calls per route, and sometimes a cancellation.
type hostile struct {
	specs    []routeSpec
	policy   execution.Policy
	items    int
	cancelAt time.Duration // 0: never
}

func newHostile(seed uint64) hostile {
	r := rand.New(rand.NewPCG(seed, 0x4057113))
	var h hostile
	for ri := range 1 + r.IntN(3) {
		routeSeed := r.Uint64()
		profile := execution.ProfileNone
		if r.IntN(4) == 0 { // the LiteLLM profile's per-attempt floors must keep the bound too
			profile = execution.Profile(1 + r.IntN(2))
		}
		healthy := r.IntN(10) // weight of good answers, 0 to 9 in 15
		h.specs = append(h.specs, routeSpec{
			name:    "r" + strconv.Itoa(ri),
			cap:     1 + r.IntN(2),
			stream:  r.IntN(2) == 0,
			timeout: time.Duration(r.Int64N(int64(20*time.Minute) + 1)).Round(time.Second), // 0: the policy's
			// Pacing as the LiteLLM standard asks (≥ 5 s between starts), on some routes.
			minInterval: []time.Duration{0, 0, 5 * time.Second, 30 * time.Second}[r.IntN(4)],
			profile:     profile,
			script: func(n int, _ time.Duration) reply {
				cr := rand.New(rand.NewPCG(routeSeed, uint64(n)))
				// Mostly long Retry-After values (the route cools down and
				// the item fails over), some short ones (waited out).
				longRA := []string{"120", "600", "3600", "86400", "2", "20"}[cr.IntN(6)]
				switch k := cr.IntN(15); {
				case k < healthy:
					return reply{Delay: time.Duration(cr.Int64N(int64(90 * time.Second)))}
				case k == 9:
					return reply{Mode: "stall", Delay: time.Duration(cr.IntN(5)) * time.Second}
				case k == 10:
					return reply{Mode: "trickle", Every: time.Duration(5+cr.IntN(21)) * time.Second}
				case k == 11:
					return reply{Mode: "empty", Every: time.Duration(2+cr.IntN(9)) * time.Second}
				case k == 12:
					return reply{Mode: "tokens", Every: 25 * time.Second, Count: 3 + cr.IntN(30)}
				case k == 13:
					return reply{Delay: time.Second, Status: 429, Header: map[string]string{"Retry-After": longRA}}
				}
				return reply{Delay: time.Second, Status: 503, Header: map[string]string{"Retry-After": longRA}}
			},
		})
	}
	p := execution.DefaultPolicy()
	p.Budget = []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute}[r.IntN(3)]
	p.ItemBudget = min(p.Budget, []time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute}[r.IntN(3)])
	p.MaxConcurrency = 1 + r.IntN(8)
	p.MaxRetriesPerRoute = r.IntN(3)
	if r.IntN(2) == 0 {
		p.BackoffSchedule = []time.Duration{15 * time.Second, 45 * time.Second}
		p.MaxRetryAfter = 60 * time.Second
	}
	h.policy = p
	h.items = 20 + r.IntN(81)
	if r.IntN(4) == 0 {
		h.cancelAt = time.Duration(1+r.IntN(1800)) * time.Second
	}
	return h
}

// TestHostileSchedules checks the review bound over random hostile
// schedules: Run returns within the review budget less its reserve (at
// once when cancelled), every item within its budget, every attempt within
// its deadline, one result per item, and no goroutine left behind
// (synctest fails otherwise).
func TestHostileSchedules(t *testing.T) {
	t.Parallel()
	n := *hostileN
	if n == 0 {
		n = 1000
		if raceEnabled {
			n = 100
		}
	}
	start := time.Now()
	var modes [6]int // stall, trickle, empty, tokens, 429, 503 calls seen
	cancelled := 0
	for seed := range uint64(n) {
		h := newHostile(seed)
		if h.cancelAt > 0 {
			cancelled++
		}
		synctest.Test(t, func(t *testing.T) {
			if msg := checkHostile(t, h, &modes); msg != "" {
				t.Errorf("hostile seed %d: %s", seed, msg)
			}
		})
		if t.Failed() {
			return
		}
	}
	t.Logf("%d hostile schedules in %v (%d cancelled); calls by shape stall/trickle/empty/tokens/429/503: %v",
		n, time.Since(start).Round(time.Millisecond), cancelled, modes)
	for i, m := range modes {
		if n >= 50 && m == 0 {
			t.Errorf("no call of hostile shape %d in %d schedules", i, n)
		}
	}
}

func checkHostile(t *testing.T, h hostile, modes *[6]int) string {
	w := newWorld(t, h.specs)
	var mu sync.Mutex
	for i := range w.servers {
		s := w.servers[i]
		inner := s.script
		s.script = func(n int, at time.Duration) reply {
			rp := inner(n, at)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case rp.Mode == "stall":
				modes[0]++
			case rp.Mode == "trickle":
				modes[1]++
			case rp.Mode == "empty":
				modes[2]++
			case rp.Mode == "tokens":
				modes[3]++
			case rp.Status == 429:
				modes[4]++
			case rp.Status == 503:
				modes[5]++
			}
			return rp
		}
	}
	e, err := execution.New(w.routes, h.policy, execution.Options{Rand: rand.New(rand.NewPCG(5, 6))})
	if err != nil {
		return err.Error()
	}
	ctx := t.Context()
	if h.cancelAt > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		time.AfterFunc(h.cancelAt, cancel)
	}
	results := e.Run(ctx, items(h.items), nil)
	wall := time.Since(w.origin)
	p := e.Policy()
	switch {
	case wall > p.Budget-p.Reserve:
		return fmt.Sprintf("review took %v, budget %v − reserve %v", wall, p.Budget, p.Reserve)
	case h.cancelAt > 0 && wall > h.cancelAt:
		return fmt.Sprintf("review cancelled at %v returned at %v", h.cancelAt, wall)
	case len(results) != h.items:
		return fmt.Sprintf("%d results for %d items", len(results), h.items)
	}
	for i, r := range results {
		if r.Duration > p.ItemBudget {
			return fmt.Sprintf("item %d took %v, item budget %v", i, r.Duration, p.ItemBudget)
		}
		for j, a := range r.Attempts {
			if a.Class != execution.ClassRejected && a.Duration > a.Deadline {
				return fmt.Sprintf("item %d attempt %d on %s took %v, deadline %v", i, j+1, a.Route, a.Duration, a.Deadline)
			}
		}
	}
	return ""
}

// A review cancelled while an item waits out a retry backoff (the
// profile's 15 s), a Retry-After, a route's cool-down (a Retry-After of
// 45 s on the last route) or a route's pacing returns at the moment of the cancellation: no wait of the
// engine ignores its context.
func TestCancelDuringBackoffAndCooldown(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		policy   func(*execution.Policy)
		items    int
		script   func(n int, at time.Duration) reply
		pacing   time.Duration
		cancelAt time.Duration
		waiting  string // what the item does when the cancel comes
	}{
		{
			name: "retry backoff",
			policy: func(p *execution.Policy) {
				p.MaxRetriesPerRoute, p.BackoffSchedule = 2, []time.Duration{15 * time.Second, 45 * time.Second}
			},
			items:    1,
			script:   always(reply{Delay: time.Second, Status: 503}),
			cancelAt: 5 * time.Second,
			waiting:  "its 15 s backoff (1 s–16 s)",
		},
		{
			name:     "Retry-After wait on the same route",
			policy:   func(*execution.Policy) {},
			items:    1,
			script:   always(reply{Delay: time.Second, Status: 429, Header: map[string]string{"Retry-After": "20"}}),
			cancelAt: 5 * time.Second,
			waiting:  "the 20 s Retry-After (1 s–21 s)",
		},
		{
			name:   "cool-down on the last route",
			policy: func(p *execution.Policy) { p.MaxConcurrency = 1 },
			items:  2,
			script: func(n int, _ time.Duration) reply {
				if n == 0 { // 45 s is above max_retry_after: the route cools down, the item fails
					return reply{Delay: time.Second, Status: 429, Header: map[string]string{"Retry-After": "45"}}
				}
				return reply{Delay: time.Second}
			},
			cancelAt: 10 * time.Second,
			waiting:  "the route's cool-down (1 s–46 s)",
		},
		{
			name:     "pacing between request starts",
			policy:   func(*execution.Policy) {},
			items:    2,
			pacing:   time.Minute,
			script:   always(reply{Delay: time.Second}),
			cancelAt: 10 * time.Second,
			waiting:  "the route's 1-minute pacing (0 s–60 s)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				w := newWorld(t, []routeSpec{{name: "only", script: tt.script, minInterval: tt.pacing}})
				p := execution.DefaultPolicy()
				tt.policy(&p)
				e, err := execution.New(w.routes, p, execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				time.AfterFunc(tt.cancelAt, cancel)
				e.Run(ctx, items(tt.items), nil)
				if got := time.Since(w.origin); got != tt.cancelAt {
					t.Errorf("cancelled at %v while the item waited out %s, Run returned at %v; want at once", tt.cancelAt, tt.waiting, got)
				}
				if got := w.totalCalls(); got != 1 {
					t.Errorf("%d calls, want 1 (the wait was cancelled)", got)
				}
			})
		})
	}
}
