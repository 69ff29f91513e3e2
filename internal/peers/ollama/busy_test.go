package ollama

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/org/warden/execution"
)

// TestServerBusy sends eight requests at once to a second server started
// cold with OLLAMA_MAX_QUEUE=1 OLLAMA_NUM_PARALLEL=1. While it loads the
// model its scheduler takes one request, holds one in its queue of one, and
// answers the rest at once 503 {"error":{"message":"server busy, please try
// again.  maximum pending requests exceeded", "type":"api_error", ...}}.
// warden classifies them overloaded and retries them on the route (while
// the review's retry budget lasts) or fails them over to the main server:
// every item is served, and the attempt records say how.
func TestServerBusy(t *testing.T) {
	t.Parallel()
	main := mainServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	busy, err := startServer(ctx, "busy", "OLLAMA_MAX_QUEUE=1", "OLLAMA_NUM_PARALLEL=1")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	busyProv, busyRec := newProvider(t, busy)
	mainProv, _ := newProvider(t, main)
	const n = 8
	eng := newEngine(t, []execution.Route{
		{Name: "busy", Model: tinyModel, Provider: busyProv, MaxConcurrency: n},
		{Name: "main", Model: tinyModel, Provider: mainProv, MaxConcurrency: n},
	}, func(p *execution.Policy) { p.MaxConcurrency = n }, execution.Options{})
	items := make([]execution.Item, n)
	for i := range items {
		items[i] = smallItem(i)
	}

	res := eng.Run(context.Background(), items, nil)

	overloaded, retried, failedOver := 0, 0, 0
	for i, r := range res {
		if r.Status != execution.StatusDone {
			t.Errorf("item %d: %s (%s, %s), want done; attempts %+v", i, r.Status, r.Class, r.Reason, steps(r.Attempts))
		}
		for _, a := range r.Attempts {
			if a.Class != execution.ClassOverloaded {
				continue
			}
			overloaded++
			var pe *execution.ProviderError
			if a.Route != "busy" || !errors.As(a.Err, &pe) || pe.Status != 503 || !strings.HasPrefix(pe.Message, "server busy") {
				t.Errorf("item %d: overloaded attempt on %s with error %v, want a 503 server busy from route busy", i, a.Route, a.Err)
			}
			switch a.Decision {
			case execution.DecisionRetry:
				retried++
			case execution.DecisionFailover:
				failedOver++
			default:
				t.Errorf("item %d: overloaded attempt decided %s (%s), want retry or failover", i, a.Decision, a.Reason)
			}
		}
		t.Logf("item %d: %v", i, steps(r.Attempts))
	}
	if overloaded == 0 {
		t.Fatalf("no attempt was overloaded: the busy server queued all %d requests", n)
	}
	t.Logf("%d overloaded attempts: %d retried, %d failed over", overloaded, retried, failedOver)
	busy503 := 0
	for _, ex := range busyRec.all() {
		if ex.status == 503 {
			busy503++
			want := `{"error":{"message":"server busy, please try again.  maximum pending requests exceeded","type":"api_error","param":null,"code":null}}`
			if got := strings.TrimSpace(string(ex.response)); got != want {
				t.Errorf("503 body = %s, want %s", got, want)
			}
			if ra := ex.header.Get("Retry-After"); ra != "" {
				t.Errorf("503 Retry-After = %q, want none", ra)
			}
		}
	}
	if busy503 != overloaded {
		t.Errorf("%d answers 503 on the wire, %d attempts overloaded", busy503, overloaded)
	}
}
