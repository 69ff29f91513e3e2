package review

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
)

// VerifyMode says whether findings are re-checked by a verification
// request after the primary items ([review] verify).
type VerifyMode string

// The verification modes.
const (
	// VerifyOff sends no verification request (the default).
	VerifyOff VerifyMode = "off"
	// VerifyAuto verifies when the budget holds it; a finding it could not
	// verify is posted, marked not verified.
	VerifyAuto VerifyMode = "auto"
	// VerifyRequired verifies like auto, and a finding left not verified
	// makes the review partial (Item.Unverified, read by Decide).
	VerifyRequired VerifyMode = "required"
)

// ParseVerifyMode reads off, auto or required ("" is off).
func ParseVerifyMode(s string) (VerifyMode, error) {
	switch m := VerifyMode(strings.ToLower(strings.TrimSpace(s))); m {
	case "", VerifyOff:
		return VerifyOff, nil
	case VerifyAuto, VerifyRequired:
		return m, nil
	}
	return "", fmt.Errorf("verify %q: want off, auto or required", s)
}

// A finding's verification state (Finding.Verification).
const (
	Verified    = "verified"
	Rejected    = "rejected"
	NotVerified = "not_verified"
)

// VerifyBudgetFactor is the verification threshold: verification starts
// only when the review's time left before the publish reserve is at least
// this many times the longest verification request's deadline. Two: one
// deadline for the request, and one more for a retry or a failover, so
// that optional work never eats into the time the review needs to end and
// publish. Verification runs after every primary item has ended, so it is
// also the first work skipped when the budget runs low.
const VerifyBudgetFactor = 2

// Verification is what the verification pass did (Report.Verification).
type Verification struct {
	Mode VerifyMode `json:"mode"`
	Ran  bool       `json:"ran"`
	// Skipped says why verification did not run, or did not run for
	// every finding: "budget: ...", "cost cap", "no findings".
	Skipped     string `json:"skipped,omitempty"`
	RemainingMS int64  `json:"remaining_ms,omitempty"` // time left before the reserve when it was decided
	ThresholdMS int64  `json:"threshold_ms,omitempty"` // VerifyBudgetFactor × the longest verification deadline
	Requests    int    `json:"requests"`
	Verified    int    `json:"verified"`
	Rejected    int    `json:"rejected"`
	NotVerified int    `json:"not_verified"`
	// RejectedFindings are the findings the verifier rejected: not posted,
	// kept here with the verifier's reason.
	RejectedFindings []Finding `json:"rejected_findings"`
	// Routes are the verification requests' route stats, as
	// Report.Routes are the review's (additive to the contract).
	Routes []RouteStats `json:"routes,omitempty"`
}

const verifierPreamble = "You are warden's verifier. A code reviewer reported the findings listed in the request about the change shown there. You do not review the change again and you add nothing: for each finding, check it against the shown lines and decide whether it is a real problem in this change (confirm) or not (reject). Reject a finding that the shown code does not support, that is about lines not shown, or that is only a matter of taste."

const verifierContract = `## Output contract

Answer with one JSON object and nothing else:

{"verdicts":[{"id":N,"verdict":"confirm|reject","reason":"..."}]}

- One verdict per finding, with the finding's id as listed.
- reason: one short sentence saying why.`

var verdictSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "verdicts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "integer"},
          "verdict": {"type": "string", "enum": ["confirm", "reject"]},
          "reason": {"type": "string"}
        },
        "required": ["id", "verdict", "reason"],
        "additionalProperties": false
      }
    }
  },
  "required": ["verdicts"],
  "additionalProperties": false
}`)

var verifierSystem = strings.Join([]string{verifierPreamble, verifierContract, untrustedRules}, "\n\n")

type verdict struct {
	ID      int    `json:"id"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

func parseVerdicts(content string) ([]verdict, error) {
	s := strings.TrimSpace(content)
	if i := strings.IndexByte(s, '{'); i >= 0 {
		s = s[i:]
	}
	var a struct {
		Verdicts *[]verdict `json:"verdicts"`
	}
	if err := json.NewDecoder(strings.NewReader(s)).Decode(&a); err != nil {
		return nil, err
	}
	if a.Verdicts == nil {
		return nil, errors.New("no verdicts array")
	}
	return *a.Verdicts, nil
}

func acceptVerdicts(resp *execution.Response) error {
	if _, err := parseVerdicts(resp.Content); err != nil {
		return &execution.BadResponseError{Reason: "unreadable verdicts", Err: err}
	}
	return nil
}

