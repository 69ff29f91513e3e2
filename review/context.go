package review

import (
	"fmt"
	"strings"

	"github.com/org/warden/related"
)

// renderContext writes the context beyond the hunk (Options.Context) after
// the change, inside the same untrusted fence: it is the repository's code,
// as much the author's as the change. It says what it includes, and that
// it is for reading only: findings stay on the lines the request allows.
func renderContext(cx *related.Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nContext included: %s.\n", cx.Describe())
	if len(cx.Parts) == 0 {
		return b.String()
	}
	b.WriteString("The code below is for reference only: report only on the lines the request allows.\n")
	for _, p := range cx.Parts {
		fmt.Fprintf(&b, "\n--- %s %s lines %d-%d", p.Kind, p.Path, p.StartLine, p.EndLine)
		if p.Name != "" {
			fmt.Fprintf(&b, " (%s)", p.Name)
		}
		b.WriteString(" ---\n")
		b.WriteString(p.Text)
		if !strings.HasSuffix(p.Text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
