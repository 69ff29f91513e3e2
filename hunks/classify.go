package hunks

import (
	"path"
	"strings"
)

var (
	testDirs   = set("test", "tests", "__tests__", "__test__", "spec", "specs", "testdata", "testing", "e2e")
	docDirs    = set("docs", "doc", "documentation")
	docExts    = set(".md", ".markdown", ".mdx", ".rst", ".txt", ".adoc", ".asciidoc", ".org")
	docNames   = set("license", "licence", "copying", "notice", "authors", "contributors", "changelog", "readme")
	configExts = set(".yml", ".yaml", ".toml", ".json", ".jsonc", ".json5", ".ini", ".cfg", ".conf",
		".properties", ".env", ".xml", ".plist", ".mk", ".editorconfig", ".dockerfile")
	configNames = set("dockerfile", "containerfile", "makefile", "gnumakefile", "cmakelists.txt",
		"jenkinsfile", "procfile", "vagrantfile", "go.mod", "go.work", "requirements.txt",
		"codeowners", ".gitignore", ".gitattributes", ".gitmodules", ".dockerignore", ".npmrc",
		".env", ".editorconfig", ".prettierrc", ".eslintrc", ".babelrc", "pipfile", "gemfile")
)

// classify returns the class of the file at p. Tests are recognised by name
// (x_test.go, test_x.py, x_test.py, x.test.ts, x.spec.js, XTest.java,
// x_spec.rb, ...) or by a test directory (test/, tests/, __tests__/, spec/,
// testdata/, ...); docs by extension (.md, .rst, .txt, ...), by name
// (README, LICENSE, ...) or under docs/; config by extension (.yml, .toml,
// .json, .ini, ...) or name (Dockerfile, Makefile, go.mod, ...). Everything
// else is source.
func classify(p string) Class {
	dir, base := path.Split(p)
	lower := strings.ToLower(base)
	ext := path.Ext(lower)
	stem := strings.TrimSuffix(base, path.Ext(base))
	if strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_tests") ||
		strings.HasSuffix(stem, "_spec") || strings.HasSuffix(stem, "_unittest") ||
		strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "Test") ||
		strings.HasSuffix(stem, "Tests") || strings.Contains(lower, ".test.") ||
		strings.Contains(lower, ".spec.") || hasDir(dir, testDirs) {
		return Test
	}
	if configNames[lower] || strings.HasPrefix(lower, "dockerfile.") || strings.HasPrefix(lower, ".env.") {
		return Config
	}
	if docExts[ext] || docNames[strings.TrimSuffix(lower, ext)] || hasDir(dir, docDirs) {
		return Doc
	}
	if configExts[ext] || strings.HasPrefix(p, ".github/") {
		return Config
	}
	return Source
}

// hasDir reports whether one of dir's segments is in names (lower-cased).
func hasDir(dir string, names map[string]bool) bool {
	for seg := range strings.SplitSeq(strings.TrimSuffix(dir, "/"), "/") {
		if names[strings.ToLower(seg)] {
			return true
		}
	}
	return false
}

var languages = map[string]string{
	".go": "Go", ".py": "Python", ".pyi": "Python", ".ts": "TypeScript", ".tsx": "TypeScript",
	".mts": "TypeScript", ".cts": "TypeScript", ".js": "JavaScript", ".jsx": "JavaScript",
	".mjs": "JavaScript", ".cjs": "JavaScript", ".rs": "Rust", ".java": "Java", ".kt": "Kotlin",
	".kts": "Kotlin", ".scala": "Scala", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++",
	".cxx": "C++", ".hh": "C++", ".hpp": "C++", ".hxx": "C++", ".cs": "C#", ".rb": "Ruby",
	".php": "PHP", ".sh": "Shell", ".bash": "Shell", ".zsh": "Shell", ".sql": "SQL",
	".swift": "Swift", ".m": "Objective-C", ".mm": "Objective-C++", ".lua": "Lua", ".pl": "Perl",
	".pm": "Perl", ".r": "R", ".dart": "Dart", ".ex": "Elixir", ".exs": "Elixir",
	".erl": "Erlang", ".hs": "Haskell", ".ml": "OCaml", ".clj": "Clojure", ".vue": "Vue",
	".svelte": "Svelte", ".html": "HTML", ".htm": "HTML", ".css": "CSS", ".scss": "SCSS",
	".less": "Less", ".tf": "HCL", ".hcl": "HCL", ".proto": "Protocol Buffers",
	".graphql": "GraphQL", ".gql": "GraphQL", ".ps1": "PowerShell", ".zig": "Zig",
	".jl": "Julia", ".groovy": "Groovy", ".md": "Markdown", ".rst": "reStructuredText",
	".yml": "YAML", ".yaml": "YAML", ".toml": "TOML", ".json": "JSON", ".xml": "XML",
	".ini": "INI", ".mk": "Makefile", ".dockerfile": "Dockerfile",
}

// language returns the language of the file at p, or "" when unknown.
func language(p string) string {
	lower := strings.ToLower(path.Base(p))
	switch {
	case lower == "dockerfile" || lower == "containerfile" || strings.HasPrefix(lower, "dockerfile."):
		return "Dockerfile"
	case lower == "makefile" || lower == "gnumakefile":
		return "Makefile"
	}
	return languages[path.Ext(lower)]
}

// riskWords make a path risk-bearing when one is a substring of it (case
// does not matter).
var riskWords = []string{"auth", "crypto", "security", "session", "token", "sql", "payment",
	"migration", "permission", "secret", "password", "credential", "login", "jwt", "billing"}

func risky(p string) bool {
	lower := strings.ToLower(p)
	for _, w := range riskWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// The priority score: classWeight × (4 − class rank) puts every source
// change above every test, test above doc, doc above config; within a class
// riskBonus puts risk-bearing paths first, then up to maxSizeScore points
// for the number of changed lines.
const (
	classWeight  = 1000
	riskBonus    = 500
	maxSizeScore = 499
)

// score is the priority of changed lines of the file at p, of class c.
func score(p string, c Class, changed int) int {
	s := classWeight*(int(Config)-int(c)+1) + min(changed, maxSizeScore)
	if risky(p) {
		s += riskBonus
	}
	return s
}