// verifyRequest is the read-only verification request of the findings
// (ids 1..n) of one chunk: the chunk as the reviewer saw it and the
// findings, all inside the untrusted fence (the findings are a model's
// words about the author's code).
func verifyRequest(c *hunks.Chunk, change Change, fs []*Finding, maxTokens int) *execution.Request {
	var b strings.Builder
	b.WriteString(renderChange(c, change))
	b.WriteString("\nFindings to check:\n")
	for i, f := range fs {
		fmt.Fprintf(&b, "[%d] lines %d-%d, %s, %s: %s\n", i+1, f.StartLine, f.EndLine, f.Severity, f.Skill, OneLine(f.Title))
		if d := strings.TrimSpace(f.Description); d != "" {
			fmt.Fprintf(&b, "    %s\n", truncate(OneLine(d), 1000))
		}
	}
	data := b.String()
	tag := delimiter(data)
	user := fmt.Sprintf("Check each finding about lines %d to %d of the file in the data below, and answer with one verdict per finding.\n\n<<<%s\n%s%s>>>\n",
		c.StartLine, c.EndLine, tag, data, tag)
	return &execution.Request{
		Messages:  []execution.Message{{Role: "system", Content: verifierSystem}, {Role: "user", Content: user}},
		MaxTokens: maxTokens,
		Schema:    &execution.Schema{Name: "warden_verdicts", Schema: verdictSchema, Strict: true},
	}
}

// verifyFindings is the optional verification pass, after the primary
// items: one request per chunk with findings, on opts.VerifyRoute (else
// the review's routes, in their order), in what is left of the review's
// window before the publish reserve (VerifyBudgetFactor), and within what
// is left of its cost and token caps. It sets every finding's
// Verification, returns the findings to keep (rejected ones go to
// r.Verification and dropped.Rejected), and under VerifyRequired counts a
// finding left not verified on its item (Item.Unverified).
//
// from[k] is the work item findings[k] came from; findings below reportOn
// are left alone (they are not shown anyway).
//
// health is the review's route stats: a route the review left disabled or
// with its breaker open is not sent verification requests (a new run would
// start its breakers afresh and call a route known to be failing).
func verifyFindings(ctx context.Context, start time.Time, p *Plan, eng *execution.Engine, health []execution.RouteStats, opts Options, r *Report, findings []Finding, from []int, dropped *FindingsDropped) []Finding {
	if opts.Verify == "" || opts.Verify == VerifyOff {
		return findings
	}
	vr := &verifier{opts: opts, r: r, findings: findings, from: from, v: &Verification{Mode: opts.Verify, RejectedFindings: []Finding{}}}
	r.Verification = vr.v
	vr.group(p)
	if len(vr.groups) == 0 {
		return vr.skip("no findings to verify")
	}
	routes := eng.Routes()
	if opts.VerifyRoute != "" {
		routes = nil
		for _, rt := range eng.Routes() {
			if rt.Name == opts.VerifyRoute {
				routes = []execution.Route{rt}
			}
		}
		if routes == nil { // Prepare checks the name; a caller of Run may not have
			return vr.skip(fmt.Sprintf("no route %q", opts.VerifyRoute))
		}
	}
	routes, unhealthy := healthyRoutes(routes, health)
	if len(routes) == 0 {
		return vr.skip("no healthy route: " + strings.Join(unhealthy, ", "))
	}
	items, longest, err := vr.requests(eng, routes[0])
	if err != nil {
		return vr.skip("verification request: " + err.Error())
	}
	veng, why := vr.engine(start, eng, routes, longest)
	if veng == nil {
		return vr.skip(why)
	}
	vr.v.Ran, vr.v.Requests = true, len(items)
	v := vr.v
	results, stats := veng.RunStats(ctx, items, nil)
	v.Routes = routeStats(veng, stats)
	rejected := vr.record(results, indexRoutes(veng))
	if v.NotVerified > 0 && v.Skipped == "" {
		v.Skipped = fmt.Sprintf("%d findings not verified (see each finding's reason)", v.NotVerified)
	}
	keep := findings[:0:0]
	for k, f := range findings {
		if rejected[k] {
			v.RejectedFindings = append(v.RejectedFindings, f)
			dropped.Rejected++
			continue
		}
		keep = append(keep, f)
	}
	return keep
}

// healthyRoutes are the routes the review left usable (not disabled, the
// breaker not open), and the others with why.
func healthyRoutes(routes []execution.Route, health []execution.RouteStats) (ok []execution.Route, not []string) {
	state := map[string]execution.RouteStats{}
	for _, s := range health {
		state[s.Name] = s
	}
	for _, rt := range routes {
		switch s := state[rt.Name]; {
		case s.Disabled:
			not = append(not, fmt.Sprintf("%s disabled (%s)", rt.Name, s.DisabledClass))
		case s.Breaker == execution.BreakerOpen:
			not = append(not, rt.Name+" breaker open")
		default:
			ok = append(ok, rt)
		}
	}
	return ok, not
}

// verifier is the state of one verification pass over a report's findings.
type verifier struct {
	opts     Options
	r        *Report
	findings []Finding
	from     []int // from[k] is the work item findings[k] came from
	v        *Verification
	groups   []*verifyGroup
}

// verifyGroup is the shown findings of one chunk.
type verifyGroup struct {
	chunk *hunks.Chunk
	idx   []int // into findings
}

