package warden_test

import (
	"go/build"
	"io/fs"
	"path/filepath"
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
	"hunks":            {"github.com/bluekeyes/go-gitdiff", "github.com/bmatcuk/doublestar/v4"},
	"skills":           {"gopkg.in/yaml.v3", "github.com/bmatcuk/doublestar/v4"},
	"execution":        {"github.com/sourcegraph/conc"},
	"execution/openai": {module + "/execution", "github.com/sashabaranov/go-openai"},
	"review":           {module + "/execution", module + "/hunks", module + "/skills"},
	"report":           {module + "/review"},
	"probe":            {module + "/execution", module + "/review"},
	"telemetry":        {module + "/review", "go.opentelemetry.io/otel"},
	"report/github":    {module + "/review", module + "/report", "github.com/google/go-github/v62", "github.com/sethvargo/go-githubactions"},
	"cmd/warden": {
		module + "/", "github.com/google/go-github/v62", "github.com/sethvargo/go-githubactions",
		"github.com/pelletier/go-toml/v2", "golang.org/x/term",
	},
	"internal/fakegithub": {"github.com/getkin/kin-openapi"},
	"internal/fakeotlp":   {"go.opentelemetry.io/proto/otlp", "google.golang.org/protobuf"},
	"internal/actiontest": {},
	"internal/fakeopenai": {},
	"internal/gendiff":    {},
	"internal/peers/act":  {},
	"internal/peers/ollama": {
		module + "/execution", module + "/execution/openai", module + "/review", module + "/hunks", module + "/skills",
	},
}

// confined third-party modules may appear only in these packages, tests
// included.
var confined = map[string][]string{
	"github.com/sashabaranov/go-openai":     {"execution/openai"},
	"github.com/google/go-github/v62":       {"report/github", "cmd/warden"},
	"github.com/sethvargo/go-githubactions": {"report/github", "cmd/warden"},
	"go.opentelemetry.io/otel":              {"telemetry"},
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
		for _, imp := range pkg.Imports {
			if isStd(imp) || imp == module+"/"+dir {
				continue
			}
			if !slices.ContainsFunc(allow, func(a string) bool {
				return imp == a || strings.HasPrefix(imp, strings.TrimSuffix(a, "/")+"/") || (strings.HasSuffix(a, "/") && strings.HasPrefix(imp, a))
			}) {
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
