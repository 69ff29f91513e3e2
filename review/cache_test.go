package review

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
)

// findingAnswer answers every request with one finding on the chunk's
// first reviewable line, titled after the request, so that a result read
// from the cache can be told from one the model gave.
func findingAnswer(title string) func(req *execution.Request) fakeopenai.Answer {
	return func(req *execution.Request) fakeopenai.Answer {
		var first int
		fmt.Sscanf(req.Messages[1].Content, "Review this change. The lines you may report on are %d", &first)
		return fakeopenai.Answer{Content: fmt.Sprintf(`{"findings":[{"severity":"high","title":%q,"description":"d","start_line":%d,"end_line":%d,"suggestion":"","confidence":0.9}]}`, title, first, first)}
	}
}

// dying scripts a route that dies in the middle of a review: its first
// alive requests get then's answer, every later one a 503.
func dying(alive int64, then func(*execution.Request) fakeopenai.Answer) func(*execution.Request) fakeopenai.Answer {
	var calls atomic.Int64
	return func(req *execution.Request) fakeopenai.Answer {
		if calls.Add(1) > alive {
			return fakeopenai.Answer{Status: 503}
		}
		return then(req)
	}
}

func planFixture(t *testing.T, eng *execution.Engine, opts Options) *Plan {
	t.Helper()
	_, hp, _ := fixture(t, fixtureFiles, hunks.Options{})
	p, err := NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func titles(r *Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, f.Path+":"+fmt.Sprint(f.StartLine)+":"+f.Skill+":"+f.Title)
	}
	slices.Sort(out)
	return out
}

// TestCacheResume: a review whose route died after 24 of 48 requests is
// resumed with the results cache: the resume calls the model only
// for the items the first run did not finish, ends complete, counts the
// rest as cached, and its findings are those of a fresh complete review.
func TestCacheResume(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		dead := &fakeModel{script: dying(24, findingAnswer("real"))}
		eng := newEngine(t, dead, nil, nil)
		opts := Options{Skills: builtins(), Cache: &Cache{Dir: dir, Domain: "trusted"}}
		first := Run(context.Background(), planFixture(t, eng, opts), eng, opts)
		if first.Outcome != OutcomePartial || first.Summary.Reviewed == 0 || first.Summary.Failed == 0 {
			t.Fatalf("first run: outcome %s, %+v; want partial with some reviewed and some failed", first.Outcome, first.Summary)
		}
		var unfinished []string
		for _, it := range first.Items {
			if it.Status != StatusReviewed {
				unfinished = append(unfinished, it.Path+"#"+fmt.Sprint(it.StartLine))
			}
		}

		// The route is back; a fresh model counts its calls.
		healthy := &fakeModel{script: findingAnswer("real")}
		eng2 := newEngine(t, healthy, nil, nil)
		opts.Cache = &Cache{Dir: dir, Domain: "trusted"}
		resumed := Run(context.Background(), planFixture(t, eng2, opts), eng2, opts)
		if resumed.Outcome != OutcomeComplete {
			t.Fatalf("resume: outcome %s, %+v; want complete", resumed.Outcome, resumed.Summary)
		}
		var called []string
		for _, c := range healthy.recorded() {
			var first int
			user := c.prompt[strings.IndexByte(c.prompt, 0)+1:]
			fmt.Sscanf(user, "Review this change. The lines you may report on are %d", &first)
			path := user[strings.Index(user, "File: ")+6:]
			called = append(called, path[:strings.IndexByte(path, '\n')]+"#"+fmt.Sprint(first))
		}
		slices.Sort(called)
		// Two skills on each chunk: two requests per unfinished chunk.
		slices.Sort(unfinished)
		if diff := cmp.Diff(unfinished, called); diff != "" {
			t.Errorf("resume called the model for (-unfinished +called):\n%s", diff)
		}
		if got, want := resumed.Summary.Cached, first.Summary.Reviewed; got != want {
			t.Errorf("resume: Summary.Cached = %d, want %d (the first run's reviewed items)", got, want)
		}
		for _, it := range resumed.Items {
			if it.Cached && (len(it.Attempts) != 0 || it.CostUSD != 0 || it.Status != StatusReviewed) {
				t.Errorf("cached item %s#%d: %+v; want reviewed with no attempt and no cost", it.Path, it.StartLine, it)
			}
		}

		// The same findings as a fresh review with no cache.
		eng3 := newEngine(t, &fakeModel{script: findingAnswer("real")}, nil, nil)
		fresh := Run(context.Background(), planFixture(t, eng3, Options{Skills: builtins()}), eng3, Options{Skills: builtins()})
		if diff := cmp.Diff(titles(fresh), titles(resumed)); diff != "" {
			t.Errorf("resumed findings differ from a fresh review's (-fresh +resumed):\n%s", diff)
		}
		// The JSON report says cached per item and in the summary.
		b, _ := json.Marshal(resumed)
		if !strings.Contains(string(b), `"cached":true`) || !strings.Contains(string(b), fmt.Sprintf(`"cached":%d`, first.Summary.Reviewed)) {
			t.Errorf("JSON report does not mark cached items and count them")
		}
	})
}

