package review

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/org/warden/execution"
)

// DryRun reports the plan without calling a model: every item is planned.
func DryRun(p *Plan, eng *execution.Engine, opts Options) *Report {
	r := newReport(p, eng, opts)
	r.Outcome = OutcomeDryRun
	var dropped FindingsDropped
	r.Findings = selectFindings(p.Own, opts.ReportOn, opts.MaxFindings, &dropped)
	for i, wi := range p.Items {
		r.Items[i].Status = StatusPlanned
		r.Items[i].TimeoutEffectiveMS = wi.TimeoutEffective.Milliseconds()
		r.Items[i].DeadlineMS = wi.Deadline.Milliseconds()
	}
	r.Summary = summarize(r.Items, len(r.Findings))
	r.Summary.FindingsDropped = dropped
	r.Coverage = coverageOf(p, r.Items, opts.LimitsOutOfScope)
	if opts.Verify != "" && opts.Verify != VerifyOff {
		on := "the review's routes"
		if opts.VerifyRoute != "" {
			on = "route " + opts.VerifyRoute
		}
		r.Verification = &Verification{Mode: opts.Verify, RejectedFindings: []Finding{}, Skipped: fmt.Sprintf(
			"dry run: would run after the review: one request per chunk with findings, on %s, when %d × its deadline is left before the publish reserve", on, VerifyBudgetFactor)}
	}
	return r
}

// Run sends every planned item through the engine, validates the answers
// into findings and decides the outcome. Findings of reviewed items are kept
// whatever happens to the others; an item that did not get a usable answer
// is failed or skipped, never "no findings".
//
// The items of a batch (Options.BatchSkills) are one request: they share
// its status, attempts and cost (split evenly), and its answer is validated
// per skill, so that one skill's unreadable findings fail that skill's item
// (bad_response) and not the others.
func Run(ctx context.Context, p *Plan, eng *execution.Engine, opts Options) *Report {
	start := time.Now()
	opts.Change = p.Change // verification requests carry the text the plan's do
	items, group, sizes := requests(p)
	notes := noteAnswers(items)
	guardTruncation(items)
	cached := opts.Cache.lookup(eng, items)
	results, stats := runUncached(ctx, eng, items, cached, opts.Progress)

	r := newReport(p, eng, opts)
	idx := indexRoutes(eng)
	var findings []Finding
	var from []int // the work item of each finding, for verification
	var dropped FindingsDropped
	var batch *batchAnswer
	for i, wi := range p.Items {
		g, it := group[i], &r.Items[i]
		res, size, first := results[g], sizes[g], i == 0 || group[i-1] != g
		it.TimeoutEffectiveMS, it.DeadlineMS = wi.TimeoutEffective.Milliseconds(), wi.Deadline.Milliseconds()
		it.Request, it.StartMS, it.DurationMS = g+1, res.Start.Milliseconds(), res.Duration.Milliseconds()
		idx.record(r, it, res, size, first)
		if a := cached[g]; a != nil {
			it.Cached, it.CachedModel, it.CachedEndpoint = true, a.Model, a.Endpoint
		}
		switch res.Status {
		case execution.StatusDone:
			if first && size > 1 {
				batch = readBatch(p, i, size, res, &dropped)
			}
			got := idx.answer(it, &p.Items[i], res, size, batch, &dropped)
			findings = append(findings, got...)
			from = append(from, slices.Repeat([]int{i}, len(got))...)
			// A new answer every item of its request could read is kept.
			if first && it.Status == StatusReviewed && (size == 1 || (batch != nil && len(batch.bad) == 0)) {
				opts.Cache.store(eng, items[g], res, cached[g])
			}
		case execution.StatusFailed:
			it.Status, it.Reason = StatusFailed, failureReason(res)
			if it.Reason != res.Class.String() && it.Reason != ReasonPromptTruncated && res.Class != execution.ClassRejected {
				it.Class = res.Class.String()
			}
			if n := len(res.Attempts); n > 0 {
				it.Route = res.Attempts[n-1].Route
			}
			if res.Class == execution.ClassBadResponse {
				it.Answer, it.AnswerProblem = notes[g].text, notes[g].problem
				var bad *execution.BadResponseError
				if it.AnswerProblem == "" && errors.As(res.Err, &bad) {
					it.AnswerProblem = bad.Reason // no answer to note: cut short, not JSON, empty
				}
			}
		default:
			it.Status, it.Reason = StatusSkipped, res.Reason
		}
	}
	findings = verifyFindings(ctx, start, p, eng, stats, opts, r, findings, from, &dropped)
	// warden's own findings were made without a model: nothing verifies them.
	findings = append(findings, p.Own...)
	r.Findings = selectFindings(findings, opts.ReportOn, opts.MaxFindings, &dropped)
	r.Summary = summarize(r.Items, len(r.Findings))
	r.Summary.FindingsDropped = dropped
	if opts.Cache != nil {
		r.Summary.CacheRejected = opts.Cache.Stats().Corrupt
	}
	r.Coverage = coverageOf(p, r.Items, opts.LimitsOutOfScope)
	r.Outcome = Decide(r.Items, &r.Coverage)
	r.Routes = routeStats(eng, stats)
	r.DurationMS = time.Since(start).Milliseconds()
	r.Diagnoses = Diagnose(r)
	return r
}

