package review

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/fakeopenai"
	"github.com/org/warden/skills"
)

// fixtureFile is one file of the fixture change: nFuncs functions of 15
// lines each, with a change (two lines replaced) in the functions listed.
type fixtureFile struct {
	path   string
	nFuncs int
	sites  []int
}

// fixtureFiles are 7 files, one with many hunks; with the two built-in
// skills they make 48 work items (24 chunks), 27 hunks.
var fixtureFiles = []fixtureFile{
	{"internal/auth/session.go", 40, []int{0, 1, 2, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38}},
	{"internal/store/query.go", 20, []int{2, 9, 15}},
	{"api/handler.go", 12, []int{1, 6}},
	{"api/handler_test.go", 10, []int{3}},
	{"worker/jobs.py", 15, []int{0, 5, 10}},
	{"worker/util.py", 8, []int{2, 3}},
	{"cmd/server/main.go", 6, []int{4}},
}

// fixturePR is the pull request's text: a realistic title and description.
var fixturePR = Change{
	Title: "Harden session handling and batch the job queue",
	Body: `This change tightens how sessions are validated and refactors the worker's job loop.

- Sessions: every handler now trims user-supplied names before storing them, and totals are
  offset by the handler's index so that replays can be told apart in the audit log.
- Store: queries use the same offset rule; the old behaviour is kept behind a flag for one release.
- Worker: jobs are batched; util helpers gain the same trimming.

Testing: unit tests updated; ran the integration suite against staging for two days with no
regressions. Rollout: behind the SESSION_V2 flag, enabled for 5% of traffic first, then 50%, then
everyone. Reviewers: please look closely at the session changes, they touch authentication.
Follow-ups: remove the flag after a week; document the audit-log change in the runbook.`,
}

// fileText returns the old or new content of a fixture file.
func (f fixtureFile) fileText(changed bool) string {
	var b strings.Builder
	py := strings.HasSuffix(f.path, ".py")
	if py {
		b.WriteString("import logging\n\n")
	} else {
		b.WriteString("package p\n\n")
	}
	for n := range f.nFuncs {
		mod := changed && contains(f.sites, n)
		if py {
			fmt.Fprintf(&b, "# handle_%d handles case %d.\n", n, n)
			fmt.Fprintf(&b, "def handle_%d(ctx, inp):\n", n)
			b.WriteString("    if inp is None:\n        raise ValueError(\"nil input\")\n")
			fmt.Fprintf(&b, "    v = inp.values[%d %% len(inp.values)]\n", n)
			b.WriteString("    total = 0\n    for x in inp.values:\n")
			if mod {
				fmt.Fprintf(&b, "        total += x * v + %d\n", n)
			} else {
				b.WriteString("        total += x * v\n")
			}
			b.WriteString("    # build the output\n")
			if mod {
				b.WriteString("    out = Output(total=total, name=inp.name.strip())\n")
			} else {
				b.WriteString("    out = Output(total=total, name=inp.name)\n")
			}
			fmt.Fprintf(&b, "    logging.info(\"handle_%d: %%d\", total)\n", n)
			b.WriteString("    return out\n\n\n")
			continue
		}
		fmt.Fprintf(&b, "// handle%d handles case %d.\n", n, n)
		fmt.Fprintf(&b, "func handle%d(ctx context.Context, in *Input) (*Output, error) {\n", n)
		b.WriteString("\tif in == nil {\n\t\treturn nil, errors.New(\"nil input\")\n\t}\n")
		fmt.Fprintf(&b, "\tv := in.Values[%d%%len(in.Values)]\n", n)
		b.WriteString("\ttotal := 0\n\tfor _, x := range in.Values {\n")
		if mod {
			fmt.Fprintf(&b, "\t\ttotal += x*v + %d\n", n)
		} else {
			b.WriteString("\t\ttotal += x * v\n")
		}
		b.WriteString("\t}\n")
		if mod {
			b.WriteString("\tout := &Output{Total: total, Name: strings.TrimSpace(in.Name)}\n")
		} else {
			b.WriteString("\tout := &Output{Total: total, Name: in.Name}\n")
		}
		fmt.Fprintf(&b, "\tlog.Printf(\"handle%d: %%d\", total)\n", n)
		b.WriteString("\treturn out, nil\n}\n\n")
	}
	return b.String()
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// fixtureDiff writes the fixture as a unified diff with 3 lines of context
// (what git diff writes), and returns it with the new contents by path.
func fixtureDiff(files []fixtureFile) ([]byte, map[string]string) {
	var b bytes.Buffer
	source := map[string]string{}
	for _, f := range files {
		oldLines := strings.Split(strings.TrimSuffix(f.fileText(false), "\n"), "\n")
		newText := f.fileText(true)
		newLines := strings.Split(strings.TrimSuffix(newText, "\n"), "\n")
		source[f.path] = newText
		fmt.Fprintf(&b, "diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n", f.path)
		var changed []int // 0-based lines that differ
		for i := range oldLines {
			if oldLines[i] != newLines[i] {
				changed = append(changed, i)
			}
		}
		// Group changed lines closer than 7 into one hunk, as git does.
		for i := 0; i < len(changed); {
			j := i
			for j+1 < len(changed) && changed[j+1]-changed[j] <= 6 {
				j++
			}
			from, to := max(0, changed[i]-3), min(len(oldLines)-1, changed[j]+3)
			n := to - from + 1
			fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", from+1, n, from+1, n)
			for k := from; k <= to; k++ {
				if oldLines[k] == newLines[k] {
					fmt.Fprintf(&b, " %s\n", oldLines[k])
				} else {
					fmt.Fprintf(&b, "-%s\n+%s\n", oldLines[k], newLines[k])
				}
			}
			i = j + 1
		}
	}
	return b.Bytes(), source
}

// fixture parses the fixture change and prepares it with opts (Source is
// filled in).
func fixture(t testing.TB, files []fixtureFile, opts hunks.Options) ([]*hunks.File, *hunks.Plan, map[string]string) {
	t.Helper()
	diff, source := fixtureDiff(files)
	parsed, err := hunks.Parse(bytes.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	opts.Source = func(p string) ([]byte, error) { return []byte(source[p]), nil }
	hp, err := hunks.Prepare(parsed, opts)
	if err != nil {
		t.Fatal(err)
	}
	return parsed, hp, source
}

// builtins returns the built-in skills, code-review first.
func builtins() []*skills.Skill { return skills.Builtins() }

// fakeModel is an in-memory Provider that answers each request as its
// script says (fakeopenai's vocabulary: a delay, a hang, an error status or
// a good answer's content), recording when each answered call started and
// ended (virtual time under testing/synctest).
type fakeModel struct {
	origin time.Time
	script func(req *execution.Request) fakeopenai.Answer // nil: an instant good answer without findings
	usage  execution.Usage

	mu    sync.Mutex
	calls []modelCall
}

// always is a script that gives every request a.
func always(a fakeopenai.Answer) func(*execution.Request) fakeopenai.Answer {
	return func(*execution.Request) fakeopenai.Answer { return a }
}

type modelCall struct {
	prompt     string // promptKey of the request
	start, end time.Duration
}

// promptKey identifies a request by its messages.
func promptKey(req *execution.Request) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Content)
		b.WriteByte(0)
	}
	return b.String()
}

