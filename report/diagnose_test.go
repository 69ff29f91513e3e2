package report

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// This file renders the summaries of real reviews whose routes fail in
// scripted ways: review.Run with the real engine, the real go-openai client
// (through execution/openai) and an OpenAI-compatible handler per route,
// reached over an in-memory http.RoundTripper so that the whole review runs
// on testing/synctest's virtual clock and every duration in the golden files
// is exact.

// answer is what a scripted route does with a request for one file.
type answer = fakeopenai.Answer

// diagRoute is one route of a diagnosis case.
type diagRoute struct {
	name, model string
	timeout     time.Duration     // the base request timeout; 0: the policy's
	answers     map[string]answer // by file
	first       map[string]answer // the first answer for a file, when it differs
	rest        *answer           // the answer to a request about no file (the engine's health probe); nil: a good one
}

// diagFiles are the files every case reviews, one hunk each.
var diagFiles = []string{"a.go", "b.go", "c.go", "d.go"}

// diagPlan is a change of one hunk in each of files, planned for the
// code-review skill.
func diagPlan(t *testing.T, eng *execution.Engine, files []string) (*review.Plan, review.Options) {
	t.Helper()
	var diff strings.Builder
	source := map[string]string{}
	for _, f := range files {
		source[f] = "package p\n\nfunc F() int {\n\treturn 2\n}\n"
		fmt.Fprintf(&diff, "diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n"+
			"@@ -1,5 +1,5 @@\n package p\n \n func F() int {\n-\treturn 1\n+\treturn 2\n }\n", f)
	}
	parsed, err := hunks.Parse(strings.NewReader(diff.String()))
	if err != nil {
		t.Fatal(err)
	}
	hp, err := hunks.Prepare(parsed, hunks.Options{Source: func(p string) ([]byte, error) { return []byte(source[p]), nil }})
	if err != nil {
		t.Fatal(err)
	}
	chosen, err := skills.Select(skills.Builtins(), []string{"code-review"})
	if err != nil {
		t.Fatal(err)
	}
	opts := review.Options{Skills: chosen, FailOn: review.SeverityHigh, MaxFindings: 50}
	p, err := review.NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != len(files) {
		t.Fatalf("plan has %d items, want %d", len(p.Items), len(files))
	}
	return p, opts
}

// runDiagCase runs a review on the case's routes inside a synctest bubble,
// of a change of files (diagFiles when none are given). serial runs one
// item at a time, for cases whose outcome would otherwise depend on which
// concurrent item reached a route first.
func runDiagCase(t *testing.T, routes []diagRoute, serial bool, keyEnv string, files ...string) *review.Report {
	if len(files) == 0 {
		files = diagFiles
	}
	t.Helper()
	var rep *review.Report
	synctest.Test(t, func(t *testing.T) {
		var engRoutes []execution.Route
		for _, dr := range routes {
			h := &fakeopenai.Script{ByFile: dr.answers, First: dr.first}
			if dr.rest != nil {
				rest := *dr.rest
				h.Default = func(fakeopenai.Request) answer { return rest }
			}
			base := "https://" + dr.name + ".example.com/v1"
			p, err := openai.New(openai.Config{BaseURL: base, APIKey: "sk-test", HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: h}}})
			if err != nil {
				t.Fatal(err)
			}
			engRoutes = append(engRoutes, execution.Route{Name: dr.name, BaseURL: base, Model: dr.model, Provider: p,
				APIKeyEnv: keyEnv, RequestTimeout: dr.timeout})
		}
		pol := execution.DefaultPolicy()
		if serial {
			pol.MaxConcurrency = 1
		}
		eng, err := execution.New(engRoutes, pol, execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
		if err != nil {
			t.Fatal(err)
		}
		p, opts := diagPlan(t, eng, files)
		rep = review.Run(t.Context(), p, eng, opts)
	})
	return rep
}

// every gives each file the same answer.
func every(a answer) map[string]answer {
	m := map[string]answer{}
	for _, f := range diagFiles {
		m[f] = a
	}
	return m
}