// TestCacheForkCannotFeedPrivileged: a fork's run (its own domain, no
// secret) answered "no findings" for everything and shares the directory
// with the privileged run; an attacker also planted entries under the
// privileged run's own keys, checksummed but without its secret. The
// privileged run reads none of them: it calls the model for every item and
// posts exactly what a fresh review finds.
func TestCacheForkCannotFeedPrivileged(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		secret := []byte("privileged-run-only")
		clean := always(fakeopenai.Answer{Content: `{"findings":[]}`})
		forkEng := newEngine(t, &fakeModel{script: clean}, nil, nil)
		forkOpts := Options{Skills: builtins(), Cache: &Cache{Dir: dir, Domain: "fork"}}
		fork := Run(context.Background(), planFixture(t, forkEng, forkOpts), forkEng, forkOpts)
		if fork.Summary.Reviewed != len(fork.Items) || fork.Summary.Findings != 0 {
			t.Fatalf("fork run: %+v", fork.Summary)
		}
		// Forged entries under the privileged keys: what a fork's job can
		// compute (the keys are public) but not sign.
		model := &fakeModel{script: findingAnswer("real")}
		eng := newEngine(t, model, nil, nil)
		plan := planFixture(t, eng, Options{Skills: builtins()})
		forger := &Cache{Dir: dir, Domain: "trusted"}
		for _, wi := range plan.Items {
			forger.Put(ResultsKey("trusted", "test-model", "", wi.Request), CachedAnswer{Content: `{"findings":[]}`, Model: "test-model", Route: "primary"})
		}

		c := &Cache{Dir: dir, Domain: "trusted", Secret: secret}
		opts := Options{Skills: builtins(), Cache: c}
		got := Run(context.Background(), planFixture(t, eng, opts), eng, opts)
		if got.Summary.Cached != 0 {
			t.Errorf("privileged run used %d cached results from the fork or the forger", got.Summary.Cached)
		}
		if n := len(model.recorded()); n != len(got.Items) {
			t.Errorf("privileged run made %d model calls, want %d (one per item)", n, len(got.Items))
		}
		if st := c.Stats(); st.Corrupt != len(plan.Items) || st.Hits != 0 {
			t.Errorf("privileged cache stats %+v, want %d forged entries rejected and no hit", st, len(plan.Items))
		}
		eng2 := newEngine(t, &fakeModel{script: findingAnswer("real")}, nil, nil)
		fresh := Run(context.Background(), planFixture(t, eng2, Options{Skills: builtins()}), eng2, Options{Skills: builtins()})
		if diff := cmp.Diff(titles(fresh), titles(got)); diff != "" || got.Summary.Findings == 0 {
			t.Errorf("privileged findings differ from a fresh review's (-fresh +got):\n%s", diff)
		}
		// And its own signed entries do serve the next privileged run.
		model2 := &fakeModel{script: findingAnswer("other")}
		eng4 := newEngine(t, model2, nil, nil)
		c2 := &Cache{Dir: dir, Domain: "trusted", Secret: secret}
		again := Run(context.Background(), planFixture(t, eng4, Options{Skills: builtins(), Cache: c2}), eng4, Options{Skills: builtins(), Cache: c2})
		if len(model2.recorded()) != 0 || again.Summary.Cached != len(again.Items) {
			t.Errorf("second privileged run: %d calls, %d cached of %d; want all from its own cache", len(model2.recorded()), again.Summary.Cached, len(again.Items))
		}
	})
}