// requests makes one engine item per request; group[i] is work item i's,
// sizes[g] how many work items share request g (a batch).
func requests(p *Plan) (items []execution.Item, group, sizes []int) {
	group = make([]int, len(p.Items))
	for i, wi := range p.Items {
		if i > 0 && wi.Request == p.Items[i-1].Request {
			group[i] = group[i-1]
			sizes[group[i]]++
			continue
		}
		group[i] = len(items)
		items = append(items, execution.Item{Request: wi.Request, Accept: acceptAnswer})
		sizes = append(sizes, 1)
	}
	for g := range items {
		if sizes[g] > 1 {
			items[g].Accept = acceptBatch
		}
	}
	return items, group, sizes
}

// routeIndex is what the report needs of each route, by name.
type routeIndex struct {
	routes  map[string]execution.Route
	servers map[string]hostPort
}

type hostPort struct {
	host string
	port int
}

func indexRoutes(eng *execution.Engine) routeIndex {
	idx := routeIndex{routes: map[string]execution.Route{}, servers: map[string]hostPort{}}
	for _, rt := range eng.Routes() {
		idx.routes[rt.Name] = rt
		host, port := serverAddress(rt.BaseURL)
		idx.servers[rt.Name] = hostPort{host, port}
	}
	return idx
}

// record adds the attempts of res to item it, its cost (a batch's split
// evenly over its size items) and, once per request (first), the usage to
// the report.
func (idx routeIndex) record(r *Report, it *Item, res execution.Result, size int, first bool) {
	for _, a := range res.Attempts {
		it.Attempts = append(it.Attempts, idx.attempt(a))
		cost := idx.routes[a.Route].Cost(a.Usage)
		it.CostUSD += cost / float64(size)
		if first { // a request's usage counts once, however many items share it
			r.Usage.PromptTokens += a.Usage.PromptTokens
			r.Usage.CompletionTokens += a.Usage.CompletionTokens
			r.Usage.CachedTokens += a.Usage.CachedTokens
			r.Usage.CostUSD += cost
		}
	}
}

// attempt is the report's record of an engine attempt.
func (idx routeIndex) attempt(a execution.Attempt) Attempt {
	server := idx.servers[a.Route]
	return Attempt{
		Route:              a.Route,
		Model:              a.Model,
		Kind:               a.Kind.String(),
		TimeoutBaseMS:      a.TimeoutBase.Milliseconds(),
		TimeoutEffectiveMS: a.TimeoutEffective.Milliseconds(),
		DurationMS:         a.Duration.Milliseconds(),
		Class:              a.Class.String(),
		Reason:             a.Reason,
		Number:             a.Number,
		StartMS:            a.Start.Milliseconds(),
		DeadlineMS:         a.Deadline.Milliseconds(),
		ItemRemainingMS:    a.ItemRemaining.Milliseconds(),
		ReviewRemainingMS:  a.ReviewRemaining.Milliseconds(),
		QueueWaitMS:        a.QueueWait.Milliseconds(),
		BackoffMS:          a.Backoff.Milliseconds(),
		RetryAfterMS:       a.RetryAfter.Milliseconds(),
		TTFTMS:             a.FirstByte.Milliseconds(),
		PromptTokens:       a.Usage.PromptTokens,
		CompletionTokens:   a.Usage.CompletionTokens,
		CachedTokens:       a.Usage.CachedTokens,
		ResponseModel:      a.ResponseModel,
		Decision:           a.Decision,
		Breaker:            a.Breaker,
		ServerAddress:      server.host,
		ServerPort:         server.port,
	}
}

