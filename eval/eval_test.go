package eval_test

import (
	"bytes"
	"context"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/eval"
	"github.com/org/warden/execution"
	"github.com/org/warden/execution/openai"
	"github.com/org/warden/internal/evalmodel"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/related"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

var update = flag.Bool("update", false, "re-record testdata/eval/recording with the scripted test reviewer")

const (
	shipped   = "../testdata/eval"
	routeName = "scripted"          // as in testdata/eval/warden.toml
	modelName = "scripted-reviewer" // as in testdata/eval/warden.toml
)

// scriptedRoute is the shipped corpus's route, answered in memory by the
// scripted test reviewer through the real OpenAI-compatible provider.
func scriptedRoute(t *testing.T) execution.Route {
	t.Helper()
	p, err := openai.New(openai.Config{BaseURL: "http://scripted.invalid/v1", HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: evalmodel.New()}}})
	if err != nil {
		t.Fatal(err)
	}
	return execution.Route{Name: routeName, Model: modelName, BaseURL: "http://scripted.invalid/v1", Provider: p}
}

// replayRoute has no provider at all: a replay must not need one.
func replayRoute() execution.Route {
	return execution.Route{Name: routeName, Model: modelName, Provider: nil}
}

func skillsOf(t *testing.T, dir string) []*skills.Skill {
	t.Helper()
	sks, _, err := review.ChooseSkills(os.DirFS(dir), nil, []string{"synthetic-bugs"})
	if err != nil {
		t.Fatal(err)
	}
	return sks
}

