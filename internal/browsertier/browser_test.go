package browsertier

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"image/png"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
	"github.com/org/warden/report"
	"github.com/org/warden/review"
	"github.com/org/warden/skills"
)

// model answers each request with two findings on the chunk's lines, of a
// severity that cycles with the file, so that a review of 20 chunks has 40.
type model struct{}

var severities = []string{"critical", "high", "medium", "low", "info"}

func (model) Complete(ctx context.Context, req *execution.Request) (*execution.Response, error) {
	prompt := req.Messages[len(req.Messages)-1].Content
	m := regexp.MustCompile(`File: pkg/svc(\d+)/handler\.go`).FindStringSubmatch(prompt)
	n := 0
	if m != nil {
		fmt.Sscanf(m[1], "%d", &n)
	}
	type finding struct {
		Severity    string `json:"severity"`
		Title       string `json:"title"`
		Description string `json:"description"`
		StartLine   int    `json:"start_line"`
		EndLine     int    `json:"end_line"`
		Suggestion  string `json:"suggestion"`
	}
	var fs []finding
	for k := range 2 {
		fs = append(fs, finding{
			Severity: severities[(n+k)%len(severities)],
			Title:    fmt.Sprintf("F%02d-%d: the handler drops the error from Save", n, k),
			Description: "Save can fail (the store is remote); the error is assigned to _ and the handler " +
				"answers 200 anyway, so a failed write looks like a success to the client.\n\n" +
				"```go\n_ = store.Save(ctx, rec)\n```",
			StartLine: 12 + k, EndLine: 12 + k,
			Suggestion: "\tif err := store.Save(ctx, rec); err != nil {\n\t\treturn err\n\t}",
		})
	}
	b, _ := json.Marshal(map[string]any{"findings": fs})
	return &execution.Response{Content: string(b), Model: req.Model, FinishReason: "stop",
		Usage: execution.Usage{PromptTokens: 900, CompletionTokens: 300}}, nil
}

// reviewWith40Findings runs a real review (hunks, the engine, the answer
// validation) of 20 changed files against model.
func reviewWith40Findings(t *testing.T) *review.Report {
	t.Helper()
	var diff strings.Builder
	for i := range 20 {
		p := fmt.Sprintf("pkg/svc%02d/handler.go", i)
		fmt.Fprintf(&diff, "diff --git a/%[1]s b/%[1]s\nindex 1111111..2222222 100644\n--- a/%[1]s\n+++ b/%[1]s\n", p)
		diff.WriteString("@@ -10,6 +10,6 @@ func Handle(ctx context.Context, rec *Record) error {\n")
		diff.WriteString(" \tif rec == nil {\n \t\treturn errNil\n-\t\tstore.Save(ctx, rec)\n+\t_ = store.Save(ctx, rec)\n+\tlog.Printf(\"saved %v\", rec.ID)\n-\tlog.Print(rec)\n \treturn nil\n \t}\n")
	}
	files, err := hunks.Parse(strings.NewReader(diff.String()))
	if err != nil {
		t.Fatal(err)
	}
	hp, err := hunks.Prepare(files, hunks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := execution.New([]execution.Route{{Name: "primary", BaseURL: "https://openrouter.ai/api/v1", Model: "moonshotai/kimi-k2", Provider: model{}}},
		execution.DefaultPolicy(), execution.Options{Rand: rand.New(rand.NewPCG(1, 2))})
	if err != nil {
		t.Fatal(err)
	}
	opts := review.Options{Skills: []*skills.Skill{{Name: "code-review", Instructions: "Find bugs."}}, FailOn: review.SeverityHigh}
	plan, err := review.NewPlan(hp, eng, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := review.Run(t.Context(), plan, eng, opts)
	if len(r.Findings) != 40 {
		t.Fatalf("review has %d findings, want 40", len(r.Findings))
	}
	return r
}

// chromium returns the browser to use: $WARDEN_CHROMIUM, else chromium on
// PATH. It skips the test when there is none, unless WARDEN_BROWSER=1.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("WARDEN_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("WARDEN_BROWSER") == "1" {
		t.Fatal("WARDEN_BROWSER=1 but no chromium on PATH (set WARDEN_CHROMIUM)")
	}
	t.Skip("no chromium on PATH: the browser tier needs headless Chromium (apt-get install chromium)")
	return ""
}

// runChromium runs the browser headless on page with args, with a fresh
// profile and nothing that reaches the network.
func runChromium(t *testing.T, bin, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--hide-scrollbars", "--user-data-dir=" + t.TempDir(), "--window-size=1280,800", "--virtual-time-budget=2000"}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	return out
}

