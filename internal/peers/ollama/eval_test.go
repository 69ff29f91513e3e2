package ollama

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/eval"
	"github.com/org/warden/execution"
	"github.com/org/warden/skills"
)

// TestEvalEndToEnd runs warden eval's whole path against the real server
// (mechanics only: the tiny model's weights are random, so its scores say
// nothing of quality, and the corpus is synthetic): the shipped corpus is
// reviewed and scored live on the tiny model while its answers are
// recorded, then replayed with no server at all. Every item is accounted
// for (reviewed, or failed with a reason), the replay gives the same
// findings and scores, and the results are labelled live-recorded and
// replayed.
func TestEvalEndToEnd(t *testing.T) {
	t.Parallel()
	srv := mainServer(t)
	prov, _ := newProvider(t, srv)
	cases, err := eval.LoadCorpus([]string{filepath.Join("..", "..", "..", "testdata", "eval", "corpus")})
	if err != nil {
		t.Fatal(err)
	}
	rec := t.TempDir()
	sks := []*skills.Skill{bugsSkill}
	run := func(rt execution.Route, tape *eval.Tape) *eval.Result {
		t.Helper()
		res, err := eval.Run(context.Background(), cases, eval.Options{Skills: sks, Routes: []execution.Route{rt}, Policy: testPolicy(), MaxTokens: 1500, Tape: tape})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	live := run(execution.Route{Name: "ollama", BaseURL: srv.URL + "/v1", Model: tinyModel, Provider: prov}, eval.NewTape(eval.ModeRecorded, rec, "ollama tiny model (random weights)"))
	replayed := run(execution.Route{Name: "ollama", Model: tinyModel}, eval.NewTape(eval.ModeReplayed, rec, ""))

	ls, rs := live.Scores[0], replayed.Scores[0]
	if ls.Cases != len(cases) || ls.Items != len(cases) || ls.PromptTokens == 0 {
		t.Fatalf("live score %+v: want every case reviewed or failed, with tokens", ls)
	}
	t.Logf("tiny model, live: %d items, %d failed, %d findings, %d matched, %d of %d known detected; %d+%d tokens, %d ms model time",
		ls.Items, ls.Failed, ls.Findings, ls.Matched, ls.Detected, ls.Known, ls.PromptTokens, ls.CompletionTokens, ls.ModelTimeMS)
	type scores struct {
		Failed, Findings, Matched, Detected, Localised, CleanFindings, CleanRegionHits int
		Recall, Precision, Localisation, Noise                                         *float64
	}
	of := func(s eval.Score) scores {
		return scores{s.Failed, s.Findings, s.Matched, s.Detected, s.Localised, s.CleanFindings, s.CleanRegionHits, s.Recall, s.Precision, s.Localisation, s.NoisePer100}
	}
	if diff := cmp.Diff(of(ls), of(rs)); diff != "" {
		t.Errorf("the replay scores differently from the live run it recorded (-live +replay):\n%s", diff)
	}
	// A retried request is answered once in a replay (its last answer).
	if rs.PromptTokens > ls.PromptTokens || rs.ModelTimeMS > ls.ModelTimeMS {
		t.Errorf("replay tokens %d, time %d ms; live %d, %d ms", rs.PromptTokens, rs.ModelTimeMS, ls.PromptTokens, ls.ModelTimeMS)
	}
	if live.Mode != eval.ModeRecorded || replayed.Mode != eval.ModeReplayed || !replayed.Synthetic ||
		!cmp.Equal(replayed.Producers, []string{"ollama tiny model (random weights)"}) {
		t.Errorf("labels: %q %q synthetic %v producers %q", live.Mode, replayed.Mode, replayed.Synthetic, replayed.Producers)
	}
}