// TestCacheCorruption: entries damaged in every way are misses, counted,
// and the item is reviewed by the model: never a crash, never a clean
// result made up from a broken entry.
func TestCacheCorruption(t *testing.T) {
	t.Parallel()
	req := &execution.Request{Messages: []execution.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "u"}}, MaxTokens: 10}
	key := ResultsKey("d", "m", "", req)
	other := ResultsKey("d", "m2", "", req)
	good := func(t *testing.T, dir string) {
		(&Cache{Dir: dir, Domain: "d"}).Put(key, CachedAnswer{Content: `{"findings":[]}`, Model: "m", Route: "r"})
	}
	path := func(dir, k string) string { return filepath.Join(dir, k[:2], k) }
	tests := []struct {
		name   string
		damage func(t *testing.T, dir string)
	}{
		{"truncated", func(t *testing.T, dir string) {
			good(t, dir)
			b, _ := os.ReadFile(path(dir, key))
			os.WriteFile(path(dir, key), b[:len(b)/2], 0o600)
		}},
		{"garbage", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Dir(path(dir, key)), 0o700)
			os.WriteFile(path(dir, key), []byte("\x00\xffnot json"), 0o600)
		}},
		{"content changed", func(t *testing.T, dir string) {
			good(t, dir)
			b, _ := os.ReadFile(path(dir, key))
			os.WriteFile(path(dir, key), []byte(strings.Replace(string(b), `{\"findings\":[]}`, `{\"findings\":[1]}`, 1)), 0o600)
		}},
		{"entry of another key", func(t *testing.T, dir string) {
			(&Cache{Dir: dir, Domain: "d"}).Put(other, CachedAnswer{Content: `{"findings":[]}`})
			os.MkdirAll(filepath.Dir(path(dir, key)), 0o700)
			os.Rename(path(dir, other), path(dir, key))
		}},
		{"other format", func(t *testing.T, dir string) {
			good(t, dir)
			b, _ := os.ReadFile(path(dir, key))
			os.WriteFile(path(dir, key), []byte(strings.Replace(string(b), ResultsFormat, "warden.results/v0", 1)), 0o600)
		}},
		{"too large", func(t *testing.T, dir string) {
			os.MkdirAll(filepath.Dir(path(dir, key)), 0o700)
			os.WriteFile(path(dir, key), []byte(`{"content":"`+strings.Repeat("a", maxEntryBytes)+`"}`), 0o600)
		}},
		{"a directory", func(t *testing.T, dir string) { os.MkdirAll(path(dir, key), 0o700) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			tt.damage(t, dir)
			c := &Cache{Dir: dir, Domain: "d"}
			if a, ok := c.Get(key); ok {
				t.Fatalf("Get = %+v, true; want a miss", a)
			}
			if st := c.Stats(); st.Corrupt != 1 || st.Misses != 1 {
				t.Errorf("Stats() = %+v, want 1 corrupt, 1 miss", st)
			}
		})
	}

	// In a review: a damaged entry's item goes to the model.
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		model := &fakeModel{script: findingAnswer("real")}
		eng := newEngine(t, model, nil, nil)
		opts := Options{Skills: builtins()[:1], Cache: &Cache{Dir: dir, Domain: "d"}}
		first := Run(context.Background(), planFixture(t, eng, opts), eng, opts)
		// Cut every entry in half.
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				os.WriteFile(p, b[:len(b)/2], 0o600)
			}
			return nil
		})
		model2 := &fakeModel{script: findingAnswer("real")}
		eng2 := newEngine(t, model2, nil, nil)
		opts.Cache = &Cache{Dir: dir, Domain: "d"}
		got := Run(context.Background(), planFixture(t, eng2, opts), eng2, opts)
		if got.Outcome != OutcomeComplete || got.Summary.Cached != 0 || len(model2.recorded()) != len(first.Items) {
			t.Errorf("after damage: outcome %s, cached %d, calls %d; want complete, 0 cached, %d calls", got.Outcome, got.Summary.Cached, len(model2.recorded()), len(first.Items))
		}
		if diff := cmp.Diff(titles(first), titles(got)); diff != "" {
			t.Errorf("findings changed (-first +after damage):\n%s", diff)
		}
	})
}