// page is the HTML around a rendered Markdown body: GitHub's page width
// and type (a stylesheet after github-markdown-css, not GitHub's own), with
// 120 px of page chrome above the body as a pull request's check-run page
// has, and a script that measures where the given texts end.
const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>warden report</title><style>
body { margin: 0; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; color: #1f2328; background: #fff; }
.chrome { height: 120px; border-bottom: 1px solid #d1d9e0; background: #f6f8fa; box-sizing: border-box; padding: 16px 32px; color: #59636e; }
.markdown-body { max-width: 880px; margin: 0 auto; padding: 16px 32px; }
h1, h2, h3 { margin: 24px 0 16px; font-weight: 600; line-height: 1.25; }
h2 { font-size: 1.5em; padding-bottom: .3em; border-bottom: 1px solid #d1d9e0; }
h3 { font-size: 1.25em; }
p, ul, ol, table, pre, details { margin: 0 0 16px; }
ul, ol { padding-left: 2em; }
code { font: 85% ui-monospace, SFMono-Regular, Menlo, monospace; background: #eff1f3; padding: .2em .4em; border-radius: 6px; }
pre { background: #f6f8fa; padding: 16px; overflow: auto; border-radius: 6px; }
pre code { background: none; padding: 0; }
table { border-collapse: collapse; display: block; overflow: auto; }
th, td { border: 1px solid #d1d9e0; padding: 6px 13px; }
summary { cursor: pointer; }
</style></head><body><div class="chrome">GitHub page chrome (check run header), 120 px</div>
<article class="markdown-body">{{BODY}}</article>
<pre id="measure"></pre>
<script>
const want = {{WANT}};
const out = {width: window.innerWidth, viewport: window.innerHeight, scrollHeight: document.documentElement.scrollHeight, found: {}};
const all = Array.from(document.querySelectorAll("article *"));
for (const w of want) {
  // the innermost element whose visible text holds w
  const hits = all.filter(e => e.innerText && e.innerText.includes(w) && e.offsetParent !== null);
  const el = hits.length ? hits[hits.length - 1] : null;
  out.found[w] = el ? Math.round(el.getBoundingClientRect().bottom + window.scrollY) : -1;
}
document.getElementById("measure").textContent = "MEASURE" + JSON.stringify(out) + "END";
</script></body></html>`

func TestMarkdownInBrowser(t *testing.T) {
	bin := chromium(t)
	r := reviewWith40Findings(t)
	var md bytes.Buffer
	if err := report.Write(&md, r, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	// The verdict is the first heading; the first findings are the most
	// severe, as the report orders them.
	verdict := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(md.String(), "## "), "\n", 2)[0])
	verdictText := stripMarkdown(verdict)
	want := []string{verdictText}
	for _, f := range r.Findings[:3] {
		want = append(want, f.Title)
	}
	wantJSON, _ := json.Marshal(want)
	dir := t.TempDir()
	if d := os.Getenv("WARDEN_SCREENSHOT_DIR"); d != "" {
		dir = d
	}
	htmlPath := filepath.Join(dir, "report.html")
	if err := os.WriteFile(htmlPath, []byte(strings.NewReplacer("{{BODY}}", body.String(), "{{WANT}}", string(wantJSON)).Replace(page)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.md"), md.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(dir, "report.png")
	runChromium(t, bin, htmlPath, "--screenshot="+shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() == 0 {
		t.Fatalf("no screenshot at %s: %v", shot, err)
	}
	dom := runChromium(t, bin, htmlPath, "--dump-dom")
	m := regexp.MustCompile(`MEASURE(.*?)END`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("the page's measurement did not run:\n%.2000s", dom)
	}
	var got struct {
		Width, Viewport, ScrollHeight int
		Found                         map[string]int
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &got); err != nil {
		t.Fatal(err)
	}
	// The screenshot is the first screen; the measuring run lays the page
	// out at the same width (its window's height may differ: positions are
	// measured from the top of the page, so it does not matter).
	width, height := pngSize(t, shot)
	t.Logf("screenshot %s (%d×%d; %d bytes of Markdown); page %d px high; bottoms %v", shot, width, height, md.Len(), got.ScrollHeight, got.Found)
	if width != 1280 || height != 800 || got.Width != width {
		t.Fatalf("screenshot %d×%d, measured at width %d; want 1280×800 both", width, height, got.Width)
	}
	for _, w := range want {
		switch y := got.Found[w]; {
		case y < 0:
			t.Errorf("%q is not on the page", w)
		case y > height:
			t.Errorf("%q ends at %d px, below the %d px first screen: the reader must scroll to see it", w, y, height)
		}
	}
}

// stripMarkdown removes the escapes and emphasis of a heading's Markdown,
// leaving the text a browser shows.
func stripMarkdown(s string) string {
	s = regexp.MustCompile(`\\([\\\x60*_{}\[\]()#+\-.!|<>~])`).ReplaceAllString(s, "$1")
	return strings.NewReplacer("**", "", "`", "").Replace(s)
}

// pngSize reads the width and height of a PNG file from its IHDR chunk.
func pngSize(t *testing.T, path string) (w, h int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg.Width, cfg.Height
}

// TestDescriptionCodeIsCode: a code block in a finding's description is
// rendered as a code block (goldmark, as GitHub's renderer reads GFM), not
// as literal backticks, and markup inside it stays text.
func TestDescriptionCodeIsCode(t *testing.T) {
	r := reviewWith40Findings(t)
	r.Findings[0].Description = "Watch out:\n\n```go\n_ = store.Save(ctx, rec) // </details><img src=x onerror=alert(1)>\n```\n```\nmore"
	var md, body bytes.Buffer
	if err := report.Write(&md, r, report.FormatMarkdown, report.Options{}); err != nil {
		t.Fatal(err)
	}
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert(md.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	out := body.String()
	if !strings.Contains(out, `<pre><code class="language-go">_ = store.Save(ctx, rec) // &lt;/details&gt;&lt;img src=x onerror=alert(1)&gt;`) {
		t.Errorf("the description's code block is not rendered as Go code:\n%.3000s", out)
	}
	if strings.Contains(out, "```") || strings.Contains(out, "<img src=x") {
		t.Errorf("literal fences, or markup from the description, in the rendered page:\n%.3000s", out)
	}
}
