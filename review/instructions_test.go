package review

import (
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/internal/testsecret"
)

func TestParseInstructionsMode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    InstructionsMode
		wantErr bool
	}{
		{"", InstructionsAuto, false},
		{"auto", InstructionsAuto, false},
		{"config", InstructionsConfig, false},
		{"off", InstructionsOff, false},
		{"on", "", true},
		{"Off", "", true},
	}
	for _, tt := range tests {
		got, err := ParseInstructionsMode(tt.in)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("ParseInstructionsMode(%q) = %q, %v, want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

// guideRepo is a trusted revision with guidance at the root, in api/ and
// for Go files (Copilot's), and a CLAUDE.md with AGENTS.md's text.
func guideRepo() fstest.MapFS {
	return fstest.MapFS{
		"AGENTS.md":     {Data: []byte("AGENTS-MARKER: wrap errors with context.")},
		"CLAUDE.md":     {Data: []byte("AGENTS-MARKER: wrap errors with context.\n")},
		"api/AGENTS.md": {Data: []byte("API-DIR-MARKER: handlers validate input.")},
		".github/instructions/go.instructions.md": {Data: []byte("---\napplyTo: \"**/*.go\"\n---\nGO-MARKER: no panics.\n")},
	}
}

func newTestGuide(t *testing.T, s InstructionsSetup, paths ...string) *Guide {
	t.Helper()
	g, err := NewGuide(s, paths)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGuideFor(t *testing.T) {
	t.Parallel()
	entry := InstructionSetting{Key: "instructions[0]", Paths: []string{"api/**"}, Ignore: []string{"api/gen/**"}, Text: "ENTRY-MARKER: check the tenant."}
	paths := []string{"api/h.go", "api/gen/x.go", "web/app.ts", "README.md"}
	g := newTestGuide(t, InstructionsSetup{Repo: guideRepo(), From: "HEAD (abc1234)", Entries: []InstructionSetting{entry}}, paths...)
	tests := []struct {
		path string
		want []string // most general first
	}{
		{"api/h.go", []string{"AGENTS.md (= CLAUDE.md)", "api/AGENTS.md", ".github/instructions/go.instructions.md", "warden.toml instructions[0]"}},
		{"api/gen/x.go", []string{"AGENTS.md (= CLAUDE.md)", "api/AGENTS.md", ".github/instructions/go.instructions.md"}},
		{"web/app.ts", []string{"AGENTS.md (= CLAUDE.md)"}},
		{"README.md", []string{"AGENTS.md (= CLAUDE.md)"}},
	}
	for _, tt := range tests {
		a := g.For(tt.path)
		if diff := cmp.Diff(tt.want, a.Sources); diff != "" {
			t.Errorf("For(%q) sources mismatch (-want +got):\n%s", tt.path, diff)
		}
		if len(a.Cut) != 0 || len(a.LeftOut) != 0 {
			t.Errorf("For(%q) cut %q, left out %q, want neither at the default budget", tt.path, a.Cut, a.LeftOut)
		}
		if n := strings.Count(a.text, "AGENTS-MARKER"); n != 1 {
			t.Errorf("For(%q) holds AGENTS.md's text %d times, want once (CLAUDE.md has the same text)", tt.path, n)
		}
	}
	if a := g.For("api/h.go"); a.Chars != len("AGENTS-MARKER: wrap errors with context.")+len("API-DIR-MARKER: handlers validate input.")+len("GO-MARKER: no panics.")+len(entry.Text) {
		t.Errorf("For(api/h.go).Chars = %d, want the four texts' length", a.Chars)
	}
	var nilGuide *Guide
	if a := nilGuide.For("x.go"); a != nil {
		t.Errorf("nil Guide.For = %+v, want nil", a)
	}
}

// TestGuideBudget: the instructions kept first (warden.toml's, then the
// most specific files) fill the budget; the one that does not fit whole
// is cut at a line, or left out when too little room is left.
func TestGuideBudget(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("root guidance line\n", 30) // 570 characters
	repo := fstest.MapFS{
		"AGENTS.md":     {Data: []byte(long)},
		"api/AGENTS.md": {Data: []byte(strings.Repeat("a", 150))},
	}
	entry := InstructionSetting{Key: "instructions[0]", Text: strings.Repeat("e", 100)}
	tests := []struct {
		name       string
		max        int
		wantSrc    []string
		wantCut    []string
		wantOut    []string
		wantChars  int
		cutMarkers int
	}{
		{"all fit", 1000, []string{"AGENTS.md", "api/AGENTS.md", "warden.toml instructions[0]"}, nil, nil, 819, 0},
		{"root cut at a line", 550, []string{"AGENTS.md", "api/AGENTS.md", "warden.toml instructions[0]"}, []string{"AGENTS.md"}, nil, 250 + 284, 1},
		{"root left out", 400, []string{"api/AGENTS.md", "warden.toml instructions[0]"}, nil, []string{"AGENTS.md"}, 250, 0},
		{"only the entry whole", 200, []string{"warden.toml instructions[0]"}, nil, []string{"api/AGENTS.md", "AGENTS.md"}, 100, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := newTestGuide(t, InstructionsSetup{Repo: repo, MaxChars: tt.max, Entries: []InstructionSetting{entry}}, "api/x.go")
			a := g.For("api/x.go")
			if diff := cmp.Diff(tt.wantSrc, a.Sources); diff != "" {
				t.Errorf("sources mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCut, a.Cut); diff != "" {
				t.Errorf("cut mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOut, a.LeftOut); diff != "" {
				t.Errorf("left out mismatch (-want +got):\n%s", diff)
			}
			if a.Chars != tt.wantChars || a.Chars > tt.max {
				t.Errorf("chars = %d, want %d (budget %d)", a.Chars, tt.wantChars, tt.max)
			}
			if n := strings.Count(a.text, "cut here"); n != tt.cutMarkers {
				t.Errorf("the section says %d times that it was cut, want %d", n, tt.cutMarkers)
			}
			if tt.cutMarkers > 0 && !strings.Contains(a.text, "root guidance line\n[... cut here") {
				t.Errorf("the cut is not at a line end:\n%s", a.text)
			}
		})
	}
}

// TestInstructionsInPrompt: the repository's instructions sit in the
// system message, after the skill and before the output contract, fenced
// by a tag their text does not hold; a matching file's requests carry the
// per-path instruction too, another file's only AGENTS.md; the dry run
// names them per item and in all.
func TestInstructionsInPrompt(t *testing.T) {
	t.Parallel()
	g := newTestGuide(t, InstructionsSetup{Mode: InstructionsConfig, Repo: guideRepo(), From: "HEAD (abc1234)",
		Entries: []InstructionSetting{
			{Key: "instructions[0]", Paths: []string{"api/**"}, Text: "API-MARKER: check the tenant."},
			{Key: "instructions[1]", File: "AGENTS.md"},
		}}, "api/handler.go", "worker/jobs.py")
	eng := newEngine(t, &fakeModel{}, nil, nil)
	p := planFixture(t, eng, Options{Skills: builtins()[:1], Instructions: g})
	var apiItems, others int
	for _, wi := range p.Items {
		sys := wi.Request.Messages[0].Content
		user := wi.Request.Messages[1].Content
		skill, guide, contract := strings.Index(sys, "## Skill: code-review"), strings.Index(sys, "## Repository guidance"), strings.Index(sys, "## Answer")
		if !(skill >= 0 && skill < guide && guide < contract) {
			t.Fatalf("%s: system message order skill %d, guidance %d, contract %d; want skill < guidance < contract", wi.Chunk.Path, skill, guide, contract)
		}
		if strings.Contains(user, "AGENTS-MARKER") || strings.Contains(user, "API-MARKER") {
			t.Errorf("%s: the instructions are in the user message (the untrusted data)", wi.Chunk.Path)
		}
		if !strings.Contains(sys, "AGENTS-MARKER") || strings.Contains(sys, "GO-MARKER") || strings.Contains(sys, "API-DIR-MARKER") {
			t.Errorf("%s: system message should hold the configured AGENTS.md file only (mode config): %q", wi.Chunk.Path, sys[guide:contract])
		}
		start := strings.Index(sys, "<<<GUIDANCE-")
		tag := sys[start+3 : start+3+len("GUIDANCE-")+12]
		if n := strings.Count(sys, tag); n != 4 { // named twice in the framing, then open and close
			t.Errorf("%s: tag %s appears %d times, want 4", wi.Chunk.Path, tag, n)
		}
		if strings.HasPrefix(wi.Chunk.Path, "api/") {
			apiItems++
			if !strings.Contains(sys, "API-MARKER") || strings.Index(sys, "AGENTS-MARKER") > strings.Index(sys, "API-MARKER") {
				t.Errorf("%s: want AGENTS.md then the api/** instruction in the system message", wi.Chunk.Path)
			}
		} else {
			others++
			if strings.Contains(sys, "API-MARKER") {
				t.Errorf("%s: holds the api/** instruction", wi.Chunk.Path)
			}
		}
	}
	if apiItems == 0 || others == 0 {
		t.Fatalf("fixture gave %d api items and %d others, want both", apiItems, others)
	}
	rep := DryRun(p, eng, Options{})
	want := &InstructionsReport{Mode: InstructionsConfig, From: "HEAD (abc1234)", MaxChars: DefaultInstructionsChars, Sources: []InstructionSource{
		{Source: "warden.toml instructions[0]", AppliesTo: "api/**", Chars: 29, Items: apiItems},
		{Source: "AGENTS.md (warden.toml instructions[1])", AppliesTo: "every file", Chars: 40, Items: apiItems + others},
	}}
	if diff := cmp.Diff(want, rep.Instructions); diff != "" {
		t.Errorf("report instructions mismatch (-want +got):\n%s", diff)
	}
	for _, it := range rep.Items {
		want := []string{"AGENTS.md (warden.toml instructions[1])"}
		if strings.HasPrefix(it.Path, "api/") {
			want = append(want, "warden.toml instructions[0]")
		}
		if diff := cmp.Diff(want, it.Instructions); diff != "" || it.InstructionsChars == 0 {
			t.Errorf("item %s instructions mismatch (chars %d) (-want +got):\n%s", it.Path, it.InstructionsChars, diff)
		}
	}
}

// TestInstructionsOff: mode off sends nothing, reads nothing (a missing
// [[instructions]] file is no error), and the report says so.
func TestInstructionsOff(t *testing.T) {
	t.Parallel()
	g := newTestGuide(t, InstructionsSetup{Mode: InstructionsOff, Repo: guideRepo(),
		Entries: []InstructionSetting{{Key: "instructions[0]", File: "missing.md"}}}, "api/handler.go")
	eng := newEngine(t, &fakeModel{}, nil, nil)
	p := planFixture(t, eng, Options{Skills: builtins()[:1], Instructions: g})
	for _, wi := range p.Items {
		if strings.Contains(wi.Request.Messages[0].Content, "Repository guidance") {
			t.Fatalf("%s: instructions sent with mode off", wi.Chunk.Path)
		}
	}
	want := &InstructionsReport{Mode: InstructionsOff, MaxChars: DefaultInstructionsChars, Sources: []InstructionSource{}}
	if diff := cmp.Diff(want, p.Instructions); diff != "" {
		t.Errorf("report mismatch (-want +got):\n%s", diff)
	}
	if got := p.Instructions.Describe(); got != `off ([review] instructions = "off")` {
		t.Errorf("Describe() = %q", got)
	}
}

// TestInstructionsInCacheKey: the instructions are part of the exact
// request the results cache keys on: another AGENTS.md is a miss, the same
// one a hit, and none differs from either.
func TestInstructionsInCacheKey(t *testing.T) {
	t.Parallel()
	eng := newEngine(t, &fakeModel{}, nil, nil)
	keyWith := func(agents string) string {
		var repo fstest.MapFS
		if agents != "" {
			repo = fstest.MapFS{"AGENTS.md": {Data: []byte(agents)}}
		}
		opts := Options{Skills: builtins()[:1]}
		if repo != nil {
			opts.Instructions = newTestGuide(t, InstructionsSetup{Repo: repo}, "api/handler.go")
		}
		p := planFixture(t, eng, opts)
		return CacheKey("trusted", "m", p.Items[0].Request)
	}
	a, a2, b, none := keyWith("Rule A."), keyWith("Rule A."), keyWith("Rule B."), keyWith("")
	if a != a2 {
		t.Errorf("the same AGENTS.md gave two keys")
	}
	if a == b || a == none || b == none {
		t.Errorf("keys with AGENTS.md A, B and none are not all different: %s %s %s", a, b, none)
	}
}

// TestInstructionsDeadline: the instructions are measured in the exact
// body like the rest of the request, so the adaptive deadline grows with
// them, and the budget bounds how far: at the default 6,000 characters a
// typical request's deadline doubles, at the 50,000-character ceiling it
// reaches the rule's 10-minute cap, never beyond.
func TestInstructionsDeadline(t *testing.T) {
	t.Parallel()
	eng := newEngine(t, &fakeModel{}, nil, func(p *execution.Policy) {
		p.RequestTimeout = 2 * time.Minute
		p.ItemBudget, p.Budget = time.Hour, 2*time.Hour
	})
	effective := func(chars int) (time.Duration, int) {
		opts := Options{Skills: builtins()[:1]}
		if chars > 0 {
			repo := fstest.MapFS{"AGENTS.md": {Data: []byte(strings.Repeat("Keep handlers small and wrap errors.\n", chars/37+1))}}
			opts.Instructions = newTestGuide(t, InstructionsSetup{Repo: repo, MaxChars: chars}, "cmd/server/main.go")
		}
		_, hp, _ := fixture(t, fixtureFiles[6:], hunks.Options{})
		p, err := NewPlan(hp, eng, opts)
		if err != nil {
			t.Fatal(err)
		}
		wi := p.Items[0]
		if _, eff, err := eng.Timeout(eng.Routes()[0], wi.Request); err != nil || eff != wi.TimeoutEffective {
			t.Fatalf("plan's deadline %s, the engine's for the same body %s (%v)", wi.TimeoutEffective, eff, err)
		}
		return wi.TimeoutEffective, execution.Measure(wi.Request, eng.Routes()[0])
	}
	none, bodyNone := effective(0)
	def, bodyDef := effective(DefaultInstructionsChars)
	most, bodyMost := effective(MaxInstructionsChars)
	t.Logf("body chars: none %d, default %d, most %d", bodyNone, bodyDef, bodyMost)
	if none != 2*time.Minute || bodyNone > execution.BaselineBodyChars {
		t.Errorf("without instructions: %s for %d chars, want the 2m base at or below the %d baseline", none, bodyNone, execution.BaselineBodyChars)
	}
	if def != 4*time.Minute {
		t.Errorf("with %d characters of instructions: %s for %d chars, want 4m (twice the base)", DefaultInstructionsChars, def, bodyDef)
	}
	if most != execution.TimeoutCeiling {
		t.Errorf("with %d characters of instructions: %s for %d chars, want the %s ceiling", MaxInstructionsChars, most, bodyMost, execution.TimeoutCeiling)
	}
}

func TestNewGuideErrors(t *testing.T) {
	t.Parallel()
	_, err := NewGuide(InstructionsSetup{Repo: guideRepo(), From: "the base revision abc1234",
		Entries: []InstructionSetting{{Key: "instructions[0]", Where: "warden.toml:9: instructions[0]", File: "docs/review.md"}}}, nil)
	want := "warden.toml:9: instructions[0]: file docs/review.md is not in the base revision abc1234 (instructions are read from there, not from the change: commit it first)"
	if err == nil || err.Error() != want {
		t.Errorf("NewGuide(missing file) error = %v, want %s", err, want)
	}
	g := newTestGuide(t, InstructionsSetup{}, "a.go")
	if r := g.report(nil); r.NotRead != "no trusted revision to read them from" || r.Describe() != "none: no trusted revision to read them from" {
		t.Errorf("no tree: report %+v, %q", r, r.Describe())
	}
}

// TestInstructionsInABatch: a batched request (all skills on a chunk)
// carries the instructions once, after every skill.
func TestInstructionsInABatch(t *testing.T) {
	t.Parallel()
	g := newTestGuide(t, InstructionsSetup{Repo: guideRepo()}, "api/handler.go")
	eng := newEngine(t, &fakeModel{}, nil, nil)
	p := planFixture(t, eng, Options{Skills: builtins(), BatchSkills: true, Instructions: g})
	sys := p.Items[0].Request.Messages[0].Content
	last, guide := strings.LastIndex(sys, "## Skill: "), strings.Index(sys, "## Repository guidance")
	if p.Items[0].Request != p.Items[1].Request || strings.Count(sys, "AGENTS-MARKER") != 1 || !(last >= 0 && last < guide) {
		t.Errorf("batched system message: shared %v, AGENTS.md %d times, last skill at %d, guidance at %d; want one request, once, after every skill",
			p.Items[0].Request == p.Items[1].Request, strings.Count(sys, "AGENTS-MARKER"), last, guide)
	}
}

// TestInstructionsSecretsRedacted: a secret committed to an AGENTS.md is
// replaced by a placeholder in the prompt like one in the change, and the
// plan records where (Redaction "instructions").
func TestInstructionsSecretsRedacted(t *testing.T) {
	t.Parallel()
	key := testsecret.AWSAccessKey(7)
	repo := fstest.MapFS{"AGENTS.md": {Data: []byte("Deploy with the shared key " + key + " when asked.\n")}}
	g := newTestGuide(t, InstructionsSetup{Repo: repo}, "api/handler.go")
	eng := newEngine(t, &fakeModel{}, nil, nil)
	p := planFixture(t, eng, Options{Skills: builtins()[:1], Instructions: g})
	for _, wi := range p.Items {
		sys := wi.Request.Messages[0].Content
		if strings.Contains(sys, key) || !strings.Contains(sys, "Deploy with the shared key [secret withheld: aws-access-token]") {
			t.Fatalf("%s: the system message holds the key, or no placeholder:\n%s", wi.Chunk.Path, sys)
		}
	}
	want := []Redaction{{Path: "AGENTS.md", Rule: "aws-access-token", Where: "instructions"}}
	if diff := cmp.Diff(want, p.Redacted); diff != "" {
		t.Errorf("redactions mismatch (-want +got):\n%s", diff)
	}
	if g.docs[0].Text != "Deploy with the shared key "+key+" when asked." {
		t.Errorf("the guide itself was changed: %q", g.docs[0].Text)
	}
}
