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
func verifyFindings(ctx context.Context, start time.Time, p *Plan, eng *execution.Engine, opts Options, r *Report, findings []Finding, from []int, dropped *FindingsDropped) []Finding {
	if opts.Verify == "" || opts.Verify == VerifyOff {
		return findings
	}
	v := &Verification{Mode: opts.Verify, RejectedFindings: []Finding{}}
	r.Verification = v
	// Group the shown findings by chunk, in plan order.
	type group struct {
		chunk *hunks.Chunk
		idx   []int // into findings
	}
	var groups []*group
	byChunk := map[*hunks.Chunk]*group{}
	for k := range findings {
		if !findings[k].Severity.ShownAt(opts.ReportOn) {
			continue
		}
		c := p.Items[from[k]].Chunk
		g := byChunk[c]
		if g == nil {
			g = &group{chunk: c}
			byChunk[c] = g
			groups = append(groups, g)
		}
		g.idx = append(g.idx, k)
	}
	notVerified := func(ks []int, why string) {
		for _, k := range ks {
			findings[k].Verification, findings[k].VerificationReason = NotVerified, why
			v.NotVerified++
			if opts.Verify == VerifyRequired {
				r.Items[from[k]].Unverified++
			}
		}
	}
	if len(groups) == 0 {
		v.Skipped = "no findings to verify"
		return findings
	}
	all := func() []int {
		var ks []int
		for _, g := range groups {
			ks = append(ks, g.idx...)
		}
		return ks
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
			v.Skipped = fmt.Sprintf("no route %q", opts.VerifyRoute)
			notVerified(all(), v.Skipped)
			return findings
		}
	}
	maxTokens := cmp.Or(opts.MaxTokens, DefaultMaxTokens)
	items := make([]execution.Item, len(groups))
	var longest time.Duration
	for gi, g := range groups {
		fs := make([]*Finding, len(g.idx))
		for i, k := range g.idx {
			fs[i] = &findings[k]
		}
		items[gi] = execution.Item{Request: verifyRequest(g.chunk, opts.Change, fs, maxTokens), Accept: acceptVerdicts}
		_, eff, err := eng.Timeout(routes[0], items[gi].Request)
		if err != nil {
			v.Skipped = "verification request: " + err.Error()
			notVerified(all(), v.Skipped)
			return findings
		}
		longest = max(longest, eff)
	}
	pol := eng.Policy()
	windowEnd := start.Add(pol.Budget - pol.Reserve)
	remaining := time.Until(windowEnd)
	threshold := VerifyBudgetFactor * longest
	v.RemainingMS, v.ThresholdMS = remaining.Milliseconds(), threshold.Milliseconds()
	if remaining < threshold {
		v.Skipped = fmt.Sprintf("budget: %s left before the publish reserve, verification needs %d × %s", remaining.Round(time.Second), VerifyBudgetFactor, longest.Round(time.Second))
		notVerified(all(), v.Skipped)
		return findings
	}
	// A second engine over the same routes, whose window ends where the
	// review's does and whose caps are what the review left.
	pol.Budget = time.Until(windowEnd) + pol.Reserve
	if pol.MaxCostUSD > 0 {
		if pol.MaxCostUSD -= r.Usage.CostUSD; pol.MaxCostUSD <= 0 {
			v.Skipped = "cost cap: the primary items spent it"
			notVerified(all(), v.Skipped)
			return findings
		}
	}
	if pol.MaxTotalTokens > 0 {
		if pol.MaxTotalTokens -= r.Usage.PromptTokens + r.Usage.CompletionTokens; pol.MaxTotalTokens <= 0 {
			v.Skipped = "token cap: the primary items spent it"
			notVerified(all(), v.Skipped)
			return findings
		}
	}
	veng, err := execution.New(routes, pol, execution.Options{})
	if err != nil {
		v.Skipped = err.Error()
		notVerified(all(), v.Skipped)
		return findings
	}
	v.Ran, v.Requests = true, len(items)
	results := veng.Run(ctx, items, nil)
	idx := indexRoutes(veng)
	rejected := map[int]bool{}
	for gi, res := range results {
		for _, a := range res.Attempts {
			cost := idx.routes[a.Route].Cost(a.Usage)
			r.Usage.PromptTokens += a.Usage.PromptTokens
			r.Usage.CompletionTokens += a.Usage.CompletionTokens
			r.Usage.CachedTokens += a.Usage.CachedTokens
			r.Usage.CostUSD += cost
		}
		g := groups[gi]
		if res.Status != execution.StatusDone {
			notVerified(g.idx, "verification request "+cmp.Or(res.Reason, res.Class.String()))
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
				notVerified([]int{k}, "the verifier gave no verdict on it")
			case vd.Verdict == "reject":
				findings[k].Verification, findings[k].VerificationReason = Rejected, truncate(OneLine(vd.Reason), 300)
				rejected[k] = true
				v.Rejected++
			default:
				findings[k].Verification, findings[k].VerificationReason = Verified, truncate(OneLine(vd.Reason), 300)
				v.Verified++
			}
		}
	}
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
