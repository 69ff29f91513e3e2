package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantClean rewrites every entry of the trusted results cache in dir as an
// attacker who can write the cache's storage would: the answer becomes "no
// findings" and the checksum the plain SHA-256 an unsigned cache checks
// (review.Cache.sum without a Secret). It returns how many it planted.
func plantClean(t *testing.T, dir string) int {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "trusted", "*", "*"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]string
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		e["content"] = `{"findings":[]}`
		sum := sha256.Sum256([]byte(strings.Join([]string{e["format"], e["key"], e["model"], e["route"], e["content"]}, "\x00")))
		e["sum"] = hex.EncodeToString(sum[:])
		out, _ := json.Marshal(e)
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(files)
}

// cacheRun runs the Action and returns its exit code, model calls, and
// the report's summary.
func cacheRun(t *testing.T, h *actionHarness) (code, calls int, summary map[string]any) {
	t.Helper()
	before := h.model.calls()
	res := h.run(context.Background())
	raw, _ := os.ReadFile(h.outputs()["report-file"])
	var rep struct{ Summary map[string]any }
	json.Unmarshal(raw, &rep)
	return res.code, h.model.calls() - before, rep.Summary
}

// TestBotUnsignedCacheNeverTrusted is issue 20's acceptance for the results
// cache: a privileged run (the base repository's pull_request, with a write
// token) on a keyless route and without results-cache-secret has nothing
// to sign entries with, so it neither reads nor writes the cache and says
// so; entries planted as unsigned "no findings" answers change nothing it
// posts. With a secret, the planted entries fail their HMAC: every item is
// reviewed anew, and the rejected entries are counted in the report, the
// log and the summary.
func TestBotUnsignedCacheNeverTrusted(t *testing.T) {
	t.Parallel()
	h := newActionHarness(t, "high")
	delete(h.env, "WARDEN_API_KEY") // a local model: no key to derive a secret from
	cache := t.TempDir()
	h.env["WARDEN_RESULTS_CACHE_DIR"] = cache

	// A run with a secret writes signed entries; the attacker rewrites them.
	h.env["INPUT_RESULTS_CACHE_SECRET"] = "a-repository-secret-value"
	code, calls, _ := cacheRun(t, h)
	if code != exitFindings || calls == 0 {
		t.Fatalf("first run: exit %d, %d model calls; want the high findings", code, calls)
	}
	control := h.lastCheckRun()
	planted := plantClean(t, cache)
	if planted == 0 {
		t.Fatal("no cache entry to plant over: the test proves nothing")
	}

	// Without a secret: the cache is off, the planted entries are not read.
	delete(h.env, "INPUT_RESULTS_CACHE_SECRET")
	res := h.run(context.Background())
	if res.code != exitFindings {
		t.Fatalf("unsigned run: exit %d, want %d (the planted 'no findings' must not be used); stderr:\n%s", res.code, exitFindings, res.stderr)
	}
	cr := h.lastCheckRun()
	if cr.Conclusion != control.Conclusion || cr.Title != control.Title {
		t.Errorf("unsigned run posted %q %q, want what the run without planted entries posted: %q %q", cr.Conclusion, cr.Title, control.Conclusion, control.Title)
	}
	if !strings.Contains(res.stdout, "the results cache is off for this privileged run") || !strings.Contains(cr.Summary, "Results cache off:") {
		t.Errorf("the log or the summary does not say the cache is off:\n%s\n%.600s", res.stdout, cr.Summary)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "trusted", "*", "*")); len(files) != planted {
		t.Errorf("%d trusted entries after the unsigned run, want the %d planted ones untouched (it writes none)", len(files), planted)
	}

	// With the secret again: the planted entries are rejected and counted.
	h.env["INPUT_RESULTS_CACHE_SECRET"] = "a-repository-secret-value"
	before := h.model.calls()
	res = h.run(context.Background())
	raw, _ := os.ReadFile(h.outputs()["report-file"])
	var rep struct {
		Summary struct {
			Planned, Cached int
			CacheRejected   int `json:"cache_rejected"`
		} `json:"summary"`
	}
	json.Unmarshal(raw, &rep)
	if res.code != exitFindings || h.model.calls()-before != rep.Summary.Planned || rep.Summary.Cached != 0 {
		t.Errorf("signed run: exit %d, %d model calls for %d items, %d cached; want every item reviewed anew", res.code, h.model.calls()-before, rep.Summary.Planned, rep.Summary.Cached)
	}
	if rep.Summary.CacheRejected != planted {
		t.Errorf("summary.cache_rejected = %d, want the %d planted entries", rep.Summary.CacheRejected, planted)
	}
	want := fmt.Sprintf("%d entries of the results cache did not verify", planted)
	if planted == 1 {
		want = "1 entry of the results cache did not verify"
	}
	if !strings.Contains(res.stdout, want) || !strings.Contains(h.lastCheckRun().Summary, want) {
		t.Errorf("the log or the summary does not say %q:\n%s\n%.600s", want, res.stdout, h.lastCheckRun().Summary)
	}
}