func (m *fakeModel) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	start := time.Since(m.origin)
	var a fakeopenai.Answer
	if m.script != nil {
		a = m.script(req)
	}
	if a.Hang {
		<-ctx.Done()
		return nil, context.Cause(ctx)
	}
	if !fakeopenai.Sleep(ctx, a.Delay) {
		return nil, context.Cause(ctx)
	}
	m.mu.Lock()
	m.calls = append(m.calls, modelCall{prompt: promptKey(req), start: start, end: time.Since(m.origin)})
	m.mu.Unlock()
	if a.Status != 0 {
		return nil, providerError(a)
	}
	content := a.Content
	if content == "" {
		content = `{"findings":[]}`
	}
	return &execution.Response{Content: content, Model: req.Model, FinishReason: "stop", Usage: m.usage, FirstByte: a.FirstByte}, nil
}

// providerError is the error answer a scripts, as a provider adapter
// reports it: its status, code and headers, and the Retry-After in seconds
// when it has one.
func providerError(a fakeopenai.Answer) *execution.ProviderError {
	e := &execution.ProviderError{Status: a.Status, Code: a.Code, Message: http.StatusText(a.Status)}
	if len(a.Header) > 0 {
		e.Header = http.Header{}
		for k, v := range a.Header {
			e.Header.Set(k, v)
		}
		if s, err := strconv.Atoi(e.Header.Get("Retry-After")); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
	}
	return e
}

func (m *fakeModel) recorded() []modelCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]modelCall(nil), m.calls...)
}

// logNormal returns n latencies drawn from a log-normal distribution with
// the given median and 95th percentile, from a seeded source.
func logNormal(seed uint64, n int, median, p95 time.Duration) []time.Duration {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	mu := math.Log(median.Seconds())
	sigma := math.Log(p95.Seconds()/median.Seconds()) / 1.6448536269514722 // z of the 95th percentile
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = time.Duration(math.Exp(mu+sigma*rng.NormFloat64()) * float64(time.Second)).Round(time.Millisecond)
	}
	return out
}

// newEngine returns an engine with one route on p and the policy mod made.
func newEngine(t testing.TB, p execution.Provider, route func(*execution.Route), mod func(*execution.Policy)) *execution.Engine {
	t.Helper()
	r := execution.Route{Name: "primary", Model: "test-model", Provider: p}
	if route != nil {
		route(&r)
	}
	pol := execution.DefaultPolicy()
	if mod != nil {
		mod(&pol)
	}
	e, err := execution.New([]execution.Route{r}, pol, execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	return e
}
