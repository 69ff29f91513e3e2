package execution_test

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/org/warden/config"
	"github.com/org/warden/execution"
	"github.com/org/warden/review"
	"github.com/org/warden/scenario"
)

// This file runs the scenario suite: one TOML file per scenario in
// testdata/scenarios and in every directory of WARDEN_SCENARIOS
// (colon-separated), each run in virtual time through the real engine and
// the real go-openai adapter. The format is documented in the README
// ("Scenario files") and in the types below; [review], [retry] and
// [[routes]] take warden.toml's keys, so a user can paste their own.

// scenarioDirs is where the scenario files are: the repository's own, then
// every directory of the documented user hook WARDEN_SCENARIOS (read
// through getenv; the tests pass os.Getenv).
func scenarioDirs(getenv func(string) string) []string {
	dirs := []string{filepath.Join("testdata", "scenarios")}
	for _, d := range strings.Split(getenv("WARDEN_SCENARIOS"), ":") {
		if d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// scenarioFile is one scenario: the file (package scenario owns the
// format) and what the runner reads of it.
type scenarioFile struct {
	*scenario.File

	name   string
	path   string
	cfg    *config.File // the warden.toml part, as config reads it
	cfgErr error        // why config refused it, when [expect] config_error asks for a refusal
}

// loadScenario reads and checks one scenario file.
func loadScenario(path string) (*scenarioFile, error) {
	f, err := scenario.Load(path)
	if err != nil {
		return nil, err
	}
	sc := &scenarioFile{File: f, name: f.Name, path: f.Path}
	if sc.cfg, err = configOf(f); err != nil {
		if sc.Expect.ConfigError == "" {
			return nil, err
		}
		sc.cfgErr = err // refused at load time, as the file expects: runScenario checks the message
	}
	n := 0
	for _, g := range sc.Items {
		n += g.Count
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no [[items]]", path)
	}
	return sc, nil
}

// loadScenarios reads every scenario of every directory; a directory of
// WARDEN_SCENARIOS that does not exist or holds no scenario is an error,
// not an empty suite.
func loadScenarios(t *testing.T) []*scenarioFile {
	t.Helper()
	out, err := readScenarios(scenarioDirs(os.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readScenarios(dirs []string) ([]*scenarioFile, error) {
	var out []*scenarioFile
	for _, dir := range dirs {
		paths, err := filepath.Glob(filepath.Join(dir, "*.toml"))
		if err == nil && len(paths) == 0 {
			if _, err = os.Stat(dir); err == nil {
				err = errors.New("no *.toml scenario in it")
			}
		}
		if err != nil {
			return nil, fmt.Errorf("scenario directory %s: %w", dir, err)
		}
		for _, p := range paths {
			sc, err := loadScenario(p)
			if err != nil {
				return nil, err
			}
			out = append(out, sc)
		}
	}
	return out, nil
}

// WARDEN_SCENARIOS adds directories after the repository's, in order; an
// empty entry is skipped; a missing or empty directory is an error.
func TestScenarioDirs(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	body := "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n"
	if err := os.WriteFile(filepath.Join(user, "mine.toml"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "WARDEN_SCENARIOS" {
				return v
			}
			return ""
		}
	}
	dirs := scenarioDirs(env(user + "::" + empty))
	if want := []string{filepath.Join("testdata", "scenarios"), user, empty}; !slices.Equal(dirs, want) {
		t.Errorf("scenarioDirs = %q, want %q", dirs, want)
	}
	got, err := readScenarios(dirs[:2])
	if err != nil || got[len(got)-1].name != "mine" || got[len(got)-1].path != filepath.Join(user, "mine.toml") {
		t.Errorf("readScenarios(repository, user) = %d files, %v; want the user's last", len(got), err)
	}
	for _, bad := range []string{empty, filepath.Join(user, "missing")} {
		if _, err := readScenarios([]string{bad}); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("readScenarios(%s) = %v, want an error naming it", bad, err)
		}
	}
}

// policy is the engine policy of the file's [review] and [retry], read by
// warden's own configuration loader (config.Parse) so that a scenario
// gets exactly what the same keys give in warden.toml.
func (sc *scenarioFile) policy() execution.Policy { return sc.cfg.Policy() }

// configOf reads a scenario file's warden.toml part, [review], [retry] and
// [[routes]] without their faults, through config.Parse, with its checks
// and defaults; a route without base_url or model gets the harness's. Its
// errors name the key (the line is the file's own decoder's business).
func configOf(sc *scenario.File) (*config.File, error) {
	doc, err := sc.ConfigTOML()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse(sc.Path, doc)
	if err != nil {
		return nil, sc.ConfigError(err)
	}
	return cfg, nil
}

// contractAnswer is a healthy answer's text: the output contract of a
// review with no findings.
const contractAnswer = `{"findings":[]}`

// acceptContract is the items' check of an answer: the review's own parser
// of the output contract (review.ParseAnswer), so a route whose model
// answers prose (a fault's content) fails as it would in a review.
func acceptContract(resp *execution.Response) error {
	_, err := review.ParseAnswer(resp.Content)
	return err
}

// items builds the file's items: a system message and a user message of
// the group's size, whose answers must follow the output contract.
func (sc *scenarioFile) items() []execution.Item {
	var out []execution.Item
	maxTokens := sc.cfg.Setup().MaxTokens
	if maxTokens == 0 {
		maxTokens = 2000
	}
	for _, g := range sc.Items {
		for range g.Count {
			head := fmt.Sprintf("Review hunk %d:\n", len(out))
			body := strings.Repeat("+ line\n", max(g.Chars-len(head), 0)/7+1)[:max(g.Chars-len(head), 0)]
			out = append(out, execution.Item{Request: &execution.Request{
				Messages: []execution.Message{
					{Role: "system", Content: "You are a code reviewer."},
					{Role: "user", Content: head + body},
				},
				MaxTokens: maxTokens,
			}, Accept: acceptContract})
		}
	}
	return out
}

// world builds the scenario's routes and servers (inside a bubble) and the
// engine policy.
func (sc *scenarioFile) world(t testing.TB) (*world, execution.Policy) {
	t.Helper()
	specs := make([]routeSpec, len(sc.Routes))
	servers := make([]*server, len(sc.Routes)) // filled below, read only while a call is served
	for i, r := range sc.Routes {
		script := r.Script(time.Duration(sc.Start), func() int { return servers[i].inFlight() })
		specs[i] = routeSpec{name: r.Name, script: func(n int, at time.Duration) reply {
			rp := script(n, at)
			if rp.Content == "" {
				rp.Content = contractAnswer // a healthy answer follows the output contract
			}
			return rp
		}}
	}
	w := newWorld(t, specs)
	copy(servers, w.servers)
	p := sc.policy()
	for i, r := range sc.Routes {
		rt := sc.cfg.Routes[i].EngineRoute() // every key of the route as warden.toml gives it
		rt.Provider = w.routes[i].Provider
		if r.ProbeAPIKeyEnv != "" { // the probe-designated key, as config wires it
			rt.ProbeProvider = w.servers[i].provider(t, probeKey(r.Name))
		}
		w.routes[i] = rt
	}
	return w, p
}

// probeKey is the probe-designated key of a route that names
// probe_api_key_env.
func probeKey(route string) string { return "sk-probe-" + route }

// probeIdentities checks who every call said it was: the engine's health
// probes carry the route's probe key (when it names probe_api_key_env) and
// its probe model (probe_model, else its model), the standard's identified
// probes; every other call the route's own key and model.
func (sc *scenarioFile) probeIdentities(w *world) []string {
	var bad []string
	for i, r := range sc.Routes {
		rt := w.routes[i]
		for n, c := range w.servers[i].identities() {
			key, model := routeKey, rt.Model
			if c.probe {
				model = cmp.Or(rt.ProbeModel, rt.Model)
				if r.ProbeAPIKeyEnv != "" {
					key = probeKey(r.Name)
				}
			}
			if c.auth != "Bearer "+key || c.model != model {
				what := "call"
				if c.probe {
					what = "probe"
				}
				bad = append(bad, fmt.Sprintf("route %s %s %d: model %q with key %q, want %q with %q", r.Name, what, n, c.model, strings.TrimPrefix(c.auth, "Bearer "), model, key))
			}
		}
	}
	return bad
}

// figures are what a run of a scenario measured, for either policy.
type figures struct {
	wall, maxItem   time.Duration
	items, reviewed int
	failed          int
	calls           int
	outcome         review.Outcome
	killed          bool           // naive: the job timeout ended it
	routeCalls      map[string]int // requests each route's server saw
	opens           map[string]int // breaker openings (warden only)
	beforeOpen      map[string]int // requests sent before the first opening (warden only)
	classes         map[string]int // failed items by class (warden only)
	abandoned       []time.Duration
}

func (f *figures) share() float64 { return float64(f.reviewed) / float64(f.items) }

// measure fills the figures the servers know.
func measure(w *world, f *figures) {
	f.routeCalls = map[string]int{}
	for i, s := range w.servers {
		f.routeCalls[w.routes[i].Name] = s.count()
		f.calls += s.count()
		f.abandoned = append(f.abandoned, s.abandoned()...)
	}
	items := make([]review.Item, f.items)
	for i := range items {
		switch {
		case i < f.reviewed:
			items[i].Status = review.StatusReviewed
		case i < f.reviewed+f.failed:
			items[i].Status = review.StatusFailed
		default:
			items[i].Status = review.StatusSkipped
		}
	}
	f.outcome = review.Decide(items, nil)
}

// runScenario runs the scenario through the engine; call it in a bubble.
func runScenario(t *testing.T, sc *scenarioFile) *figures {
	t.Helper()
	if sc.cfgErr != nil {
		if want := sc.Expect.ConfigError; !strings.Contains(sc.cfgErr.Error(), want) {
			t.Fatalf("%s: loading the configuration says %v, want an error containing %q", sc.name, sc.cfgErr, want)
		}
		return nil
	}
	w, p := sc.world(t)
	// What warden does when it loads a configuration: refuse one whose
	// time scales cannot compose (config.Parse already did, with the key).
	err := p.Validate(w.routes)
	if want := sc.Expect.ConfigError; want != "" || err != nil {
		if err == nil || want == "" || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: the configuration's check says %v, want an error containing %q", sc.name, err, want)
		}
		return nil
	}
	e, err := execution.New(w.routes, p, execution.Options{Rand: rand.New(rand.NewPCG(1, 2)), OnRouteEvent: w.onEvent})
	if err != nil {
		t.Fatalf("%s: %v", sc.name, err)
	}
	its := sc.items()
	results := e.Run(t.Context(), its, nil)
	f := &figures{wall: time.Since(w.origin), items: len(its), opens: map[string]int{}, beforeOpen: map[string]int{}, classes: map[string]int{}}
	// Let the fake servers settle before reading them: the calls the end
	// of the review cut are recorded by their handlers, which run after
	// Run has returned (issue 22: "abandoned" was 0 or 8 by chance).
	synctest.Wait()
	for _, msg := range sc.probeIdentities(w) {
		t.Errorf("%s: %s", sc.name, msg)
	}
	// What holds in every scenario: no call inside a cool-down or after
	// the route was disabled, none while its breaker was open (but the
	// one probe), one result per item.
	checkCooldowns(t, w)
	for i := range w.routes {
		if msg := breakerViolations(w, i, results); msg != "" {
			t.Errorf("%s: %s", sc.name, msg)
		}
	}
	if len(results) != len(its) {
		t.Errorf("%s: %d results for %d items", sc.name, len(results), len(its))
	}
	for _, r := range results {
		f.maxItem = max(f.maxItem, r.Duration)
		switch r.Status {
		case execution.StatusDone:
			f.reviewed++
		case execution.StatusFailed:
			f.failed++
			f.classes[r.Class.String()]++
		}
	}
	firstOpen := map[string]time.Duration{}
	for _, ev := range w.routeEvents() {
		if ev.Kind == execution.EventBreaker && ev.To == execution.BreakerOpen {
			f.opens[ev.Route]++
			if _, ok := firstOpen[ev.Route]; !ok {
				firstOpen[ev.Route] = ev.At.Sub(w.origin)
			}
		}
	}
	for i, s := range w.servers {
		name := w.routes[i].Name
		if at, ok := firstOpen[name]; ok {
			for _, c := range s.calls() {
				if c <= at {
					f.beforeOpen[name]++
				}
			}
		}
	}
	measure(w, f)
	return f
}

// check compares figures with bounds; warden says whether the route
// bounds that only the engine has (breaker openings) apply.
func checkBounds(b *scenario.Bounds, f *figures, warden bool) []string {
	var bad []string
	fail := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }
	if b.Outcome != "" && string(f.outcome) != b.Outcome {
		fail("outcome %s, want %s", f.outcome, b.Outcome)
	}
	if b.MaxWall > 0 && f.wall > time.Duration(b.MaxWall) {
		fail("wall %v, want ≤ %v", f.wall, time.Duration(b.MaxWall))
	}
	if b.MinWall > 0 && f.wall < time.Duration(b.MinWall) {
		fail("wall %v, want ≥ %v", f.wall, time.Duration(b.MinWall))
	}
	if f.share() < b.MinReviewed {
		fail("reviewed %d of %d (%.1f%%), want ≥ %.1f%%", f.reviewed, f.items, 100*f.share(), 100*b.MinReviewed)
	}
	if b.MaxReviewed != nil && f.share() > *b.MaxReviewed {
		fail("reviewed %d of %d (%.1f%%), want ≤ %.1f%%", f.reviewed, f.items, 100*f.share(), 100**b.MaxReviewed)
	}
	if per := float64(f.calls) / float64(f.items); b.MaxCallsPerItem > 0 && per > b.MaxCallsPerItem {
		fail("%d calls for %d items (%.2f per item), want ≤ %.2f", f.calls, f.items, per, b.MaxCallsPerItem)
	}
	if b.MaxItemWall > 0 && f.maxItem > time.Duration(b.MaxItemWall) {
		fail("longest item %v, want ≤ %v", f.maxItem, time.Duration(b.MaxItemWall))
	}
	if want := b.FailedClass; want != "" && warden {
		for c, n := range f.classes {
			if c != want {
				fail("%d failed items ended %s, want every failed item to end %s", n, c, want)
			}
		}
	}
	if b.MaxAbandoned != nil {
		n := 0
		for _, p := range f.abandoned {
			if b.AbandonedWithin == 0 || p <= time.Duration(b.AbandonedWithin) {
				n++
			}
		}
		if n > *b.MaxAbandoned {
			fail("%d calls abandoned that would have answered within %v (%v), want ≤ %d", n, time.Duration(b.AbandonedWithin), f.abandoned, *b.MaxAbandoned)
		}
	}
	names := make([]string, 0, len(b.Routes))
	for name := range b.Routes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		rb := b.Routes[name]
		calls, ok := f.routeCalls[name]
		if !ok {
			fail("expect.route.%s: no such route", name)
			continue
		}
		if rb.MaxCalls != nil && calls > *rb.MaxCalls {
			fail("route %s: %d calls, want ≤ %d", name, calls, *rb.MaxCalls)
		}
		if calls < rb.MinCalls {
			fail("route %s: %d calls, want ≥ %d", name, calls, rb.MinCalls)
		}
		if !warden {
			continue
		}
		if f.opens[name] < rb.MinBreakerOpens {
			fail("route %s: breaker opened %d times, want ≥ %d", name, f.opens[name], rb.MinBreakerOpens)
		}
		if rb.MaxBreakerOpens != nil && f.opens[name] > *rb.MaxBreakerOpens {
			fail("route %s: breaker opened %d times, want ≤ %d", name, f.opens[name], *rb.MaxBreakerOpens)
		}
		if rb.MaxCallsBeforeOpen > 0 && f.opens[name] > 0 && f.beforeOpen[name] > rb.MaxCallsBeforeOpen {
			fail("route %s: %d calls before its breaker opened, want ≤ %d", name, f.beforeOpen[name], rb.MaxCallsBeforeOpen)
		}
	}
	return bad
}

func (f *figures) String() string {
	return fmt.Sprintf("wall %v, reviewed %d/%d, failed %d, %s, %d calls %v, breaker opens %v, longest item %v, %d abandoned",
		f.wall, f.reviewed, f.items, f.failed, f.outcome, f.calls, f.routeCalls, f.opens, f.maxItem, len(f.abandoned))
}

// TestScenarioFiles runs every scenario file through the engine and checks
// its [expect] bounds.
func TestScenarioFiles(t *testing.T) {
	t.Parallel()
	for _, sc := range loadScenarios(t) {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := runScenario(t, sc)
				if f == nil {
					return // refused at load time, as expected
				}
				t.Logf("warden: %s", f)
				for _, msg := range checkBounds(&sc.Expect, f, true) {
					t.Errorf("%s: %s", sc.name, msg)
				}
			})
		})
	}
}

