package eval_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/config"
	"github.com/org/warden/eval"
	"github.com/org/warden/execution"
	"github.com/org/warden/review"
)

// routesOf is how the wiring builds a schedule's routes: the
// configuration's routes on the real OpenAI-compatible client, each over
// its schedule's transport; wrap, when set, wraps route i's provider.
func routesOf(c *config.File, wrap func(i int, p execution.Provider) execution.Provider) eval.RoutesOver {
	return func(ts []http.RoundTripper) ([]execution.Route, error) {
		rs, err := c.RoutesOver(func(string) string { return "" }, "test")(ts)
		for i := range rs {
			if wrap != nil {
				rs[i].Provider = wrap(i, rs[i].Provider)
			}
		}
		return rs, err
	}
}

// faultRun replays the shipped recording of the synthetic corpus with no
// faults and under each shipped schedule (testdata/eval/faults, in name
// order; wrap as in routesOf), in a synctest bubble: virtual time.
func faultRun(t *testing.T, wrap func(i int, p execution.Provider) execution.Provider) *eval.FaultResult {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(shipped, "warden.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("warden.toml", data)
	if err != nil {
		t.Fatal(err)
	}
	faults, err := eval.LoadFaults([]string{filepath.Join(shipped, "faults")},
		func(name string, doc []byte) (execution.Policy, func([]http.RoundTripper) ([]execution.Route, error), error) {
			c, err := config.Parse(name, doc)
			if err != nil {
				return execution.Policy{}, nil, err
			}
			return c.Policy(), routesOf(c, wrap), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	cases, sks := corpus(t), skillsOf(t, shipped)
	base := eval.Faults{Name: "no faults", Policy: cfg.Policy(), Routes: routesOf(cfg, nil)}
	var res *eval.FaultResult
	synctest.Test(t, func(t *testing.T) {
		res, err = eval.RunFaults(context.Background(), cases, base, faults, eval.FaultOptions{Skills: sks, Model: modelName,
			Tape: eval.NewTape(eval.ModeReplayed, filepath.Join(shipped, "recording"), "")})
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFaultScoredEval replays the synthetic corpus's recording under no
// faults and under four schedules, in virtual time, and checks each row:
// every outcome true, no review over its budget, the time and calls each
// schedule costs, and the recall each keeps; the same bytes twice; and
// the text table as shipped (testdata/eval/faults.golden, -update
// rewrites it; the README shows it).
func TestFaultScoredEval(t *testing.T) {
	t.Parallel()
	res := faultRun(t, nil)
	type row struct {
		Outcomes                map[review.Outcome]int
		Wrong, Over             int
		Longest                 time.Duration
		CallsPerItem            float64
		Reviewed, Items, Misses int
		Recall, Kept            float64
	}
	got := map[string]row{}
	for _, r := range res.Rows {
		kept := -1.0
		if r.RecallKept != nil {
			kept = *r.RecallKept
		}
		got[r.Scenario] = row{r.Outcomes, len(r.Wrong), len(r.OverBudget), time.Duration(r.WallMS) * time.Millisecond, *r.CallsPerItem,
			r.Reviewed, r.Items, r.Misses, *r.Recall, kept}
	}
	complete := map[review.Outcome]int{review.OutcomeComplete: 5}
	none := map[review.Outcome]int{review.OutcomeProviderUnavailable: 5}
	want := map[string]row{
		"no faults":        {complete, 0, 0, 0, 1, 5, 5, 0, 2.0 / 3, 1},
		"healthy":          {complete, 0, 0, 0, 1, 5, 5, 0, 2.0 / 3, 1},
		"wedged-primary":   {complete, 0, 0, 0, 2, 5, 5, 0, 2.0 / 3, 1},
		"blip-2s":          {complete, 0, 0, 0, 2, 5, 5, 0, 2.0 / 3, 1},
		"blip-2s-defaults": {complete, 0, 0, 0, 3, 5, 5, 0, 2.0 / 3, 1},
		"outage":           {none, 0, 0, 0, 7, 0, 5, 0, 0, 0},
	}
	// What each schedule costs in time: the healthy routes' 20 s; the
	// wedged primary one request deadline before the fallback answers; the
	// profile's blip its 15 s backoff and a 20-70 s answer; the default
	// policy's blip a retry that lands in the blip too, then the route's
	// trial call (the one-item review waits for its last route, which has
	// not answered at all) and a 2-20 s answer; the outage a failover, then
	// the fallback's trial calls until the outage patience (the 5-minute
	// item budget, from the fallback's first call at about 3 s) runs out.
	for name, bounds := range map[string][2]time.Duration{
		"no faults": {0, 0}, "healthy": {20 * time.Second, 20 * time.Second}, "wedged-primary": {2 * time.Minute, 2*time.Minute + 25*time.Second},
		"blip-2s": {35 * time.Second, 86 * time.Second}, "blip-2s-defaults": {4 * time.Second, 25 * time.Second}, "outage": {2 * time.Minute, 5*time.Minute + 5*time.Second},
	} {
		g := got[name]
		if g.Longest < bounds[0] || g.Longest > bounds[1] {
			t.Errorf("%s: longest case %v, want %v to %v", name, g.Longest, bounds[0], bounds[1])
		}
		g.Longest = 0
		got[name] = g
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fault-scored rows (-want +got):\n%s", diff)
	}
	if wrong, over := res.Failed(); wrong != 0 || over != 0 {
		t.Errorf("Failed() = %d wrong, %d over budget; want none", wrong, over)
	}
	var text, again bytes.Buffer
	if err := eval.WriteFaults(&text, "text", res); err != nil {
		t.Fatal(err)
	}
	if err := eval.WriteFaults(&again, "text", faultRun(t, nil)); err != nil {
		t.Fatal(err)
	}
	if text.String() != again.String() {
		t.Errorf("two runs differ:\n%s", cmp.Diff(text.String(), again.String()))
	}
	golden := filepath.Join(shipped, "faults.golden")
	if *update {
		if err := os.WriteFile(golden, text.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != text.String() {
		t.Errorf("the table is not %s (go test ./eval -run TestFaultScoredEval -update):\n%s", golden, cmp.Diff(string(want), text.String()))
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin = "<!-- TestFaultScoredEval table: generated by `go test ./eval -run TestFaultScoredEval -update`; do not edit -->\n```\n"
	if *update {
		if i, j := bytes.Index(readme, []byte(begin)), bytes.Index(readme, []byte("```\n<!-- end of TestFaultScoredEval table -->")); i >= 0 && j > i {
			readme = append(append(append([]byte{}, readme[:i+len(begin)]...), text.Bytes()...), readme[j:]...)
			if err := os.WriteFile(filepath.Join("..", "README.md"), readme, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !bytes.Contains(readme, []byte(begin+text.String()+"```\n<!-- end of TestFaultScoredEval table -->")) {
		t.Errorf("README.md's table under fault schedules is not this run's (go test ./eval -run TestFaultScoredEval -update)")
	}
	for _, format := range []string{"json", "markdown"} {
		var b bytes.Buffer
		if err := eval.WriteFaults(&b, format, res); err != nil || !strings.Contains(b.String(), "wedged-primary") {
			t.Errorf("WriteFaults(%s) = %v\n%s", format, err, b.String())
		}
	}
}

// mutant is an engine's provider that answers an empty review when its
// route fails: the engine then reports the item reviewed although no
// route answered it.
type mutant struct{ next execution.Provider }

func (m mutant) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	resp, err := m.next.Complete(ctx, req)
	if err != nil { // an error status, or its deadline: an empty review all the same
		return &execution.Response{Content: `{"findings":[]}`, FinishReason: "stop"}, nil
	}
	return resp, nil
}

// TestFaultEvalCatchesMutantEngine: an engine whose primary route turns
// its failures into empty answers says complete under the wedged primary
// and the outage; the fault-scored eval, which counts what the routes
// really delivered, calls those outcomes wrong (and Failed says so),
// while the real engine's are all true (TestFaultScoredEval).
func TestFaultEvalCatchesMutantEngine(t *testing.T) {
	t.Parallel()
	res := faultRun(t, func(i int, p execution.Provider) execution.Provider {
		if i == 0 {
			return mutant{p}
		}
		return p
	})
	wrong := map[string]int{}
	for _, r := range res.Rows {
		wrong[r.Scenario] = len(r.Wrong)
		for _, w := range r.Wrong {
			if w.Outcome != review.OutcomeComplete || !strings.Contains(w.Problem, "complete, but 1 of 1 items got no answer from any route") {
				t.Errorf("%s %s: %+v", r.Scenario, w.Case, w)
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"no faults": 0, "healthy": 0, "wedged-primary": 5, "blip-2s": 5, "blip-2s-defaults": 5, "outage": 5}, wrong); diff != "" {
		t.Errorf("wrong outcomes by scenario (-want +got):\n%s", diff)
	}
	if n, _ := res.Failed(); n == 0 {
		t.Errorf("Failed() = 0 wrong outcomes under a mutant engine")
	}
	var text bytes.Buffer
	eval.WriteFaults(&text, "text", res)
	if !strings.Contains(text.String(), "WRONG OUTCOME outage, case corpus/go-loop-bound: complete, but 1 of 1 items got no answer from any route") {
		t.Errorf("the table does not say which outcome is wrong:\n%s", text.String())
	}
}