// TestCacheKey: everything that determines an answer changes the key, and
// nothing else does.
func TestCacheKey(t *testing.T) {
	t.Parallel()
	_, hp, _ := fixture(t, fixtureFiles[:1], hunks.Options{})
	sk := builtins()[0]
	other := *sk
	other.Instructions += "\nAlso check naming."
	base := buildRequest(sk, &hp.Chunks[0], Change{}, DefaultMaxTokens)
	const host = "openrouter.ai"
	k := ResultsKey("trusted", "m", host, base)
	if again := ResultsKey("trusted", "m", host, buildRequest(sk, &hp.Chunks[0], Change{}, DefaultMaxTokens)); again != k {
		t.Errorf("the same request gives two keys")
	}
	withContext := hp.Chunks[0]
	withContext.Before = append(slices.Clone(withContext.Before), hunks.ContextLine{Line: 1, Text: "// changed context"})
	for name, k2 := range map[string]string{
		"model":      ResultsKey("trusted", "m2", host, base),
		"endpoint":   ResultsKey("trusted", "m", "127.0.0.1:9", base),
		"domain":     ResultsKey("fork", "m", host, base),
		"skill text": ResultsKey("trusted", "m", host, buildRequest(&other, &hp.Chunks[0], Change{}, DefaultMaxTokens)),
		"chunk":      ResultsKey("trusted", "m", host, buildRequest(sk, &hp.Chunks[1], Change{}, DefaultMaxTokens)),
		"context":    ResultsKey("trusted", "m", host, buildRequest(sk, &withContext, Change{}, DefaultMaxTokens)),
		"max tokens": ResultsKey("trusted", "m", host, buildRequest(sk, &hp.Chunks[0], Change{}, 100)),
		"pr title":   ResultsKey("trusted", "m", host, buildRequest(sk, &hp.Chunks[0], Change{Title: "x"}, DefaultMaxTokens)),
		"prompt":     ResultsKey("trusted", "m", host, &execution.Request{Messages: []execution.Message{{Role: "system", Content: base.Messages[0].Content + " v2"}, base.Messages[1]}, MaxTokens: base.MaxTokens, Schema: base.Schema}),
		// eval's recordings key without the endpoint, in their own format.
		"format": CacheKey("trusted", "m", base),
	} {
		if k2 == k {
			t.Errorf("changing the %s keeps the key", name)
		}
	}
}

// TestCacheEndpointAndAttribution: an answer cached from one endpoint is
// not served to a route pointed at another (a dead server stays dead, it
// does not give a complete review from old answers); a hit is attributed to
// the model and endpoint that answered and to the current route with them,
// whatever the route was called when it answered.
func TestCacheEndpointAndAttribution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(name, baseURL string, script func(*execution.Request) fakeopenai.Answer) *Report {
		eng := newEngine(t, &fakeModel{script: script}, func(r *execution.Route) { r.Name, r.BaseURL = name, baseURL }, nil)
		opts := Options{Skills: builtins()[:1], Cache: &Cache{Dir: dir, Domain: "trusted"}}
		return Run(t.Context(), planFixture(t, eng, opts), eng, opts)
	}
	first := run("old-name", "https://models.example/v1", nil)
	if first.Outcome != OutcomeComplete || first.Summary.Cached != 0 {
		t.Fatalf("first run: %s, %d cached; want complete, none cached", first.Outcome, first.Summary.Cached)
	}
	again := run("primary", "https://models.example/v2", always(fakeopenai.Answer{Status: 401}))
	if again.Outcome != OutcomeComplete || again.Summary.Cached != len(again.Items) {
		t.Fatalf("same endpoint, new route name: %s, %d of %d cached; want all from the cache", again.Outcome, again.Summary.Cached, len(again.Items))
	}
	for _, it := range again.Items {
		if it.Route != "primary" || it.CachedModel != "test-model" || it.CachedEndpoint != "models.example" {
			t.Errorf("cached item %s: route %q, model %q, endpoint %q; want primary, test-model, models.example", it.Path, it.Route, it.CachedModel, it.CachedEndpoint)
		}
	}
	dead := run("primary", "http://127.0.0.1:9/v1", always(fakeopenai.Answer{Status: 401}))
	if dead.Outcome != OutcomeProviderUnavailable || dead.Summary.Cached != 0 {
		t.Errorf("route pointed at another server: %s, %d cached; want provider-unavailable, none from the old server's entries", dead.Outcome, dead.Summary.Cached)
	}
}

// TestCacheBounded: the entries stay within MaxBytes, the least recently
// used going first.
func TestCacheBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Cache{Dir: dir, MaxBytes: 20_000}
	var keys []string
	for i := range 100 {
		req := &execution.Request{Messages: []execution.Message{{Role: "user", Content: fmt.Sprint(i)}}}
		k := ResultsKey("", "m", "", req)
		keys = append(keys, k)
		c.Put(k, CachedAnswer{Content: strings.Repeat("x", 500)})
	}
	var total int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			total += info.Size()
		}
		return nil
	})
	if total > c.MaxBytes {
		t.Errorf("cache holds %d bytes, want at most %d", total, c.MaxBytes)
	}
	if st := c.Stats(); st.Evicted == 0 || st.Puts != 100 {
		t.Errorf("Stats() = %+v, want 100 puts and some evicted", st)
	}
	if _, ok := c.Get(keys[99]); !ok {
		t.Errorf("the newest entry was evicted")
	}
	if _, ok := c.Get(keys[0]); ok {
		t.Errorf("the oldest entry was kept over the bound")
	}
}