// readBatch parses the answer of the batch that starts at work item i;
// nil when it cannot be read.
func readBatch(p *Plan, i, size int, res execution.Result, dropped *FindingsDropped) *batchAnswer {
	names := make([]string, size)
	for k := range size {
		names[k] = p.Items[i+k].Skill.Name
	}
	batch, err := parseBatchAnswer(res.Response.Content, names)
	if err != nil {
		return nil
	}
	dropped.UnknownSkill += batch.dropped
	return batch
}

// answer marks item it reviewed and returns its validated findings, from
// its own answer or its share of the batch's; an answer that cannot be
// read fails the item (bad_response), never calls it clean.
func (idx routeIndex) answer(it *Item, wi *WorkItem, res execution.Result, size int, batch *batchAnswer, dropped *FindingsDropped) []Finding {
	it.Status, it.Route = StatusReviewed, res.Route
	model := cmp.Or(res.Response.Model, idx.routes[res.Route].Model)
	base := Finding{Skill: wi.Skill.Name, Path: wi.Chunk.Path, Route: res.Route, Model: model}
	lines := lineRange{wi.Chunk.StartLine, wi.Chunk.EndLine}
	raw, ok := []rawFinding(nil), false
	if size == 1 {
		var err error
		raw, err = ParseAnswer(res.Response.Content)
		ok = err == nil // Accept passed it, so this cannot fail
	} else if batch != nil && batch.bad[wi.Skill.Name] == nil {
		raw, ok = batch.findings[wi.Skill.Name], true
	}
	if !ok {
		it.Status, it.Reason = StatusFailed, execution.ClassBadResponse.String()
		it.Answer, it.AnswerProblem = noteAnswer(res.Response, errNotContract)
		return nil
	}
	got := validate(raw, lines, base, dropped)
	for i := range got {
		identify(wi.Chunk, &got[i])
	}
	return got
}

// serverAddress is the host and explicit port of a route's base URL, for
// the attempts' server_address and server_port: never its path, query or
// credentials. A URL that does not parse gives neither.
func serverAddress(baseURL string) (host string, port int) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return "", 0
	}
	port, _ = strconv.Atoi(u.Port())
	return u.Hostname(), port
}

// acceptAnswer is the engine's check of an answer: one that cannot be parsed
// is a bad response (retried by the engine's rules), never "no findings".
func acceptAnswer(resp *execution.Response) error {
	if _, err := ParseAnswer(resp.Content); err != nil {
		return badAnswer(resp, err)
	}
	return nil
}

func badAnswer(resp *execution.Response, err error) error {
	reason := "unparseable answer"
	if resp.FinishReason == "length" {
		reason = "answer cut off at max_tokens"
	}
	return &execution.BadResponseError{Reason: reason, Err: err}
}

// acceptBatch is the engine's check of a batched answer: it needs a findings
// array; each finding is read (and may fail its own skill) after.
func acceptBatch(resp *execution.Response) error {
	if _, err := decodeAnswer[json.RawMessage](resp.Content); err != nil {
		return badAnswer(resp, err)
	}
	return nil
}

// Decide applies the outcome rules of DESIGN.md §4 to finished items and
// the review's coverage: complete only when every item was reviewed and
// every changed line in scope was (cov; nil when unknown, then the items
// alone decide). An item with findings left not verified under [review]
// verify = "required" (Item.Unverified) keeps a review from being
// complete. A review in which no item was reviewed, one failing on the
// provider, is provider-unavailable; anything else incomplete is partial
// (a limit that dropped code in scope, a cap, the budget).
func Decide(items []Item, cov *Coverage) Outcome {
	reviewed, failed, unverified := 0, 0, 0
	for _, it := range items {
		switch it.Status {
		case StatusReviewed:
			reviewed++
			if it.Unverified > 0 {
				unverified++
			}
		case StatusFailed:
			failed++
		}
	}
	switch {
	case reviewed == len(items) && unverified == 0 && (cov == nil || cov.Complete()):
		return OutcomeComplete
	case reviewed == 0 && failed > 0:
		return OutcomeProviderUnavailable
	default:
		return OutcomePartial
	}
}

