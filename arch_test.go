package warden_test

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/org/warden"

// allowed lists, per package of this module, what its non-test files may
// import besides the standard library: the arrows of DESIGN.md §2 and the
// third-party confinement. A package missing here fails the test, so a new
// package must state its arrows.
var allowed = map[string][]string{
	"hunks": {module + "/secrets", "github.com/bluekeyes/go-gitdiff", "github.com/bmatcuk/doublestar/v4"},
	// secrets: the one home of secret detection and redaction, at the
	// bottom of the house; the only importer of gitleaks.
	"secrets":          {"github.com/zricethezav/gitleaks/v8", "github.com/rs/zerolog"},
	"bot":              {},
	"skills":           {"gopkg.in/yaml.v3", "github.com/bmatcuk/doublestar/v4"},
	"execution":        {"github.com/sourcegraph/conc"},
	"execution/openai": {module + "/execution", module + "/secrets", "github.com/sashabaranov/go-openai"},
	"review":           {module + "/execution", module + "/hunks", module + "/skills", module + "/related", module + "/secrets"},
	"related":          {module + "/hunks"},
	"report":           {module + "/review", module + "/execution"},
	"probe":            {module + "/execution", module + "/review"},
	"telemetry":        {module + "/review", "go.opentelemetry.io/otel", "github.com/go-logr/logr"},
	"config":           {module + "/review", module + "/execution", module + "/execution/openai", module + "/hunks", module + "/related", module + "/secrets", "github.com/pelletier/go-toml/v2"},
	"report/github":    {module + "/review", module + "/report", module + "/hunks", module + "/execution", module + "/secrets", "github.com/google/go-github/v62", "github.com/sethvargo/go-githubactions"},
	// ghbot: the bot as a GitHub service (its state between events), over
	// report/github's Client.
	"ghbot": {module + "/report/github", module + "/report", module + "/review", "github.com/google/go-github/v62"},
	"action": {
		module + "/review", module + "/report", module + "/report/github", module + "/hunks", module + "/skills",
		module + "/execution", module + "/internal/gitrepo", module + "/bot", module + "/secrets", module + "/ghbot",
		"github.com/google/go-github/v62", "github.com/sethvargo/go-githubactions",
	},
	"cmd/warden": {
		module + "/cli", module + "/action", module + "/config", module + "/review", module + "/report", module + "/hunks",
		module + "/skills", module + "/telemetry", module + "/internal/gitrepo", module + "/workdiff", module + "/probe", module + "/eval",
		module + "/secrets",
		"github.com/sethvargo/go-githubactions", "golang.org/x/term",
	},
	// cli reads flags into the value types of the packages it names; it
	// touches no process state (TestCLITouchesNoProcess).
	"cli":                  {module + "/action", module + "/eval", module + "/report", module + "/review", "github.com/agnivade/levenshtein"},
	"workdiff":             {module + "/hunks", module + "/internal/gitrepo", module + "/review"},
	"eval":                 {module + "/review", module + "/hunks", module + "/skills", module + "/execution", module + "/related", module + "/scenario", module + "/internal/gitrepo", "github.com/pelletier/go-toml/v2"},
	"scenario":             {module + "/execution", module + "/review", module + "/internal/fakeopenai", "github.com/pelletier/go-toml/v2"},
	"internal/evalmodel":   {module + "/internal/fakeopenai"},
	"internal/gitrepo":     {module + "/secrets"},
	"internal/testgit":     {},
	"internal/testsummary": {},
	"internal/fakegithub":  {"github.com/getkin/kin-openapi", "github.com/vektah/gqlparser/v2"},
	"internal/fakeotlp":    {"go.opentelemetry.io/proto/otlp", "google.golang.org/protobuf"},
	"internal/actiontest":  {},
	"internal/fakeopenai":  {},
	"internal/gendiff":     {},
	"internal/testsecret":  {},
	"internal/browsertier": {}, // a module of its own, test-only: goldmark stays out of go.mod
	"internal/peers/act":   {},
	"internal/peers/ollama": {
		module + "/execution", module + "/execution/openai", module + "/review", module + "/hunks", module + "/skills",
	},
}

// confined third-party modules may appear only in these packages, tests
// included.
var confined = map[string][]string{
	"github.com/sashabaranov/go-openai":     {"execution/openai"},
	"github.com/google/go-github/v62":       {"report/github", "action", "ghbot"},
	"github.com/sethvargo/go-githubactions": {"report/github", "action", "cmd/warden"},
	"go.opentelemetry.io/otel":              {"telemetry"},
	"github.com/bluekeyes/go-gitdiff":       {"hunks"},
	"github.com/zricethezav/gitleaks/v8":    {"secrets"},
	// GitHub's GraphQL schema is the fake's business only: warden sends
	// GraphQL as plain JSON over go-github's client.
	"github.com/vektah/gqlparser/v2": {"internal/fakegithub"},
	// scenario decodes a user's incident file (faults, items, expectations);
	// its [review], [retry] and [[routes]] go through config.Parse.
	"github.com/pelletier/go-toml/v2": {"config", "scenario", "eval"},
}

