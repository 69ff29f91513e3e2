package skills

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBuiltins(t *testing.T) {
	t.Parallel()
	found := loadBuiltins()
	if len(found.Skipped) > 0 || len(found.Warnings) > 0 {
		t.Fatalf("built-in skills skipped or warned: %+v %v", found.Skipped, found.Warnings)
	}
	got := found.Skills
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"code-review", "security-review"}, names); diff != "" {
		t.Errorf("built-in names mismatch (-want +got):\n%s", diff)
	}
	// What every built-in must tell the model (see the brief in DESIGN.md),
	// in the compact form that keeps a typical request at or below every
	// baseline of the adaptive deadline (issue 11; the review package
	// measures it). That the change is data, never instructions, is said
	// once for every skill by the prompt builder's untrusted-data rules.
	sections := []string{
		"Report:", // what to report
		"Never report:",
		"Report only when", "(1)", "(2)", "(3)", // the bar for a finding
		"no findings", // prefer none over a weak one
		"Severity", "when torn, the lower",
		"critical:", "high:", "medium:", "low:", "info",
		"Title", "Suggest only", // what a finding contains
		"changed lines",
	}
	for _, s := range got {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			if s.Source != "builtin" {
				t.Errorf("Source = %q, want builtin", s.Source)
			}
			if s.Description == "" || strings.Contains(s.Description, "\n") {
				t.Errorf("Description = %q, want one non-empty line", s.Description)
			}
			if len(s.Paths) != 0 || len(s.Ignore) != 0 {
				t.Errorf("Paths, Ignore = %q, %q, want none: built-ins review every file", s.Paths, s.Ignore)
			}
			if len(s.Instructions) < 1500 {
				t.Errorf("len(Instructions) = %d, want at least 1500", len(s.Instructions))
			}
			for _, want := range sections {
				if !strings.Contains(s.Instructions, want) {
					t.Errorf("Instructions do not contain %q", want)
				}
			}
			// The prompt builder owns the output format.
			for _, never := range []string{"JSON", "json", "start_line", "```"} {
				if strings.Contains(s.Instructions, never) {
					t.Errorf("Instructions contain %q: the output contract belongs to the prompt builder", never)
				}
			}
		})
	}
}

func TestBuiltinsReturnsCopies(t *testing.T) {
	t.Parallel()
	a := Builtins()
	a[0].Name = "changed"
	a[0].Paths = append(a[0].Paths, "x")
	b := Builtins()
	if b[0].Name == "changed" || len(b[0].Paths) != 0 {
		t.Errorf("Builtins() after changing an earlier result = %+v, want it unchanged", b[0])
	}
}

func TestCatalog(t *testing.T) {
	t.Parallel()
	mine := &Skill{Name: "code-review", Description: "Ours.", Instructions: "x", Source: ".warden/skills/code-review/SKILL.md"}
	extra := &Skill{Name: "a-first", Description: "A.", Instructions: "x", Source: ".warden/skills/a-first.md"}
	late := &Skill{Name: "a-first", Description: "Duplicate.", Instructions: "x", Source: ".claude/skills/a-first.md"}
	got := Catalog([]*Skill{mine, nil, extra, late})
	want := []string{
		"a-first .warden/skills/a-first.md",
		"code-review .warden/skills/code-review/SKILL.md",
		"security-review builtin",
	}
	if diff := cmp.Diff(want, sources(got)); diff != "" {
		t.Errorf("Catalog() mismatch (-want +got):\n%s", diff)
	}
	if got[1] != mine {
		t.Errorf("Catalog()[1] = %p, want the repository skill %p", got[1], mine)
	}
	if diff := cmp.Diff([]string{"code-review builtin", "security-review builtin"}, sources(Catalog(nil))); diff != "" {
		t.Errorf("Catalog(nil) mismatch (-want +got):\n%s", diff)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	all := Catalog([]*Skill{{Name: "go-ctx", Description: "d", Instructions: "x", Source: "go-ctx.md"}})
	tests := []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"security-review"}, []string{"security-review"}, ""},
		{[]string{"security-review", "go-ctx", "code-review"}, []string{"security-review", "go-ctx", "code-review"}, ""},
		{[]string{"go-ctx", "go-ctx"}, []string{"go-ctx"}, ""},
		{[]string{"code-review", "nope"}, nil, `unknown skill "nope" (known: code-review, go-ctx, security-review)`},
		{[]string{"b", "a", "b"}, nil, `unknown skills "b", "a" (known: code-review, go-ctx, security-review)`},
		{[]string{"Code-Review"}, nil, `unknown skill "Code-Review" (known: code-review, go-ctx, security-review)`},
	}
	for _, tt := range tests {
		got, err := Select(all, tt.names)
		var gotErr string
		if err != nil {
			gotErr = err.Error()
		}
		if gotErr != tt.wantErr {
			t.Errorf("Select(all, %q) error = %q, want %q", tt.names, gotErr, tt.wantErr)
		}
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if diff := cmp.Diff(tt.want, names); diff != "" {
			t.Errorf("Select(all, %q) mismatch (-want +got):\n%s", tt.names, diff)
		}
	}
	if _, err := Select(nil, []string{"x"}); err == nil || err.Error() != `unknown skill "x" (known: none)` {
		t.Errorf("Select(nil, [x]) error = %v, want unknown skill with known: none", err)
	}
}