// selectFindings orders findings most severe first (then by path and line),
// drops those below reportOn and keeps at most max (0: all), counting what
// it drops in drop.
func selectFindings(fs []Finding, reportOn Severity, max int, drop *FindingsDropped) []Finding {
	out := make([]Finding, 0, len(fs))
	for _, f := range fs {
		if f.Severity.ShownAt(reportOn) {
			out = append(out, f)
		} else {
			drop.BelowReportOn++
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(b.Severity, a.Severity),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.StartLine, b.StartLine),
			cmp.Compare(a.Skill, b.Skill),
		)
	})
	if max > 0 && len(out) > max {
		drop.MaxFindings += len(out) - max
		out = out[:max]
	}
	return out
}

func summarize(items []Item, findings int) Summary {
	s := Summary{Planned: len(items), Findings: findings}
	for _, it := range items {
		switch it.Status {
		case StatusReviewed:
			s.Reviewed++
			if it.Cached {
				s.Cached++
			}
		case StatusFailed:
			s.Failed++
		case StatusSkipped:
			s.Skipped++
		}
	}
	return s
}

// newReport fills what a report holds before any item has run.
func newReport(p *Plan, eng *execution.Engine, opts Options) *Report {
	r := &Report{
		Schema:     Schema,
		Findings:   []Finding{},
		Items:      make([]Item, len(p.Items)),
		Ignored:    slices.Clone(p.Ignored),
		Coverage:   Coverage{NotReviewed: []Gap{}, Excluded: []Gap{}},
		Routes:     []RouteStats{},
		Policy:     policyOf(eng, opts),
		Diagnoses:  []Diagnosis{},
		Redacted:   slices.Clone(p.Redacted),
		Injections: slices.Clone(p.Injections),
	}
	if r.Ignored == nil {
		r.Ignored = []Ignored{}
	}
	slices.SortStableFunc(r.Ignored, func(a, b Ignored) int { return cmp.Compare(a.Path, b.Path) })
	for i, wi := range p.Items {
		r.Items[i] = Item{
			Skill:     wi.Skill.Name,
			Path:      wi.Chunk.Path,
			StartLine: wi.Chunk.StartLine,
			EndLine:   wi.Chunk.EndLine,
			Priority:  wi.Chunk.Priority,
			Why:       wi.Chunk.Why,
			Attempts:  []Attempt{},
		}
		if wi.Context != nil {
			r.Items[i].Context, r.Items[i].ContextChars = wi.Context.Describe(), wi.Context.Chars
		}
		r.Items[i].Instructions, r.Items[i].InstructionsChars = itemInstructions(wi.Instructions)
	}
	r.Instructions, r.SkippedSkills, r.SkillWarnings = p.Instructions, p.SkippedSkills, p.SkillWarnings
	return r
}

