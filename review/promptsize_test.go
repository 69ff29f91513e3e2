package review

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/warden/execution"
	"github.com/org/warden/hunks"
)

// typicalChunk is a typical built-in-skill work item (issue 11): one hunk of
// 20 changed lines of Go (10 removed, 10 added) of about 40 characters each
// (a typical Go line), in a 200-line file, with the most context hunks
// gives by default (20 lines each side).
func typicalChunk(t testing.TB) *hunks.Chunk {
	t.Helper()
	var old, nw []string
	for i := range 200 {
		old = append(old, fmt.Sprintf("\tr%03d := compute(ctx, in[%d], opt.Max)", i, i))
	}
	nw = append(nw, old[:100]...)
	for i := range 10 {
		nw = append(nw, fmt.Sprintf("\tv%03d, err := checked(ctx, in[%d], lim)", i, i))
	}
	nw = append(nw, old[110:]...)
	var diff bytes.Buffer
	diff.WriteString("diff --git a/pkg/compute/compute.go b/pkg/compute/compute.go\n--- a/pkg/compute/compute.go\n+++ b/pkg/compute/compute.go\n")
	fmt.Fprintf(&diff, "@@ -98,14 +98,14 @@ func run(ctx context.Context) error {\n")
	for _, l := range old[97:100] {
		diff.WriteString(" " + l + "\n")
	}
	for _, l := range old[100:110] {
		diff.WriteString("-" + l + "\n")
	}
	for _, l := range nw[100:110] {
		diff.WriteString("+" + l + "\n")
	}
	for _, l := range old[110:111] {
		diff.WriteString(" " + l + "\n")
	}
	files, err := hunks.Parse(&diff)
	if err != nil {
		t.Fatal(err)
	}
	src := []byte(strings.Join(nw, "\n") + "\n")
	hp, err := hunks.Prepare(files, hunks.Options{Source: func(string) ([]byte, error) { return src, nil }})
	if err != nil || len(hp.Chunks) != 1 {
		t.Fatalf("Prepare: %v, %d chunks", err, len(hp.Chunks))
	}
	return &hp.Chunks[0]
}

// TestBuiltinRequestFitsBaselines: a typical built-in-skill request (a hunk
// of 20 changed lines with its context) is at or below every baseline of the
// adaptive deadline, so it keeps the plan's 2-minute base exactly. On main
// the built-in skills' system prompt alone was 9,920 characters, so every
// request got 2× (4 minutes).
func TestBuiltinRequestFitsBaselines(t *testing.T) {
	t.Parallel()
	c := typicalChunk(t)
	r := execution.Route{Name: "r", Model: "moonshotai/kimi-k2"}
	for _, sk := range builtins() {
		req := buildRequest(sk, c, Change{Title: "Check compute errors"}, DefaultMaxTokens)
		q := *req
		q.Model = r.Model
		chars := execution.BodyChars(&q, r)
		eff, err := execution.EffectiveTimeout(2*time.Minute, execution.RequestShape{
			BodyChars: chars, MaxTokens: req.MaxTokens, Messages: len(req.Messages),
			StrictSchema: req.Schema != nil && req.Schema.Strict,
		})
		t.Logf("%s: system prompt %d characters, request body %d characters, deadline %v",
			sk.Name, len([]rune(req.Messages[0].Content)), chars, eff)
		if err != nil || chars > execution.BaselineBodyChars || eff != 2*time.Minute {
			t.Errorf("%s: a typical request is %d characters (baseline %d) and gets %v, want ≤ the baseline and the 2m base",
				sk.Name, chars, execution.BaselineBodyChars, eff)
		}
	}
}
