package review

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
)

var (
	allowedLines = regexp.MustCompile(`may report on are (\d+) to (\d+)`)
	findingIDs   = regexp.MustCompile(`(?m)^\[(\d+)\] lines`)
)

// verifyModel answers primary requests after primaryLatency with two
// findings each (on the first two lines the request allows) and
// verification requests after 5 s by rejecting every odd id and confirming
// every even one; verifierFails, when set, makes every verification answer
// prose.
func verifyModel(primaryLatency time.Duration, verifierFails bool) *fakeModel {
	return &fakeModel{script: func(req *execution.Request) fakeopenai.Answer {
		user := req.Messages[1].Content
		if strings.HasPrefix(req.Messages[0].Content, "You are warden's verifier") {
			if verifierFails {
				return fakeopenai.Answer{Delay: 5 * time.Second, Content: "I cannot help with that."}
			}
			var vs []string
			for _, m := range findingIDs.FindAllStringSubmatch(user, -1) {
				id, _ := strconv.Atoi(m[1])
				v := "confirm"
				if id%2 == 1 {
					v = "reject"
				}
				vs = append(vs, fmt.Sprintf(`{"id":%d,"verdict":%q,"reason":"checked line by line"}`, id, v))
			}
			return fakeopenai.Answer{Delay: 5 * time.Second, Content: `{"verdicts":[` + strings.Join(vs, ",") + `]}`}
		}
		m := allowedLines.FindStringSubmatch(user)
		lo, _ := strconv.Atoi(m[1])
		return fakeopenai.Answer{Delay: primaryLatency, Content: fmt.Sprintf(`{"findings":[
				{"severity":"high","title":"first","description":"d","start_line":%d,"end_line":%d,"suggestion":"","confidence":0.9},
				{"severity":"medium","title":"second","description":"d","start_line":%d,"end_line":%d,"suggestion":"","confidence":0.5}]}`, lo, lo, lo+1, lo+1)}
	}}
}

func verifyRun(t *testing.T, m *fakeModel, mode VerifyMode, pol func(*execution.Policy)) (*Report, *Plan) {
	t.Helper()
	_, hp, _ := fixture(t, fixtureFiles[1:3], hunks.Options{})
	eng := newEngine(t, m, nil, pol)
	opts := Options{Skills: builtins()[:1], Verify: mode}
	p, err := NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	return Run(t.Context(), p, eng, opts), p
}

// TestVerifierRejectsHalf: a verifier that rejects half the findings leaves
// only the other half in the report (what every sink posts), each marked
// verified with the verifier's reason; the rejected are counted (dropped
// and in Report.Verification) and the review is complete.
func TestVerifierRejectsHalf(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r, p := verifyRun(t, verifyModel(30*time.Second, false), VerifyAuto, nil)
		found := 2 * len(p.Items)
		v := r.Verification
		if v == nil || !v.Ran || v.Requests != len(p.Items) || v.Verified != found/2 || v.Rejected != found/2 || v.NotVerified != 0 {
			t.Fatalf("verification = %+v, want %d requests, %d verified and %d rejected", v, len(p.Items), found/2, found/2)
		}
		if len(r.Findings) != found/2 || r.Summary.FindingsDropped.Rejected != found/2 || len(v.RejectedFindings) != found/2 {
			t.Errorf("%d findings kept, %d dropped as rejected, %d listed; want %d each", len(r.Findings), r.Summary.FindingsDropped.Rejected, len(v.RejectedFindings), found/2)
		}
		for _, f := range r.Findings {
			if f.Verification != Verified || f.Title != "second" || f.VerificationReason != "checked line by line" {
				t.Errorf("kept finding %q is %q (%q), want the confirmed second ones, verified", f.Title, f.Verification, f.VerificationReason)
			}
		}
		for _, f := range v.RejectedFindings {
			if f.Verification != Rejected || f.Title != "first" {
				t.Errorf("rejected finding %q is %q", f.Title, f.Verification)
			}
		}
		if r.Outcome != OutcomeComplete {
			t.Errorf("outcome %q, want complete", r.Outcome)
		}
	})
}

// TestVerificationSkippedOnLowBudget: when the primary items leave less
// than VerifyBudgetFactor verification deadlines before the publish
// reserve, no verification request is sent, the report says why, and every
// finding is posted marked not verified; under required the review is
// partial (through Decide), under auto it stays complete.
func TestVerificationSkippedOnLowBudget(t *testing.T) {
	t.Parallel()
	// 12 minutes, 30 s reserve, 10-minute base deadlines (the built-in
	// prompts keep a request at its base); the primary answers take 9
	// minutes, leaving 2.5 minutes for verification, which needs 2 × (at
	// least) 10 minutes.
	pol := func(p *execution.Policy) {
		p.Budget, p.Reserve, p.RequestTimeout, p.ItemBudget = 12*time.Minute, 30*time.Second, 10*time.Minute, 11*time.Minute
	}
	for _, mode := range []VerifyMode{VerifyAuto, VerifyRequired} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				m := verifyModel(9*time.Minute, false)
				r, p := verifyRun(t, m, mode, pol)
				for _, c := range m.recorded() {
					if strings.HasPrefix(c.prompt, "You are warden's verifier") {
						t.Fatalf("a verification request was sent with %s left", r.Verification.Skipped)
					}
				}
				v := r.Verification
				if v == nil || v.Ran || !strings.HasPrefix(v.Skipped, "budget: 2m30s left before the publish reserve, verification needs 2 × ") || v.NotVerified != 2*len(p.Items) {
					t.Fatalf("verification = %+v, want skipped for the budget", v)
				}
				if v.ThresholdMS < 2*(10*time.Minute).Milliseconds() || v.RemainingMS != (150*time.Second).Milliseconds() {
					t.Errorf("threshold %d ms, remaining %d ms", v.ThresholdMS, v.RemainingMS)
				}
				if len(r.Findings) != 2*len(p.Items) {
					t.Errorf("%d findings posted, want all %d", len(r.Findings), 2*len(p.Items))
				}
				for _, f := range r.Findings {
					if f.Verification != NotVerified || !strings.HasPrefix(f.VerificationReason, "budget: ") {
						t.Errorf("finding %q is %q (%q), want not verified for the budget", f.Title, f.Verification, f.VerificationReason)
					}
				}
				want := map[VerifyMode]Outcome{VerifyAuto: OutcomeComplete, VerifyRequired: OutcomePartial}[mode]
				if r.Outcome != want || r.Complete() != (want == OutcomeComplete) {
					t.Errorf("outcome %q, want %q", r.Outcome, want)
				}
			})
		})
	}
}

