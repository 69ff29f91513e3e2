package telemetry

import (
	"cmp"
	"context"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/org/warden/review"
)

// Metric names.
const (
	metricAttemptDuration    = "warden.attempt.duration"    // histogram, ms, by route and class: sent attempts
	metricAttemptTTFT        = "warden.attempt.ttft"        // histogram, ms, by route: attempts that reported a first byte
	metricTimeouts           = "warden.timeouts"            // counter, by route
	metricRetries            = "warden.retries"             // counter, by route and retry reason
	metricFailovers          = "warden.failovers"           // counter, by route (the one failed over to), from route and reason
	metricBreakerTransitions = "warden.breaker.transitions" // counter, by route and the state entered
	metricReviews            = "warden.reviews"             // counter, by outcome
	metricTokenUsage         = "gen_ai.client.token.usage"  // histogram, tokens, GenAI conventions
)

// durationBuckets suit model calls, from a cached answer to a slow
// reasoning model at warden's 10-minute ceiling (ms).
var durationBuckets = []float64{50, 100, 250, 500, 1000, 2500, 5000, 10000, 20000, 30000, 60000, 120000, 180000, 300000, 600000}

// tokenBuckets are the GenAI conventions' advice for token usage.
var tokenBuckets = []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}

type instruments struct {
	duration, ttft, tokens                         metric.Int64Histogram
	timeouts, retries, failovers, breaker, reviews metric.Int64Counter
}

func metricVersion(v string) metric.MeterOption { return metric.WithInstrumentationVersion(v) }

func newInstruments(m metric.Meter) (*instruments, error) {
	var in instruments
	var err error
	hist := func(dst *metric.Int64Histogram, name, desc, unit string, buckets []float64) {
		if err == nil {
			*dst, err = m.Int64Histogram(name, metric.WithDescription(desc), metric.WithUnit(unit), metric.WithExplicitBucketBoundaries(buckets...))
		}
	}
	counter := func(dst *metric.Int64Counter, name, desc, unit string) {
		if err == nil {
			*dst, err = m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit(unit))
		}
	}
	hist(&in.duration, metricAttemptDuration, "Duration of model calls, from sending to the answer or error.", "ms", durationBuckets)
	hist(&in.ttft, metricAttemptTTFT, "Time from sending a model call to the first byte of its answer.", "ms", durationBuckets)
	hist(&in.tokens, metricTokenUsage, "Tokens used by model calls, as the provider reported them.", "{token}", tokenBuckets)
	counter(&in.timeouts, metricTimeouts, "Model calls that ran out of time.", "{timeout}")
	counter(&in.retries, metricRetries, "Retries on the same route.", "{retry}")
	counter(&in.failovers, metricFailovers, "Items that moved on to the next route.", "{failover}")
	counter(&in.breaker, metricBreakerTransitions, "Circuit-breaker transitions, by the state entered.", "{transition}")
	counter(&in.reviews, metricReviews, "Finished reviews, by outcome.", "{review}")
	if err != nil {
		return nil, err
	}
	return &in, nil
}

// record adds one finished review to the instruments. A batch's attempts
// are counted once.
func (in *instruments) record(ctx context.Context, r *review.Report) {
	add := func(c metric.Int64Counter, kvs ...attribute.KeyValue) {
		c.Add(ctx, 1, metric.WithAttributes(kvs...))
	}
	add(in.reviews, keyOutcome.String(string(r.Outcome)))

	type admission struct {
		startMS int64
		state   string
	}
	admissions := map[string][]admission{} // route → breaker states seen at admission
	for _, attempts := range requests(r) {
		for j := range attempts {
			a := &attempts[j]
			route := keyRoute.String(a.Route)
			if a.Breaker != "" {
				admissions[a.Route] = append(admissions[a.Route], admission{a.StartMS, a.Breaker})
			}
			if j > 0 {
				prev := &attempts[j-1]
				switch a.Kind {
				case kindRetry:
					add(in.retries, route, keyRetryReason.String(prev.Class))
				case kindFailover:
					add(in.failovers, route, keyFailoverFrom.String(prev.Route), keyFailoverReason.String(leaveReason(prev)))
				}
			}
			if a.Class == classRejected {
				continue // never sent: no duration, no tokens
			}
			in.duration.Record(ctx, a.DurationMS, metric.WithAttributes(route, keyAttemptClass.String(a.Class)))
			if a.TTFTMS > 0 {
				in.ttft.Record(ctx, a.TTFTMS, metric.WithAttributes(route))
			}
			if a.Class == classTimeout {
				add(in.timeouts, route)
			}
			if a.PromptTokens > 0 || a.CompletionTokens > 0 {
				common := []attribute.KeyValue{
					keyGenAIOperation.String(operationChat), keyGenAIProvider.String(providerOpenAICompat),
					keyGenAIRequestModel.String(a.Model), route,
				}
				if a.ResponseModel != "" {
					common = append(common, keyGenAIResponseModel.String(a.ResponseModel))
				}
				if a.ServerAddress != "" {
					common = append(common, keyServerAddress.String(a.ServerAddress))
				}
				in.tokens.Record(ctx, int64(a.PromptTokens), metric.WithAttributes(append(common, keyGenAITokenType.String("input"))...))
				in.tokens.Record(ctx, int64(a.CompletionTokens), metric.WithAttributes(append(common, keyGenAITokenType.String("output"))...))
			}
		}
	}

	// Breaker transitions: openings from the engine's exact count
	// (routes[].circuit_opens); the other transitions as the attempts saw
	// them, from one admission on a route to the next.
	for _, rs := range r.Routes {
		if rs.CircuitOpens > 0 {
			in.breaker.Add(ctx, int64(rs.CircuitOpens), metric.WithAttributes(keyRoute.String(rs.Name), keyCircuitState.String(breakerOpen)))
		}
	}
	routes := make([]string, 0, len(admissions))
	for name := range admissions {
		routes = append(routes, name)
	}
	slices.Sort(routes)
	for _, name := range routes {
		seen := admissions[name]
		slices.SortStableFunc(seen, func(a, b admission) int { return cmp.Compare(a.startMS, b.startMS) })
		for k := 1; k < len(seen); k++ {
			if to := seen[k].state; to != seen[k-1].state && to != breakerOpen {
				add(in.breaker, keyRoute.String(name), keyCircuitState.String(to))
			}
		}
	}
}

// requests returns the attempts of each model request of r once: the items
// of a batch (same review.Item.Request) share theirs.
func requests(r *review.Report) [][]review.Attempt {
	out := make([][]review.Attempt, 0, len(r.Items))
	seen := map[int]bool{}
	for i := range r.Items {
		it := &r.Items[i]
		if it.Request > 0 {
			if seen[it.Request] {
				continue
			}
			seen[it.Request] = true
		}
		out = append(out, it.Attempts)
	}
	return out
}