// A scenario file with a key warden.toml does not have, or a bad value,
// is one clear error naming the file and the line.
func TestScenarioFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body, want string }{
		{"unknown key", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\nspeed = 3\n", "bad.toml:5: routes.speed: unknown key"},
		{"no routes", "[[items]]\ncount = 1\n", "no [[routes]]"},
		{"no items", "[[routes]]\nname = \"a\"\n", "no [[items]]"},
		{"bad duration", "[review]\nbudget = \"soon\"\n", "invalid duration \"soon\""},
		{"bad latency", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[[routes.faults]]\nlatency = { p = [0.5, 1], values = [\"1s\", \"2s\"] }\n", "p rising from 0 to 1"},
		{"bad mode", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[[routes.faults]]\nmode = \"slow\"\n", "unknown mode \"slow\""},
		{"bad profile", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\nprofile = \"vllm\"\n", "unknown profile \"vllm\""},
		{"bad outcome", "[[items]]\ncount = 1\n[[routes]]\nname = \"a\"\n[expect]\noutcome = \"fine\"\n", "expect.outcome \"fine\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bad.toml")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := loadScenario(path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("loadScenario(%q) = %v, want one line containing %q", tt.body, err, tt.want)
			}
		})
	}
}

// A real warden.toml is a scenario's configuration as it is: the
// repository's LiteLLM profile, with items added, decodes strictly.
func TestScenarioTakesWardenTOML(t *testing.T) {
	t.Parallel()
	cfg, err := os.ReadFile(filepath.Join("..", "testdata", "litellm-profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mine.toml")
	if err := os.WriteFile(path, append(cfg, "\n[[items]]\ncount = 1\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	sc, err := loadScenario(path)
	if err != nil {
		t.Fatalf("loadScenario(testdata/litellm-profile.toml + items) = %v", err)
	}
	if got := sc.Routes[0].Profile; got != "litellm" {
		t.Errorf("route profile %q, want litellm", got)
	}
}

// The latency distributions sample what they say: the provider tail of
// the scenario files has p95 6.2 min and max 42.6 min.
func TestScenarioLatencyShape(t *testing.T) {
	t.Parallel()
	sc, err := loadScenario(filepath.Join("testdata", "scenarios", "provider-tail.toml"))
	if err != nil {
		t.Fatal(err)
	}
	l := sc.Routes[0].Faults[0].Latency
	var d []time.Duration
	for n := range 10_000 {
		d = append(d, l.Sample(scenario.Unit(l.Seed, n)))
	}
	slices.Sort(d)
	if p95, m := d[9499], d[9999]; p95 < 6*time.Minute || p95 > 6*time.Minute+24*time.Second || m > 42*time.Minute+36*time.Second || m < 40*time.Minute {
		t.Errorf("provider tail p95 %v, max %v; want ≈ 6.2 min and ≤ 42.6 min", p95, m)
	}
}

// TestScenarioKeysAreWardenTOMLs: a scenario file's [review], [retry] and
// [[routes]] spell exactly warden.toml's keys (and a route's faults), so a
// configuration pastes into a scenario as it is and a new key cannot be
// missing here.
func TestScenarioKeysAreWardenTOMLs(t *testing.T) {
	t.Parallel()
	keys := func(v any, extra ...string) []string {
		typ := reflect.TypeOf(v)
		out := slices.Clone(extra)
		for i := range typ.NumField() {
			if tag := typ.Field(i).Tag.Get("toml"); tag != "" && tag != "-" {
				out = append(out, tag)
			}
		}
		slices.Sort(out)
		return out
	}
	var f config.File
	for _, c := range []struct {
		table     string
		got, want []string
	}{
		{"[review]", keys(scenario.Review{}), keys(f.Review)},
		{"[retry]", keys(scenario.Retry{}), keys(f.Retry)},
		{"[[routes]]", keys(scenario.Route{}), keys(config.Route{}, "faults")},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("a scenario's %s keys %v, warden.toml's %v", c.table, c.got, c.want)
		}
	}
}