// policyOf records the policy the review runs under, and its routes as
// configured: never a key, only the name of its variable, and of each base
// URL only the host.
func policyOf(eng *execution.Engine, opts Options) Policy {
	p := eng.Policy()
	pol := Policy{
		BudgetMS:           p.Budget.Milliseconds(),
		ItemBudgetMS:       p.ItemBudget.Milliseconds(),
		RequestTimeoutMS:   p.RequestTimeout.Milliseconds(),
		MinAttemptMS:       p.MinAttempt.Milliseconds(),
		ReserveMS:          p.Reserve.Milliseconds(),
		MaxConcurrency:     p.MaxConcurrency,
		MaxRetriesPerRoute: p.MaxRetriesPerRoute,
		BackoffMS:          p.Backoff.Milliseconds(),
		RateLimitBackoffMS: p.RateLimitBackoff.Milliseconds(),
		BaselineBodyChars:  execution.BaselineBodyChars,
		BaselineMaxTokens:  execution.BaselineMaxTokens,
		BaselinePoints:     execution.BaselinePoints,
		MaxMultiplier:      execution.MaxMultiplier,
		TimeoutCeilingMS:   execution.TimeoutCeiling.Milliseconds(),
		FailOn:             opts.FailOn.String(),
		ReportOn:           opts.ReportOn.String(),
		MaxFindings:        opts.MaxFindings,
		MaxCostUSD:         p.MaxCostUSD,
		MaxTotalTokens:     p.MaxTotalTokens,
		BatchSkills:        opts.BatchSkills,
		RetryBudgetRatio:   p.RetryBudgetRatio,
		RetryBudgetMin:     p.RetryBudgetMin,
		MaxRetryAfterMS:    p.MaxRetryAfter.Milliseconds(),
		MaxQueueWaitMS:     p.MaxQueueWait.Milliseconds(),
		CooldownWaitMaxMS:  p.CooldownWaitMax.Milliseconds(),
		MaxRetriesPerItem:  p.MaxRetriesPerItem,
		ProbeTimeoutMS:     p.ProbeTimeout.Milliseconds(),
		OutagePatienceMS:   p.Patience().Milliseconds(),
		Routes:             []RoutePolicy{},
	}
	for _, d := range p.BackoffSchedule {
		pol.BackoffScheduleMS = append(pol.BackoffScheduleMS, d.Milliseconds())
	}
	for i, rt := range eng.Routes() {
		times := eng.RouteTimes(i)
		timeout, limit := times.Base, rt.MaxConcurrency
		if limit <= 0 {
			limit = p.MaxConcurrency
		}
		pol.Routes = append(pol.Routes, RoutePolicy{
			Name:                    rt.Name,
			Model:                   rt.Model,
			BaseURLHost:             urlHost(rt.BaseURL),
			APIKeyEnv:               rt.APIKeyEnv,
			RequestTimeoutMS:        timeout.Milliseconds(),
			MaxConcurrency:          limit,
			Stream:                  rt.Stream,
			FirstTokenTimeoutMS:     rt.FirstTokenTimeout.Milliseconds(),
			IdleTimeoutMS:           rt.IdleTimeout.Milliseconds(),
			MinIntervalMS:           rt.MinInterval.Milliseconds(),
			JSONSchema:              !rt.NoSchema,
			ResponseHealing:         rt.ResponseHealing,
			FailoverOnAuth:          rt.FailoverOnAuth,
			ContextWindow:           rt.ContextWindow,
			PriceInputPerMTok:       rt.PriceInputPerMTok,
			PriceOutputPerMTok:      rt.PriceOutputPerMTok,
			PriceCachedInputPerMTok: rt.PriceCachedInputPerMTok,
			Profile:                 rt.Profile.String(),
			FloorMS:                 times.Floor.Milliseconds(),
			AttemptDeadlineMS:       times.Deadline.Milliseconds(),
			RetriesPerRoute:         times.Retries,
			BreakerWindowMS:         times.Window.Milliseconds(),
		})
	}
	return pol
}

// urlHost is the host[:port] of a base URL: never its scheme's
// credentials, path or query, which may carry a key. "" when it does not
// parse.
func urlHost(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	return u.Host
}

// routeStats reports a run's per-route health, in failover order, with
// each route's cost at its configured prices.
func routeStats(eng *execution.Engine, stats []execution.RouteStats) []RouteStats {
	out := make([]RouteStats, 0, len(stats))
	for i, s := range stats {
		rt := eng.Routes()[i]
		rs := RouteStats{
			Name:             s.Name,
			Model:            s.Model,
			Calls:            s.Calls,
			OK:               s.OK,
			Failed:           s.Failed,
			Timeouts:         s.Timeouts,
			P50MS:            s.P50.Milliseconds(),
			P95MS:            s.P95.Milliseconds(),
			CircuitOpens:     s.CircuitOpens,
			CostUSD:          rt.Cost(s.Usage),
			TTFTP50MS:        s.TTFTP50.Milliseconds(),
			TTFTP95MS:        s.TTFTP95.Milliseconds(),
			FailoversIn:      s.FailoversIn,
			FailoversOut:     s.FailoversOut,
			Retries:          s.Retries,
			Rejected:         s.Rejected,
			Cancelled:        s.Cancelled,
			ConcurrencyCuts:  s.ConcurrencyCuts,
			MinConcurrency:   s.MinConcurrency,
			PromptTokens:     s.Usage.PromptTokens,
			CompletionTokens: s.Usage.CompletionTokens,
			CachedTokens:     s.Usage.CachedTokens,
			Priced:           rt.PriceInputPerMTok > 0 || rt.PriceOutputPerMTok > 0 || rt.PriceCachedInputPerMTok > 0,
		}
		if s.Disabled {
			rs.Disabled = s.DisabledClass.String()
		}
		out = append(out, rs)
	}
	return out
}