// TestVerifierFailsUnderRequired: a verifier whose answers cannot be read
// leaves every finding not verified with the request's failure as the
// reason; required makes the review partial, and no finding is rejected.
func TestVerifierFailsUnderRequired(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r, p := verifyRun(t, verifyModel(time.Second, true), VerifyRequired, nil)
		v := r.Verification
		if v == nil || !v.Ran || v.NotVerified != 2*len(p.Items) || v.Rejected != 0 || len(r.Findings) != 2*len(p.Items) {
			t.Fatalf("verification = %+v, %d findings", v, len(r.Findings))
		}
		// Unreadable answers alone take the verifier's route down for the
		// output contract (issue 22): the requests not sent say so.
		if f := r.Findings[0]; f.Verification != NotVerified || (f.VerificationReason != "verification request bad_response" && f.VerificationReason != "verification request "+execution.ReasonContract) {
			t.Errorf("finding is %q (%q)", f.Verification, f.VerificationReason)
		}
		if r.Outcome != OutcomePartial {
			t.Errorf("outcome %q, want partial", r.Outcome)
		}
		for _, it := range r.Items {
			if it.Unverified != 2 {
				t.Errorf("item %s:%d unverified %d, want 2", it.Path, it.StartLine, it.Unverified)
			}
		}
	})
}

// TestVerifyOff: no verification request, no verification fields.
func TestVerifyOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := verifyModel(time.Second, false)
		r, p := verifyRun(t, m, VerifyOff, nil)
		if r.Verification != nil || len(m.recorded()) != len(p.Items) || r.Findings[0].Verification != "" {
			t.Errorf("verify off: %+v, %d calls for %d items", r.Verification, len(m.recorded()), len(p.Items))
		}
	})
}

// TestVerificationAvoidsUnhealthyRoutes: a route the review left disabled
// (a 401 mid-review) gets no verification request, though a new run would
// start it afresh: the verification is skipped with the route named, the
// findings are posted not verified, and Verification.Routes lists no call.
func TestVerificationAvoidsUnhealthyRoutes(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		good := verifyModel(time.Second, false)
		var mu sync.Mutex
		primaries := 0
		m := &fakeModel{script: func(req *execution.Request) fakeopenai.Answer {
			mu.Lock()
			defer mu.Unlock()
			if strings.HasPrefix(req.Messages[0].Content, "You are warden's verifier") {
				return good.script(req)
			}
			if primaries++; primaries > 1 {
				return fakeopenai.Answer{Status: 401}
			}
			return good.script(req)
		}}
		r, p := verifyRun(t, m, VerifyAuto, func(pol *execution.Policy) { pol.MaxConcurrency = 1 })
		if len(p.Items) < 2 {
			t.Fatalf("plan has %d items, want 2 or more", len(p.Items))
		}
		for _, c := range m.recorded() {
			if strings.HasPrefix(c.prompt, "You are warden's verifier") {
				t.Fatal("a verification request went to the route the review disabled")
			}
		}
		v := r.Verification
		if v == nil || v.Ran || !strings.Contains(v.Skipped, "no healthy route: ") || !strings.Contains(v.Skipped, "disabled (auth)") || len(v.Routes) != 0 {
			t.Fatalf("verification = %+v, want skipped naming the disabled route, no route stats", v)
		}
		if len(r.Findings) != 2 || r.Findings[0].Verification != NotVerified {
			t.Errorf("findings %+v, want the first item's two, not verified", r.Findings)
		}
	})
}

// TestVerificationRouteStats: the verification requests' calls and tokens
// are in Verification.Routes, beside the review's in Report.Routes.
func TestVerificationRouteStats(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		m := verifyModel(time.Second, false)
		m.usage = execution.Usage{PromptTokens: 50_000, CompletionTokens: 10} // above the prompt-truncation guard
		r, p := verifyRun(t, m, VerifyAuto, nil)
		v := r.Verification
		if v == nil || len(v.Routes) != 1 || v.Routes[0].Calls != v.Requests || v.Routes[0].OK != v.Requests || v.Routes[0].PromptTokens != 50_000*v.Requests {
			t.Fatalf("verification routes %+v for %d requests (%+v)", v.Routes, v.Requests, v)
		}
		if got := r.Routes[0].Calls; got != len(p.Items) {
			t.Errorf("the review's route stats count %d calls for %d items (verification's counted there too?)", got, len(p.Items))
		}
	})
}