func corpus(t *testing.T) []*eval.Case {
	t.Helper()
	cases, err := eval.LoadCorpus([]string{filepath.Join(shipped, "corpus")})
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func runEval(t *testing.T, sks []*skills.Skill, rt execution.Route, tape *eval.Tape) *eval.Result {
	t.Helper()
	return runEvalVerify(t, sks, rt, tape, review.VerifyOff)
}

func runEvalVerify(t *testing.T, sks []*skills.Skill, rt execution.Route, tape *eval.Tape, verify review.VerifyMode) *eval.Result {
	t.Helper()
	res, err := eval.Run(context.Background(), corpus(t), eval.Options{Skills: sks, Routes: []execution.Route{rt}, Policy: execution.DefaultPolicy(), Tape: tape, Verify: verify})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func jsonOf(t *testing.T, r *eval.Result, c *eval.Comparison) string {
	t.Helper()
	var b bytes.Buffer
	if err := eval.WriteJSON(&b, r, c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestShippedCorpusReplay replays the shipped recording twice: the same
// bytes both times, no model, every answer found, and the scores the
// scripted reviewer's answers give by hand (2 of 3 known findings, 2 of 3
// findings matched, one false alarm in 6 clean added lines). With -update
// it first records the corpus again with the scripted reviewer.
func TestShippedCorpusReplay(t *testing.T) {
	t.Parallel()
	rec := filepath.Join(shipped, "recording")
	if *update {
		if err := os.RemoveAll(rec); err != nil {
			t.Fatal(err)
		}
		res := runEval(t, skillsOf(t, shipped), scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
		if res.Scores[0].Failed > 0 {
			t.Fatalf("recording: %d items failed", res.Scores[0].Failed)
		}
	}
	first := runEval(t, skillsOf(t, shipped), replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	second := runEval(t, skillsOf(t, shipped), replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	if a, b := jsonOf(t, first, nil), jsonOf(t, second, nil); a != b {
		t.Fatalf("two replays differ:\n%s", cmp.Diff(a, b))
	}
	s := first.Scores[0]
	if s.Failed > 0 {
		t.Fatalf("replay: %d of %d items got no answer (%d not recorded): the prompt or the corpus changed; run go test ./eval -run TestShippedCorpusReplay -update", s.Failed, s.Items, s.Misses)
	}
	type counts struct{ Cases, Known, Detected, Localised, Findings, Matched, CleanFindings, CleanChanged, CleanRegionHits int }
	got := counts{s.Cases, s.Known, s.Detected, s.Localised, s.Findings, s.Matched, s.CleanFindings, s.CleanChanged, s.CleanRegionHits}
	want := counts{Cases: 5, Known: 3, Detected: 2, Localised: 2, Findings: 3, Matched: 2, CleanFindings: 1, CleanChanged: 6, CleanRegionHits: 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("replayed counts (-want +got):\n%s", diff)
	}
	if *s.Recall != 2.0/3 || *s.Precision != 2.0/3 || *s.Localisation != 1 || *s.NoisePer100 != 100.0/6 {
		t.Errorf("ratios = %v %v %v %v, want 2/3 2/3 1 16.7", *s.Recall, *s.Precision, *s.Localisation, *s.NoisePer100)
	}
	if s.PromptTokens == 0 || s.CompletionTokens == 0 {
		t.Errorf("replay reports no tokens: %+v", s)
	}
	if first.Mode != eval.ModeReplayed || !first.Synthetic || !cmp.Equal(first.Producers, []string{evalmodel.Producer}) {
		t.Errorf("replay labelled mode %q synthetic %v producers %q", first.Mode, first.Synthetic, first.Producers)
	}
	if l := first.Label(); !strings.Contains(l, "replayed") || !strings.Contains(l, "not a measure") || !strings.Contains(l, "not a language model") {
		t.Errorf("Label() = %q, want replayed, synthetic and the scripted producer said", l)
	}
	var miss []string
	for _, pc := range s.PerCase {
		for _, k := range pc.Missed {
			miss = append(miss, pc.Case+" "+k.Path)
		}
	}
	if !cmp.Equal(miss, []string{"corpus/js-missing-await src/client.js"}) {
		t.Errorf("missed = %q, want the lost await only", miss)
	}
}

// TestRecordThenReplay records a live run against the scripted reviewer
// and replays it with no provider: the same scores and tokens, labelled
// replayed; the broken skill (a finding on every line) regresses against
// the good one's baseline, and the good one does not against itself.
func TestRecordThenReplay(t *testing.T) {
	t.Parallel()
	rec := t.TempDir()
	good := skillsOf(t, shipped)
	broken := skillsOf(t, filepath.Join(shipped, "broken"))
	live := runEval(t, good, scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
	runEval(t, broken, scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
	replayed := runEval(t, good, replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	ls, rs := live.Scores[0], replayed.Scores[0]
	ls.PerCase, rs.PerCase = nil, nil
	if diff := cmp.Diff(ls, rs); diff != "" {
		t.Errorf("replay differs from the live run it recorded (-live +replay):\n%s", diff)
	}
	if live.Mode != eval.ModeRecorded || replayed.Mode != eval.ModeReplayed {
		t.Errorf("modes %q, %q", live.Mode, replayed.Mode)
	}
	if c := eval.Compare(live, replayed, eval.DefaultThresholds); len(c.Regressions) != 0 {
		t.Errorf("the replay regresses against its own recording: %+v", c.Regressions)
	}
	bad := runEval(t, broken, replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""))
	if bad.Scores[0].Failed > 0 {
		t.Fatalf("broken skill replay: %d items not answered", bad.Scores[0].Failed)
	}
	c := eval.Compare(replayed, bad, eval.DefaultThresholds)
	var metrics []string
	for _, g := range c.Regressions {
		metrics = append(metrics, g.Metric)
	}
	// On cases this small every line of a buggy change is within Slack of
	// the bug, so precision and recall even rise; the noise on the clean
	// changes is what gives the broken skill away.
	if !cmp.Equal(metrics, []string{"noise_per_100_lines"}) {
		t.Errorf("broken skill's regressions = %q, want noise", metrics)
	}
	if n := *bad.Scores[0].NoisePer100; n != 100 {
		t.Errorf("broken skill's noise = %v per 100 clean lines, want 100 (every line)", n)
	}
	// A replay of a recording that does not have the answers fails its
	// items and says so; it never reports them clean.
	empty := runEval(t, good, replayRoute(), eval.NewTape(eval.ModeReplayed, t.TempDir(), ""))
	if s := empty.Scores[0]; s.Failed != s.Items || s.Misses == 0 || s.Findings != 0 {
		t.Errorf("empty recording: failed %d of %d, misses %d", s.Failed, s.Items, s.Misses)
	}
	if c := eval.Compare(replayed, empty, eval.DefaultThresholds); len(c.Regressions) == 0 {
		t.Errorf("an unanswered run does not regress against its baseline")
	}
}

// TestReplayedVerification records the broken skill (a finding on every
// line) with verification on, against the scripted reviewer that rejects
// every finding not on a loop bound, and replays it with no model: the
// verification answers come from the recording too, the rejected findings
// are counted and not scored, and the replay matches the recording.
func TestReplayedVerification(t *testing.T) {
	t.Parallel()
	rec := t.TempDir()
	broken := skillsOf(t, filepath.Join(shipped, "broken"))
	live := runEvalVerify(t, broken, scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer), review.VerifyRequired)
	replayed := runEvalVerify(t, broken, replayRoute(), eval.NewTape(eval.ModeReplayed, rec, ""), review.VerifyRequired)
	s := replayed.Scores[0]
	if s.Failed != 0 {
		t.Fatalf("replay with verification: %d items failed (%d misses)", s.Failed, s.Misses)
	}
	// 21 findings on every added line; the verifier keeps the three on a
	// loop bound (two true, one false alarm on the clean rename).
	if s.Findings != 3 || s.Rejected != 18 || s.Matched != 2 || s.CleanFindings != 1 {
		t.Errorf("verified broken skill: %d findings, %d rejected, %d matched, %d on clean cases; want 3, 18, 2, 1", s.Findings, s.Rejected, s.Matched, s.CleanFindings)
	}
	ls := live.Scores[0]
	ls.PerCase, s.PerCase = nil, nil
	if diff := cmp.Diff(ls, s); diff != "" {
		t.Errorf("replay differs from its recording (-live +replay):\n%s", diff)
	}
}

// TestContextFromTheCase: with context on, each request carries context
// found in the case's own files (here, the whole small file), and the
// scores are unchanged for the scripted reviewer, which reads only the
// changed lines.
func TestContextFromTheCase(t *testing.T) {
	t.Parallel()
	script := evalmodel.New()
	var mu sync.Mutex
	var prompts []string
	script.Default = func(req fakeopenai.Request) fakeopenai.Answer {
		mu.Lock()
		prompts = append(prompts, req.Prompt())
		mu.Unlock()
		return evalmodel.Answer(req)
	}
	p, err := openai.New(openai.Config{BaseURL: "http://scripted.invalid/v1", HTTPClient: &http.Client{Transport: fakeopenai.Transport{Handler: script}}})
	if err != nil {
		t.Fatal(err)
	}
	rt := execution.Route{Name: routeName, Model: modelName, Provider: p}
	res, err := eval.Run(context.Background(), corpus(t), eval.Options{Skills: skillsOf(t, shipped), Routes: []execution.Route{rt},
		Policy: execution.DefaultPolicy(), Context: &related.Options{}})
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Scores[0]; s.Failed != 0 || s.Detected != 2 || s.Findings != 3 {
		t.Errorf("with context: %+v", s)
	}
	found := false
	for _, pr := range prompts {
		if strings.Contains(pr, "Context included: the whole file stats/sum.go (18 lines)") && strings.Contains(pr, "func Mean(xs []int) float64 {") {
			found = true
		}
	}
	if !found || len(prompts) != 5 {
		t.Errorf("%d prompts, none with stats/sum.go whole", len(prompts))
	}
}

// TestCorruptRecording: an entry that does not parse, names another key or
// another format is a miss (the item fails and says so), never an answer.
func TestCorruptRecording(t *testing.T) {
	t.Parallel()
	rec := t.TempDir()
	good := skillsOf(t, shipped)
	runEval(t, good, scriptedRoute(t), eval.NewTape(eval.ModeRecorded, rec, evalmodel.Producer))
	var entries []string
	filepath.WalkDir(rec, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			entries = append(entries, p)
		}
		return nil
	})
	if len(entries) != 5 {
		t.Fatalf("%d entries recorded, want 5", len(entries))
	}
	b, err := os.ReadFile(entries[1])
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(entries[0], []byte("{not json"), 0o644)
	os.WriteFile(entries[1], []byte(strings.Replace(string(b), eval.RecordingFormat, "warden.eval.recording/v0", 1)), 0o644)
	os.WriteFile(entries[2], b, 0o644) // entry 1's text under entry 2's key
	s := runEval(t, good, replayRoute(), eval.NewTape(eval.ModeReplayed, rec, "")).Scores[0]
	if s.Failed != 3 || s.Misses < 3 || s.Items != 5 {
		t.Errorf("corrupt recording: %d of %d items failed, %d misses; want 3 failed", s.Failed, s.Items, s.Misses)
	}
}