// group groups the shown findings by chunk, in plan order.
func (vr *verifier) group(p *Plan) {
	byChunk := map[*hunks.Chunk]*verifyGroup{}
	for k := range vr.findings {
		if !vr.findings[k].Severity.ShownAt(vr.opts.ReportOn) {
			continue
		}
		c := p.Items[vr.from[k]].Chunk
		g := byChunk[c]
		if g == nil {
			g = &verifyGroup{chunk: c}
			byChunk[c] = g
			vr.groups = append(vr.groups, g)
		}
		g.idx = append(g.idx, k)
	}
}

// notVerified marks findings ks not verified, for why.
func (vr *verifier) notVerified(ks []int, why string) {
	for _, k := range ks {
		vr.findings[k].Verification, vr.findings[k].VerificationReason = NotVerified, why
		vr.v.NotVerified++
		if vr.opts.Verify == VerifyRequired {
			vr.r.Items[vr.from[k]].Unverified++
		}
	}
}

// skip skips the whole pass for why: every grouped finding is not verified.
func (vr *verifier) skip(why string) []Finding {
	vr.v.Skipped = why
	for _, g := range vr.groups {
		vr.notVerified(g.idx, why)
	}
	return vr.findings
}

// requests are the verification requests, one per group, and the longest
// effective timeout of one on route rt.
func (vr *verifier) requests(eng *execution.Engine, rt execution.Route) ([]execution.Item, time.Duration, error) {
	maxTokens := cmp.Or(vr.opts.MaxTokens, DefaultMaxTokens)
	items := make([]execution.Item, len(vr.groups))
	var longest time.Duration
	for gi, g := range vr.groups {
		fs := make([]*Finding, len(g.idx))
		for i, k := range g.idx {
			fs[i] = &vr.findings[k]
		}
		items[gi] = execution.Item{Request: verifyRequest(g.chunk, vr.opts.Change, fs, maxTokens), Accept: acceptVerdicts}
		_, eff, err := eng.Timeout(rt, items[gi].Request)
		if err != nil {
			return nil, 0, err
		}
		longest = max(longest, eff)
	}
	return items, longest, nil
}

// engine is a second engine over routes, whose window ends where the
// review's does and whose caps are what the review left; nil and why when
// the remaining budget or caps do not hold the pass.
func (vr *verifier) engine(start time.Time, eng *execution.Engine, routes []execution.Route, longest time.Duration) (*execution.Engine, string) {
	v, r := vr.v, vr.r
	pol := eng.Policy()
	windowEnd := start.Add(pol.Budget - pol.Reserve)
	remaining := time.Until(windowEnd)
	threshold := VerifyBudgetFactor * longest
	v.RemainingMS, v.ThresholdMS = remaining.Milliseconds(), threshold.Milliseconds()
	if remaining < threshold {
		return nil, fmt.Sprintf("budget: %s left before the publish reserve, verification needs %d × %s", remaining.Round(time.Second), VerifyBudgetFactor, longest.Round(time.Second))
	}
	pol.Budget = time.Until(windowEnd) + pol.Reserve
	if pol.MaxCostUSD > 0 {
		if pol.MaxCostUSD -= r.Usage.CostUSD; pol.MaxCostUSD <= 0 {
			return nil, "cost cap: the primary items spent it"
		}
	}
	if pol.MaxTotalTokens > 0 {
		if pol.MaxTotalTokens -= r.Usage.PromptTokens + r.Usage.CompletionTokens; pol.MaxTotalTokens <= 0 {
			return nil, "token cap: the primary items spent it"
		}
	}
	veng, err := execution.New(routes, pol, execution.Options{})
	if err != nil {
		return nil, err.Error()
	}
	return veng, ""
}

// record adds the verification requests' usage to the report and each
// verdict to its finding; it returns the rejected findings' indexes.
func (vr *verifier) record(results []execution.Result, idx routeIndex) map[int]bool {
	r, v := vr.r, vr.v
	rejected := map[int]bool{}
	for gi, res := range results {
		for _, a := range res.Attempts {
			cost := idx.routes[a.Route].Cost(a.Usage)
			r.Usage.PromptTokens += a.Usage.PromptTokens
			r.Usage.CompletionTokens += a.Usage.CompletionTokens
			r.Usage.CachedTokens += a.Usage.CachedTokens
			r.Usage.CostUSD += cost
		}
		g := vr.groups[gi]
		if res.Status != execution.StatusDone {
			vr.notVerified(g.idx, "verification request "+cmp.Or(res.Reason, res.Class.String()))
			continue
		}
		verdicts, _ := parseVerdicts(res.Response.Content) // Accept read it
		got := map[int]verdict{}
		for _, vd := range verdicts {
			got[vd.ID] = vd
		}
		for i, k := range g.idx {
			vd, ok := got[i+1]
			switch {
			case !ok:
				vr.notVerified([]int{k}, "the verifier gave no verdict on it")
			case vd.Verdict == "reject":
				vr.findings[k].Verification, vr.findings[k].VerificationReason = Rejected, truncate(OneLine(vd.Reason), 300)
				rejected[k] = true
				v.Rejected++
			default:
				vr.findings[k].Verification, vr.findings[k].VerificationReason = Verified, truncate(OneLine(vd.Reason), 300)
				v.Verified++
			}
		}
	}
	return rejected
}