// TestDiagnosisSummaries renders the text and Markdown summaries of one
// review per diagnosis, each from scripted routes, and compares them with
// testdata/diagnose/<case>.{txt,md}.golden (refresh with -update).
func TestDiagnosisSummaries(t *testing.T) {
	t.Parallel()
	const s = time.Second
	ok := func(d time.Duration) answer { return answer{Delay: d} }
	var forty []string
	for i := range 40 {
		forty = append(forty, fmt.Sprintf("f%02d.go", i))
	}
	tests := []struct {
		name   string
		routes []diagRoute
		serial bool
		files  []string
		want   []review.DiagnosisKind
	}{
		{
			// Every call of a 40-item review answers 500: the breaker
			// stops the rest. The headline says what the provider did.
			name:   "server_errors",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2", answers: map[string]answer{}, rest: &answer{Status: http.StatusInternalServerError}}},
			files:  forty,
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisServerErrors},
		},
		{
			// Successes take 100-110 s of a 120 s deadline (the base: the
			// built-in prompts keep a hunk at every baseline, issue 11);
			// one call needs more.
			name: "deadline_too_short",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2", timeout: 120 * s, answers: map[string]answer{
				"a.go": ok(100 * s), "b.go": ok(110 * s), "c.go": {Hang: true}, "d.go": ok(105 * s)}}},
			want: []review.DiagnosisKind{review.DiagnosisDeadlineTooShort},
		},
		{
			// Successes take 4-6 s; one call never answers.
			name: "intermittent_stalls",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2", answers: map[string]answer{
				"a.go": ok(4 * s), "b.go": ok(6 * s), "c.go": {Hang: true}, "d.go": ok(5 * s)}}},
			want: []review.DiagnosisKind{review.DiagnosisIntermittent},
		},
		{
			// The only route never answers. One item at a time: which of
			// the items waiting for the route gets its one trial call would
			// otherwise depend on goroutines that act at the same instant.
			name:   "backend_stalled",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2", answers: every(answer{Hang: true})}},
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisStalled},
		},
		{
			// Both routes hang at once: every item times out on each (one
			// item at a time, as backend_stalled).
			name: "provider_wide",
			routes: []diagRoute{
				{name: "primary", model: "moonshotai/kimi-k2", answers: every(answer{Hang: true}), rest: &answer{Hang: true}},
				{name: "fallback", model: "openai/gpt-4.1-mini", answers: every(answer{Hang: true}), rest: &answer{Hang: true}},
			},
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisProviderWide, review.DiagnosisStalled, review.DiagnosisStalled},
		},
		{
			// The key is refused: the route is disabled after the first 401.
			name: "auth",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2",
				answers: every(answer{Status: http.StatusUnauthorized, Code: "invalid_api_key"})}},
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisAuth},
		},
		{
			// The primary does not serve its model; no fallback is configured.
			name: "model_not_found",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k3",
				answers: every(answer{Status: http.StatusNotFound, Code: "model_not_found"})}},
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisModelNotFound},
		},
		{
			// The first call for each file gets a 429 with Retry-After: 7.
			// Three are retried after it; the fourth finds the review's
			// retry budget (3) spent and fails.
			name: "rate_limited",
			routes: []diagRoute{{name: "primary", model: "moonshotai/kimi-k2", answers: every(ok(3 * s)),
				first: every(answer{Status: http.StatusTooManyRequests, Code: "rate_limit_exceeded", Header: map[string]string{"Retry-After": "7"}})}},
			serial: true,
			want:   []review.DiagnosisKind{review.DiagnosisRateLimited},
		},
		{
			// A fallback serves what a dead primary could not: the summary
			// names it, and says the primary is unreachable.
			name: "fallback_served",
			routes: []diagRoute{
				{name: "primary", model: "moonshotai/kimi-k2", answers: every(answer{Hang: true})},
				{name: "fallback", model: "openai/gpt-4.1-mini", answers: every(ok(2 * s))},
			},
			want: []review.DiagnosisKind{review.DiagnosisStalled},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := runDiagCase(t, tt.routes, tt.serial, "OPENROUTER_API_KEY", tt.files...)
			var kinds []review.DiagnosisKind
			for _, d := range rep.Diagnoses {
				kinds = append(kinds, d.Kind)
			}
			if diff := cmp.Diff(tt.want, kinds); diff != "" {
				t.Errorf("Run(%s) diagnosis kinds (-want +got):\n%s\n%+v", tt.name, diff, rep.Diagnoses)
			}
			for _, f := range []Format{FormatText, FormatMarkdown} {
				var buf bytes.Buffer
				if err := Write(&buf, rep, f, Options{}); err != nil {
					t.Fatalf("Write(%s, %v) = %v", tt.name, f, err)
				}
				path := filepath.Join("testdata", "diagnose", tt.name+"."+goldenExt[f]+".golden")
				if *update {
					if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./report -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), buf.String()); diff != "" {
					t.Errorf("Write(%s, %v) mismatch with %s (-want +got):\n%s", tt.name, f, path, diff)
				}
			}
		})
	}
}
