package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/org/warden/review"
)

// TestContextBeyondTheHunk: with [review] context = "auto", a Go change
// whose bug needs the callee's definition (discount returns the amount
// taken off, and the change uses it as the price) sends that definition,
// from another file of the package, in the prompt, within context_chars;
// the dry run shows per item what is included.
func TestContextBeyondTheHunk(t *testing.T) {
	t.Parallel()
	r := newGitRepo(t)
	var cart strings.Builder
	cart.WriteString("package cart\n\n")
	for i := range 80 {
		fmt.Fprintf(&cart, "// Helper%d is filler.\nfunc Helper%d(x int) int {\n\treturn x + %d\n}\n\n", i, i, i)
	}
	cart.WriteString("// Total is the price after the discount.\nfunc Total(price, pct int) int {\n\treturn price\n}\n")
	r.write("go.mod", "module example.com/shop\n\ngo 1.22\n")
	r.write("cart/cart.go", cart.String())
	r.write("cart/discount.go", "package cart\n\n// discount is the amount taken off price at pct percent.\nfunc discount(price, pct int) int {\n\treturn price * pct / 100\n}\n")
	r.write("warden.toml", "[review]\ncontext = \"auto\"\ncontext_chars = 3000\n")
	r.git("add", "-A")
	r.Commit("shop")
	r.write("cart/cart.go", strings.Replace(cart.String(), "\treturn price\n}\n", "\treturn discount(price, pct)\n}\n", 1))

	dry := runWarden(t, r.Dir, nil, "", "review", "--dry-run", "--skill", "code-review")
	if dry.code != exitOK || !strings.Contains(dry.stdout, "Context beyond the hunk, per item:") ||
		!strings.Contains(dry.stdout, "the declaration of discount (cart/discount.go:3-6)") {
		t.Fatalf("dry run: exit %d\n%s%s", dry.code, dry.stdout, dry.stderr)
	}

	m := newFakeModel(t, "low")
	res := runWarden(t, r.Dir, m.env("sk-ctx"), "", "review", "--skill", "code-review", "--format", "json")
	if res.code == exitUsage {
		t.Fatalf("review: exit %d: %s", res.code, res.stderr)
	}
	var rep review.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 1 || rep.Items[0].ContextChars == 0 || rep.Items[0].ContextChars > 3000 {
		t.Fatalf("items %+v: want one, with context within 3000 chars", rep.Items)
	}
	m.mu.Lock()
	prompt := m.requests[0].Messages[1].Content
	m.mu.Unlock()
	for _, want := range []string{"Context included: the declaration of discount (cart/discount.go:3-6).", "func discount(price, pct int) int {\n\treturn price * pct / 100\n}"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q:\n%s", want, prompt)
		}
	}
	if strings.Contains(prompt, "func Helper3(") {
		t.Errorf("the prompt carries the unrelated helpers: the whole file was sent")
	}
	// Total itself is in the lines shown around the change: not sent twice.
	if strings.Count(prompt, "func Total(") != 1 {
		t.Errorf("Total is in the prompt %d times, want once", strings.Count(prompt, "func Total("))
	}
	// Off (the default): no context, and the dry run says nothing of it.
	r.write("warden.toml", "")
	if off := runWarden(t, r.Dir, nil, "", "review", "--dry-run", "--skill", "code-review"); strings.Contains(off.stdout, "Context beyond") {
		t.Errorf("context off, the dry run lists context:\n%s", off.stdout)
	}
	r.write("warden.toml", "[review]\ncontext = \"all\"\n")
	if bad := runWarden(t, r.Dir, nil, "", "review", "--dry-run"); bad.code != exitUsage || !strings.Contains(bad.stderr, "review.context") {
		t.Errorf("context = \"all\": exit %d, %q", bad.code, bad.stderr)
	}
}
