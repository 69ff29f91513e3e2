package hunks

import (
	"path"
	"strconv"
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

// riskWords are the words that make a path risk-bearing, with the forms
// they take in names. A path's words are its segments split at "/", ".",
// "-", "_", spaces, digits and camel-case humps, lower-cased:
// "pkg/OAuth2Client.go" is pkg, o, auth, client, go. Words match whole, so
// "author.go", "mysqlx_bench" and "lezer-promql/src/tokens.js" are not
// risk-bearing, "auth/", "userSession.ts" and "db_migrations/" are.
var riskWords = set("auth", "authn", "authz", "oauth", "authenticate", "authentication",
	"authenticator", "authorize", "authorization", "authorizer", "crypto", "cryptography",
	"encrypt", "decrypt", "encryption", "cipher", "security", "session", "sessions",
	"sql", "payment", "payments", "migration", "migrations", "permission", "permissions",
	"secret", "secrets", "password", "passwords", "passwd", "credential", "credentials",
	"login", "logout", "jwt", "billing", "csrf", "saml", "oidc", "rbac", "acl")

// tokenQualifiers make a following "token" or "tokens" risk-bearing
// ("access_token.go", "refreshTokens.ts"); alone, "token" is as often a
// lexer's token ("go/token", "tokens.js") as a credential.
var tokenQualifiers = set("access", "refresh", "bearer", "api", "auth", "csrf", "id", "session", "jwt", "oauth")

// riskWord returns the first risk word among the words of p, or "".
func riskWord(p string) string {
	prev := ""
	for _, w := range words(p) {
		switch {
		case riskWords[w]:
			return w
		case (w == "token" || w == "tokens") && tokenQualifiers[prev]:
			return prev + " " + w
		}
		prev = w
	}
	return ""
}

// words splits p into lower-case words: at every character that is not a
// letter, and where a lower-case letter meets an upper-case one ("userID"
// is user, id) or an upper-case run meets a word ("OAuth" is o, auth;
// "JWTToken" is jwt, token).
func words(p string) []string {
	var out []string
	start := -1
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	for i := 0; i <= len(p); i++ {
		letter := i < len(p) && (isUpper(p[i]) || isLower(p[i]))
		if !letter {
			if start >= 0 {
				out = append(out, strings.ToLower(p[start:i]))
				start = -1
			}
			continue
		}
		if start >= 0 && isUpper(p[i]) &&
			(isLower(p[i-1]) || (i+1 < len(p) && isLower(p[i+1]) && isUpper(p[i-1]))) {
			out = append(out, strings.ToLower(p[start:i]))
			start = i
		}
		if start < 0 {
			start = i
		}
	}
	return out
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
	if riskWord(p) != "" {
		s += riskBonus
	}
	return s
}

// why says what a score of changed lines of the file at p, of class c, is
// made of: "source, risk word \"auth\", 120 changed lines".
func why(p string, c Class, changed int) string {
	s := c.String()
	if w := riskWord(p); w != "" {
		s += ", risk word " + strconv.Quote(w)
	}
	s += ", " + strconv.Itoa(changed) + " changed line"
	if changed != 1 {
		s += "s"
	}
	if changed > maxSizeScore {
		s += " (counted as " + strconv.Itoa(maxSizeScore) + ")"
	}
	return s
}