func TestImportArrows(t *testing.T) {
	t.Parallel()
	var dirs []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			if dir := filepath.ToSlash(filepath.Dir(path)); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if dir == "." {
			continue
		}
		pkg, err := build.ImportDir(dir, 0)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if pkg.Doc == "" {
			t.Errorf("%s: package has no doc comment saying what it owns and must not import", dir)
		}
		allow, ok := allowed[dir]
		if !ok {
			t.Errorf("%s: package has no entry in arch_test.go's allow-list", dir)
			continue
		}
		// An arrow no file of the package draws (its tests' included: a
		// test-only package's arrows are its tests') is dropped.
		all := slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports)
		for _, a := range allow {
			if !slices.ContainsFunc(all, func(imp string) bool { return permits(a, imp) }) {
				t.Errorf("%s: its allow-list admits %s, which it does not import: drop the arrow", dir, a)
			}
		}
		for _, imp := range pkg.Imports {
			if isStd(imp) || imp == module+"/"+dir {
				continue
			}
			if !slices.ContainsFunc(allow, func(a string) bool { return permits(a, imp) }) {
				t.Errorf("%s imports %s, which DESIGN.md §2 does not allow", dir, imp)
			}
		}
		for _, imp := range slices.Concat(pkg.Imports, pkg.TestImports, pkg.XTestImports) {
			for mod, owners := range confined {
				if (imp == mod || strings.HasPrefix(imp, mod+"/")) && !slices.Contains(owners, dir) {
					t.Errorf("%s imports %s, which is confined to %v", dir, imp, owners)
				}
			}
		}
	}
}

// permits reports whether the allow-list entry a admits the import imp: a
// package of this module only by its exact path (or, ending in "/", every
// package below it); a third-party module with all its packages.
func permits(a, imp string) bool {
	switch {
	case strings.HasSuffix(a, "/"):
		return strings.HasPrefix(imp, a)
	case strings.HasPrefix(a, module+"/"):
		return imp == a
	default:
		return imp == a || strings.HasPrefix(imp, a+"/")
	}
}

// isStd reports whether an import path belongs to the standard library
// (no dot in its first element).
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestAllowListIsExact checks that the allow-lists admit a package of this
// module only by its exact path: review may import execution but not
// execution/openai, and cmd/warden (the wiring) reaches GitHub only through
// report/github and action, never go-github itself, and builds no provider
// (config does).
func TestAllowListIsExact(t *testing.T) {
	t.Parallel()
	refused := []struct{ pkg, imp string }{
		{"review", module + "/execution/openai"},
		{"review", module + "/report"},
		{"report", module + "/report/github"},
		{"cmd/warden", "github.com/google/go-github/v62/github"},
		{"cmd/warden", module + "/internal/fakegithub"},
		{"cmd/warden", module + "/execution/openai"}, // routes are built in config
		{"action", module + "/execution/openai"},
		{"action", module + "/telemetry"},
		{"cli", module + "/config"}, // the grammar reads no configuration
		{"cli", module + "/execution"},
	}
	for _, r := range refused {
		if slices.ContainsFunc(allowed[r.pkg], func(a string) bool { return permits(a, r.imp) }) {
			t.Errorf("the allow-list of %s admits %s", r.pkg, r.imp)
		}
	}
}

// TestCLITouchesNoProcess: the command line's grammar parses and renders
// help; the process (files, environment, signals, exit) is cmd/warden's.
func TestCLITouchesNoProcess(t *testing.T) {
	t.Parallel()
	pkg, err := build.ImportDir("cli", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if imp == "os" || strings.HasPrefix(imp, "os/") || imp == "syscall" || imp == "io/fs" || imp == "path/filepath" {
			t.Errorf("cli imports %s: the process is cmd/warden's", imp)
		}
	}
}

// TestArchitectureDocument keeps ARCHITECTURE.md true: every package of the
// module has a row in its package table, every row names a package, and
// the imports a row lists are exactly the allow-list's packages of this
// module ("none" for none).
func TestArchitectureDocument(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	code := regexp.MustCompile("`([^`]+)`")
	rows := map[string]string{} // package → its imports column
	inTable := false
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "| package |"):
			inTable = true
		case inTable && !strings.HasPrefix(line, "|"):
			inTable = false
		case inTable && !strings.HasPrefix(line, "|---"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 3 {
				t.Errorf("ARCHITECTURE.md: row %q: want package, owns, imports", line)
				continue
			}
			m := code.FindStringSubmatch(cells[0])
			if m == nil {
				t.Errorf("ARCHITECTURE.md: row %q names no package", line)
				continue
			}
			rows[m[1]] = cells[2]
		}
	}
	for pkg := range allowed {
		if _, ok := rows[pkg]; !ok {
			t.Errorf("ARCHITECTURE.md: package %s is not in the package table", pkg)
		}
	}
	for pkg, imports := range rows {
		allow, ok := allowed[pkg]
		if !ok {
			t.Errorf("ARCHITECTURE.md lists %s, which is no package of arch_test.go's allow-list", pkg)
			continue
		}
		var want []string
		for _, a := range allow {
			if p, ok := strings.CutPrefix(a, module+"/"); ok {
				want = append(want, p)
			}
		}
		var got []string
		for _, m := range code.FindAllStringSubmatch(imports, -1) {
			got = append(got, m[1])
		}
		if len(got) == 0 && strings.TrimSpace(imports) != "none" {
			continue // a sentence ("everything it wires"), not a list
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(want, got) {
			t.Errorf("ARCHITECTURE.md: %s imports %v, the allow-list says %v", pkg, got, want)
		}
	}
}
